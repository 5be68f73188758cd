/*
 * fuzz_lease.c: libFuzzer driver for gs_lease_decode (src/k8s/lease.h), the apiserver's Lease as leader
 * election reads it. Every input must decode or fail with a reason; a decoded Lease has NUL-terminated
 * strings inside their buffers and non-negative numbers, and the decision on it never crashes.
 *
 * Build and run (from the repository root):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -std=c11 -D_GNU_SOURCE -Isrc \
 *     tests/fuzz/fuzz_lease.c src/k8s/lease.c -lcjson -o build/fuzz_lease
 *   mkdir -p build/corpus/lease && cp tests/fixtures/json/lease.json build/corpus/lease/
 *   build/fuzz_lease -max_total_time=60 build/corpus/lease
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/lease.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gs_lease l;
	char err[256] = "";

	if (gs_lease_decode((const char *)data, size, &l, err, sizeof(err)) < 0) {
		if (!err[0] || l.holder[0] || l.rv[0])
			abort(); /* a failure says why and leaves nothing */
		return 0;
	}
	if (strnlen(l.holder, sizeof(l.holder)) == sizeof(l.holder) || strnlen(l.rv, sizeof(l.rv)) == sizeof(l.rv) ||
	    strnlen(l.renew, sizeof(l.renew)) == sizeof(l.renew) || l.duration_s < 0 || l.transitions < 0 || !l.rv[0])
		abort();
	(void)gs_lease_may_take(&l, "me_1", 0, 15000, 1);
	return 0;
}
