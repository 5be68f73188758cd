/*
 * fuzz_nvinfo.c: libFuzzer driver for gs_agent_nvinfo_parse (src/k8s/agent.h), the reader of the NVIDIA
 * driver's /proc/driver/nvidia/gpus/<bus>/information that the node agent turns into the GPU index
 * table. Every input must parse or fail with a reason; what parses has a printable UUID without blanks
 * of 1..256 bytes that the annotation formatter accepts in an index line, and two copies of it order
 * as "two GPUs on one bus location".
 *
 *   make fuzz FUZZ_NAMES=nvinfo FUZZ_SECONDS=60
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/agent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gs_agent_gpu g[2];
	const char *ids[2];
	char err[256] = "", *text;

	if (gs_agent_nvinfo_parse((const char *)data, size, &g[0], err, sizeof err) < 0) {
		if (!err[0])
			abort(); /* a failure says why */
		return 0;
	}
	size_t n = strlen(g[0].uuid);
	if (!n || n > GS_PODRES_MAX_ID)
		abort();
	for (size_t i = 0; i < n; i++)
		if (g[0].uuid[i] <= ' ' || g[0].uuid[i] > '~')
			abort();
	ids[0] = g[0].uuid;
	struct gs_inuse u = {.index = ids, .n_index = 1};
	if (!(text = gs_inuse_format(&u, err, sizeof err)))
		abort(); /* what the reader accepts, the annotation carries */
	free(text);
	g[1] = g[0];
	if (gs_agent_nvinfo_order(g, 2, ids, err, sizeof err) == 0)
		abort();
	return 0;
}
