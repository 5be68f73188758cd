/*
 * fuzz_inuse.c: libFuzzer driver for gs_inuse_parse (src/sched/inuse.h), the devices-in-use annotation
 * that the node agent writes on a Node and the scheduler reads from every node event. Every input must
 * parse or fail with a line and a reason; what parses must keep the header's invariants, and format back
 * to exactly the input (the text is canonical), which must parse again to the same records. Each MIG
 * instance is found by its ID and is its parent GPU's; every device's physical GPU lies within its
 * ID (a replica) or is a GPU of the table (a MIG instance).
 *
 *   make fuzz FUZZ_NAMES=inuse FUZZ_SECONDS=60
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sched/inuse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gs_inuse *u = NULL, *again = NULL;
	char err[256] = "", *text;

	if (gs_inuse_parse((const char *)data, size, &u, err, sizeof(err)) < 0) {
		if (!err[0] || u)
			abort(); /* a failure says why and leaves nothing */
		return 0;
	}
	if ((u->error && u->n_devs) || u->n_devs > GS_INUSE_MAX_DEVS || u->n_index > GS_INUSE_MAX_INDEX ||
	    (u->n_index && !u->index[u->n_index - 1]) || u->n_mig > GS_INUSE_MAX_MIG || (u->n_mig && !u->n_index))
		abort();
	for (size_t k = 0; k < u->n_mig; k++)
		if (u->mig[k].parent >= u->n_index || !u->index[u->mig[k].parent] ||
		    (k && strcmp(u->mig[k - 1].id, u->mig[k].id) >= 0) ||
		    gs_inuse_mig_parent(u, u->mig[k].id, strlen(u->mig[k].id)) != (long)u->mig[k].parent)
			abort();
	for (size_t i = 0; i < u->n_devs; i++) {
		const char *id = u->devs[i].id;
		size_t pl = gs_inuse_physical_len(id);
		if (!u->devs[i].resource[0] || !id[0] || !strchr(u->devs[i].holder, '/'))
			abort();
		/* a replica's GPU: a prefix of its ID, cut at its first "::" */
		if (pl > strlen(id) || (pl < strlen(id) && strncmp(id + pl, "::", 2) != 0) ||
		    (pl && strstr(id, "::") && strstr(id, "::") != id + pl))
			abort();
		const char *phys;
		size_t plen;
		long parent = gs_inuse_mig_parent(u, id, strlen(id));
		gs_inuse_physical(u, id, strlen(id), &phys, &plen);
		if (parent >= 0 ? phys != u->index[parent] || plen != strlen(phys) : phys != id || plen != pl)
			abort();
	}
	text = gs_inuse_format(u, err, sizeof(err));
	if (!text)
		abort(); /* what parses formats */
	/* canonical: the input, less one final newline */
	size_t len = strlen(text), in = size && data[size - 1] == '\n' ? size - 1 : size;
	if (len != in || memcmp(text, data, len) != 0)
		abort();
	if (gs_inuse_parse(text, len, &again, err, sizeof(err)) < 0 || again->n_devs != u->n_devs ||
	    again->at_ms != u->at_ms || again->n_index != u->n_index || again->n_mig != u->n_mig)
		abort();
	free(text);
	gs_inuse_free(again);
	gs_inuse_free(u);
	return 0;
}
