/*
 * lint.h: `gpu-scheduler lint`: checks gpu-scheduling-map annotations in manifests before they reach a
 * cluster, with the scheduler's own parser (sched/map.h). Pure logic: text in, diagnostics out; no
 * I/O, no libuv, no Kubernetes client (the CLI in lint_cli.c reads files and, for --kubeconfig, nodes).
 *
 * Input: YAML text (JSON too: it is YAML), any number of documents; kinds Pod, StatefulSet, Job,
 * CronJob, Deployment, and List (its items). Other kinds are skipped. For each pod template with the
 * annotation, or whose spec.schedulerName is ours:
 *   error    each problem of a map that does not parse (the line of the bad entry in the file when the
 *            annotation is a literal block scalar `|`, else the annotation's line; the map's good
 *            entries are still checked as below); a duplicate key in any mapping of any document;
 *            nesting deeper than GS_LINT_MAX_DEPTH (the file is read up to that document)
 *   warning  an entry for an index the workload never reaches (StatefulSet replicas, from
 *            spec.ordinals.start; Indexed Job completions); an index it reaches without an entry (the
 *            pod would wait: NO_ENTRY); a Job that is not Indexed or a Deployment (pods without an
 *            index); the map on a pod template of another scheduler, or our scheduler without a map;
 *            two workloads of the given files claiming the same node and device (DEVICE_BUSY);
 *            with a node list: a node that is not in it (NODE_MISSING; names resolve through the alias
 *            label as the scheduler does), a device index at or above what it advertises (NODE_DEVICES);
 *            with the cluster's GPU pods too (--kubeconfig): a node the maps use that lacks the
 *            dedicated taint (opts.dedicated_taint, effect NoSchedule) while pods that ask the device
 *            plugin for nvidia.com/gpu are bound there (once per node, up to 3 pods named, with the
 *            kubectl taint command; at the line of the node's first use)
 * GPUPlacementMap objects (sched/gpm.h; kind GS_GPM_KIND) are read from every file: each one's spec.map
 * is checked as an annotation is (its lines in the file), its spec.placement/gangTimeout/gangSize as
 * the gang annotations are (gs_gang_opts_parse; gangSize not above the map's entries). A template
 * naming one (GS_MAP_REF_ANNOTATION) is checked against the object of that namespace and name in any
 * of the files, in gs_lint_finish, as if it carried the object's map and settings (the entries'
 * findings at their lines in the object's file); without one there: a note (the cluster may have it).
 * A template with both the map annotation and a reference, or gang annotations beside a reference:
 * errors.
 * Diagnostics come in file order, then those of workloads by reference in the order of their
 * references, then the cross-workload ones in the order of their second claim.
 *
 *   struct gs_lint *l = gs_lint_new(&opts);
 *   gs_lint_add(l, "a.yaml", text, len);  ...  gs_lint_finish(l);
 *   for (i = 0; i < gs_lint_count(l); i++) print gs_lint_diag_at(l, i)
 *   gs_lint_free(l);
 */
#ifndef GS_LINT_LINT_H
#define GS_LINT_LINT_H

#include <stddef.h>
#include <stdint.h>

#include "sched/inuse.h"

/* A manifest larger than this is refused (an error diagnostic), as are more documents in one file. */
#define GS_LINT_MAX_BYTES     (16 * 1024 * 1024)
#define GS_LINT_MAX_DOCUMENTS 10000
/* Collections nested deeper than this (a Pod's deepest field is about 12 down, 14 in a List) end the
 * file's reading with an error before libyaml's loader sees them: its cost grows with the depth of
 * every token (lint.c, depth_scan), so this keeps lint linear in the size of its input. */
#define GS_LINT_MAX_DEPTH     100

/* A node of the cluster as lint needs it (from --nodes or the apiserver). */
struct gs_lint_node {
	const char *name;
	const char *alias; /* the value of the alias label, or NULL */
	/* its GPUs as the daemon counts them (sched/inuse.h, gs_inuse_node_gpus): its agent's index table
	 * (the annotation gpu-scheduler.io/devices-in-use), else its label nvidia.com/gpu.count, else the
	 * nvidia.com/gpu it advertises; -1 when none; gpus_from says which */
	int64_t gpus;
	int dedicated; /* it has the taint opts.dedicated_taint with effect NoSchedule (any value) */
	enum gs_gpus_from gpus_from;
};

/*
 * A pod bound to a node, not terminal (phase neither Succeeded nor Failed), whose containers or init
 * containers ask for nvidia.com/gpu: the device plugin gives it GPUs of that node.
 */
struct gs_lint_gpu_pod {
	const char *ns, *name;
	const char *node; /* spec.nodeName */
};

struct gs_lint_opts {
	const char *annotation;           /* default "gpu-scheduling-map" */
	const char *scheduler_name;       /* default "gpu-scheduler" */
	const struct gs_lint_node *nodes; /* borrowed until gs_lint_free; NULL: no node checks */
	size_t n_nodes;
	int have_nodes; /* a node list was given (even an empty one) */
	/* The cluster's device-plugin GPU pods, borrowed until gs_lint_free; with have_pods (even none),
	 * nodes the maps use are checked for the dedicated taint. */
	const struct gs_lint_gpu_pod *gpu_pods;
	size_t n_gpu_pods;
	int have_pods;
	const char *dedicated_taint; /* the taint's key, for the message; required with have_pods */
};

enum gs_lint_severity {
	GS_LINT_ERROR = 0,
	GS_LINT_WARNING,
	GS_LINT_NOTE, /* not a problem: what lint could not check (never fails, not even --strict) */
};

struct gs_lint_diag {
	const char *file; /* as given to gs_lint_add */
	int line;         /* 1-based line in the file; 0 when unknown */
	enum gs_lint_severity severity;
	const char *msg; /* one line, no file or severity */
};

struct gs_lint;

/* Copies opts' strings; nodes stay borrowed. Aborts on allocation failure (small, fixed). */
struct gs_lint *gs_lint_new(const struct gs_lint_opts *opts);
void gs_lint_free(struct gs_lint *l); /* NULL is fine */

/* Lints one file's text; cannot fail: a YAML syntax error is an error diagnostic (with libyaml's line). */
void gs_lint_add(struct gs_lint *l, const char *file, const char *text, size_t len);
/* The checks across files (shared devices). Call once, after the last gs_lint_add. */
void gs_lint_finish(struct gs_lint *l);

size_t gs_lint_count(const struct gs_lint *l);
const struct gs_lint_diag *gs_lint_diag_at(const struct gs_lint *l, size_t i);
size_t gs_lint_errors(const struct gs_lint *l);
size_t gs_lint_warnings(const struct gs_lint *l);
size_t gs_lint_notes(const struct gs_lint *l);
/* Workloads (pod templates) with a map, or naming an object, that were checked. */
size_t gs_lint_workloads(const struct gs_lint *l);

/*
 * A NodeList (YAML or JSON: items[].metadata.name, .metadata.labels[alias_label],
 * .status.allocatable["nvidia.com/gpu"]) into *nodes (n). The array and its strings are one
 * allocation the caller frees with free(*nodes). 0, or -EINVAL with err (line included).
 */
int gs_lint_nodes_parse(const char *text, size_t len, const char *alias_label, struct gs_lint_node **nodes, size_t *n,
			char *err, size_t errlen);

#endif
