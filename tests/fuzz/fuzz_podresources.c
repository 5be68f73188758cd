/*
 * fuzz_podresources.c: libFuzzer driver for gs_podres_list_decode (src/k8s/podresources.h), the kubelet's
 * PodResources v1 List reply as the node agent receives it. Every input must decode or fail with a
 * reason and leave nothing; a decoded list holds n records whose five strings are non-empty, printable
 * ASCII and within their caps, and counts that fit (a record needs a pod and a container).
 *
 *   make fuzz FUZZ_NAMES=podresources FUZZ_SECONDS=60
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/podresources.h"

#define CHECK(e) ((e) ? (void)0 : abort())

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_str(const char *s, size_t cap)
{
	size_t n;
	CHECK(s != NULL);
	n = strnlen(s, cap + 1);
	CHECK(n >= 1 && n <= cap);
	for (size_t i = 0; i < n; i++)
		CHECK(s[i] > 0x20 && s[i] < 0x7f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gs_podres_list l;
	char err[256] = "";
	int rc = gs_podres_list_decode(data, size, &l, err, sizeof err);

	if (rc < 0) {
		CHECK(err[0] && l.n == 0 && !l.devs && !l.arena); /* a failure says why and leaves nothing */
		return 0;
	}
	CHECK(err[0] == '\0' && l.arena && l.n <= GS_PODRES_MAX_DEVICES && (l.n == 0) == (l.devs == NULL));
	CHECK(l.n == 0 || (l.pods >= 1 && l.containers >= 1));
	for (size_t i = 0; i < l.n; i++) {
		check_str(l.devs[i].ns, GS_PODRES_MAX_NAME);
		check_str(l.devs[i].pod, GS_PODRES_MAX_NAME);
		check_str(l.devs[i].container, GS_PODRES_MAX_NAME);
		check_str(l.devs[i].resource, GS_PODRES_MAX_NAME);
		check_str(l.devs[i].id, GS_PODRES_MAX_ID);
	}
	gs_podres_list_free(&l);
	return 0;
}
