/*
 * fuzz_lint.c: manifests as `gpu-scheduler lint` reads them (src/lint/lint.c: libyaml's loader, the
 * workload kinds, the map parser, the line arithmetic), and the same bytes as a --nodes NodeList.
 * Checks: no crash, no leak, no sanitizer report; every diagnostic has a message and a line within the
 * input (or 0); the counts agree with the diagnostics; a duplicate key names an earlier (or the same)
 * line as its first and its own line as the diagnostic's; nothing of a file is read after "nesting
 * deeper than" (only the file's closing count of duplicates and what gs_lint_finish adds may follow:
 * the workloads by reference, resolved against GPUPlacementMaps of both files, and the claims); a note
 * only says an object is not in the files.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lint/lint.h"

static const struct gs_lint_node nodes[] = {
	{"node1", NULL, 4, 0, 0},          {"node2", "n2", 2, 1, 0}, {"gpu-worker", "node3", 8, 0, 0},
	{"gpu-worker2", "node3", 8, 0, 0}, {"cpu", NULL, -1, 0, 0},
};
/* Device-plugin GPU pods: the dedicated-taint check runs on whatever the maps name. */
static const struct gs_lint_gpu_pod gpu_pods[] = {
	{"a", "p1", "node1"}, {"a", "p2", "node1"}, {"b", "p3", "node1"}, {"b", "p4", "node1"}, {"c", "p5", "node2"},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gs_lint_opts o = {.nodes = nodes,
				 .n_nodes = sizeof(nodes) / sizeof(nodes[0]),
				 .have_nodes = 1,
				 .gpu_pods = gpu_pods,
				 .n_gpu_pods = sizeof(gpu_pods) / sizeof(gpu_pods[0]),
				 .have_pods = 1,
				 .dedicated_taint = "gpu-scheduler.io/dedicated"};
	struct gs_lint *l = gs_lint_new(&o);
	struct gs_lint_node *parsed;
	size_t n, lines = 1, errors = 0, notes = 0, added;
	char err[512];

	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n' || data[i] == '\r';
	gs_lint_add(l, "a.yaml", (const char *)data, size);
	gs_lint_add(l, "b.yaml", (const char *)data, size); /* the same workloads twice: same owners */
	added = gs_lint_count(l);
	gs_lint_finish(l);
	for (size_t i = 0; i < gs_lint_count(l); i++) {
		const struct gs_lint_diag *d = gs_lint_diag_at(l, i);
		const struct gs_lint_diag *next = gs_lint_diag_at(l, i + 1);
		const char *dup = strstr(d->msg, "duplicate key ");
		int at, first;
		if (!d->msg[0] || d->line < 0 || (size_t)d->line > lines + 1)
			abort();
		errors += d->severity == GS_LINT_ERROR;
		notes += d->severity == GS_LINT_NOTE;
		if (d->severity == GS_LINT_NOTE && !strstr(d->msg, "is not in the files given"))
			abort();
		if (dup == d->msg) { /* the key is quoted with its own quotes escaped: its end is the last '"' */
			const char *tail = strrchr(d->msg, '"');
			if (tail && !strncmp(tail + 1, "...", 3))
				tail += 3;
			if (!tail || sscanf(tail + 1, " at line %d (first at line %d)", &at, &first) != 2 ||
			    at != d->line || first < 1 || first > at)
				abort();
		}
		if (strstr(d->msg, "nesting deeper than ") == d->msg && next && i + 1 < added &&
		    !strcmp(next->file, d->file) && !strstr(next->msg, "more duplicate keys") &&
		    !strstr(next->msg, "DEVICE_BUSY"))
			abort();
	}
	if (errors != gs_lint_errors(l) || notes != gs_lint_notes(l) ||
	    gs_lint_errors(l) + gs_lint_warnings(l) + gs_lint_notes(l) != gs_lint_count(l))
		abort();
	gs_lint_free(l);

	if (gs_lint_nodes_parse((const char *)data, size, "gpu-scheduler.io/node", &parsed, &n, err, sizeof(err)) ==
	    0) {
		for (size_t i = 0; i < n; i++)
			if (!parsed[i].name || parsed[i].gpus < -1)
				abort();
		free(parsed);
	} else if (!err[0]) {
		abort();
	}
	return 0;
}
