/*
 * lint.c: the checks of `gpu-scheduler lint` on YAML text (lint.h). libyaml's document loader gives
 * every node its position; a map's line N inside a literal block scalar (`|`) is N lines below the `|`,
 * since such a block keeps its lines as they are. The maps are parsed by sched/map.c, the indices
 * computed by its gs_map_pod_index: the same code the scheduler and the webhook run.
 */
#include "lint/lint.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/hmap.h"
#include "sched/gang.h"
#include "sched/gpm.h"
#include "sched/inuse.h"
#include "sched/map.h"

#define LIST_MAX 10 /* indices listed in one message */

struct claim {
	char *owner; /* "StatefulSet ns/name": one owner shares its own devices */
	const char *file;
	int line;
	int shared; /* gpu-scheduler.io/allow-shared-devices: "true" */
	char *key;  /* "node/device" */
	char *node, *device;
};

/* A node of the list that some map uses: where first (the dedicated-taint check's warning goes there). */
struct use {
	const struct gs_lint_node *node;
	const char *file;
	int line;
	char name[]; /* as the map wrote it (an alias, or the node's name): a copy, the map goes */
};

struct gs_lint {
	char *annotation, *scheduler_name, *dedicated_taint;
	const struct gs_lint_node *nodes;
	size_t n_nodes;
	int have_nodes;
	const struct gs_lint_gpu_pod *gpu_pods;
	size_t n_gpu_pods;
	int have_pods;
	struct gs_hmap used; /* node name -> struct use, the first use of each node */
	struct use **uses;   /* in order of first use */
	size_t n_uses, cap_uses;
	struct gs_hmap by_name, by_alias, ambiguous; /* -> struct gs_lint_node */
	struct gs_lint_diag *diags;
	size_t n_diags, cap_diags, errors, warnings, workloads;
	char **files;
	size_t n_files;
	struct claim **claims;
	size_t n_claims, cap_claims;
	size_t notes;
	struct gs_hmap objects; /* "ns/name" -> struct object: the GPUPlacementMaps read, the last of a name */
	struct ref **refs;      /* workloads by reference, resolved in gs_lint_finish */
	size_t n_refs;
};

/* Where a map's text is: its file, the line of its scalar, whether that is a literal block (`|`: its
 * lines keep their place in the file), and what to call it in a message. */
struct msrc {
	const char *file;
	int line;
	int literal;
	const char *label; /* "gpu-scheduling-map", "spec.map" */
};

/* A StatefulSet's or Job's counts a gang is checked against, read while the document is there (a
 * reference is resolved in gs_lint_finish, after it is gone). A line of 0: absent (the default). */
struct counts {
	long replicas, parallelism, completions; /* -1: not a number (completions: absent too) */
	int replicas_line, parallelism_line, completions_line, policy_line;
	int ordered; /* podManagementPolicy OrderedReady, or absent (the default) */
};

/* One pod template being checked. */
struct tmpl {
	struct gs_lint *l;
	const char *file;
	yaml_document_t *doc;
	char what[600]; /* "StatefulSet ns/name" */
	enum { REACH_RANGE, REACH_ONE, REACH_NONE, REACH_UNKNOWN } reach;
	long lo, hi;           /* REACH_RANGE: indices lo..hi; REACH_ONE: lo */
	const char *count_key; /* "replicas", "completions" */
	int count_line;        /* its line, or 0 when defaulted */
	const char *none_why;  /* REACH_NONE: why its pods have no index */
	const char *kind;      /* "StatefulSet", "Job" (a CronJob's too), "Pod", "Deployment" */
	const char *ns;        /* metadata.namespace, NULL when absent (borrowed from the document) */
	int has_counts;        /* a StatefulSet or Job with a spec: c holds its counts */
	struct counts c;
};

/* A GPUPlacementMap of the given files. */
struct object {
	char what[600];     /* "GPUPlacementMap ns/name" */
	struct msrc src;    /* where its spec.map is */
	struct gs_map *map; /* the entries of spec.map that parsed; NULL: none */
	int gang_ok;        /* its settings parsed: o holds them */
	struct gs_gang_opts o;
};

/* A pod template naming an object (GS_MAP_REF_ANNOTATION), checked against it in gs_lint_finish. */
struct ref {
	struct tmpl t; /* its doc and ns gone: the counts stay */
	char *key;     /* the object's "ns/name" ("/name" without a namespace) */
	int line;      /* the annotation's */
	int ours, shared;
};

static void diag(struct gs_lint *l, const char *file, int line, enum gs_lint_severity sev, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void diag(struct gs_lint *l, const char *file, int line, enum gs_lint_severity sev, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (l->n_diags == l->cap_diags) {
		l->cap_diags = l->cap_diags ? l->cap_diags * 2 : 16;
		l->diags = gs_xreallocarray(l->diags, l->cap_diags, sizeof(*l->diags));
	}
	l->diags[l->n_diags++] =
		(struct gs_lint_diag){.file = file, .line = line, .severity = sev, .msg = gs_xstrdup(msg)};
	if (sev == GS_LINT_ERROR)
		l->errors++;
	else if (sev == GS_LINT_WARNING)
		l->warnings++;
	else
		l->notes++;
}

struct gs_lint *gs_lint_new(const struct gs_lint_opts *o)
{
	struct gs_lint *l = gs_xmalloc(sizeof(*l));

	memset(l, 0, sizeof(*l));
	l->annotation = gs_xstrdup(o->annotation ? o->annotation : "gpu-scheduling-map");
	l->scheduler_name = gs_xstrdup(o->scheduler_name ? o->scheduler_name : "gpu-scheduler");
	l->nodes = o->nodes;
	l->n_nodes = o->n_nodes;
	l->have_nodes = o->have_nodes || o->nodes;
	l->gpu_pods = o->gpu_pods;
	l->n_gpu_pods = o->n_gpu_pods;
	l->have_pods = (o->have_pods || o->gpu_pods) && l->have_nodes;
	l->dedicated_taint = gs_xstrdup(o->dedicated_taint ? o->dedicated_taint : "");
	gs_hmap_init(&l->used, 0);
	gs_hmap_init(&l->by_name, 0);
	gs_hmap_init(&l->by_alias, 0);
	gs_hmap_init(&l->ambiguous, 0);
	gs_hmap_init(&l->objects, GS_HMAP_COPY_KEYS);
	for (size_t i = 0; i < l->n_nodes; i++) {
		const struct gs_lint_node *n = &l->nodes[i];
		if (!n->name)
			continue;
		gs_hmap_put_str(&l->by_name, n->name, (void *)n, NULL);
		if (n->alias && *n->alias) {
			if (gs_hmap_get_str(&l->by_alias, n->alias))
				gs_hmap_put_str(&l->ambiguous, n->alias, (void *)n, NULL);
			else
				gs_hmap_put_str(&l->by_alias, n->alias, (void *)n, NULL);
		}
	}
	return l;
}

void gs_lint_free(struct gs_lint *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n_diags; i++)
		free((char *)l->diags[i].msg);
	free(l->diags);
	for (size_t i = 0; i < l->n_files; i++)
		free(l->files[i]);
	free(l->files);
	for (size_t i = 0; i < l->n_claims; i++) {
		struct claim *c = l->claims[i];
		free(c->owner);
		free(c->key);
		free(c);
	}
	free(l->claims);
	for (size_t i = 0; i < l->n_refs; i++) {
		free(l->refs[i]->key);
		free(l->refs[i]);
	}
	free(l->refs);
	for (struct gs_hmap_iter it = {0}; gs_hmap_next(&l->objects, &it);) {
		struct object *o = it.val;
		gs_map_unref(o->map);
		free(o);
	}
	gs_hmap_free(&l->objects);
	for (size_t i = 0; i < l->n_uses; i++)
		free(l->uses[i]);
	free(l->uses);
	gs_hmap_free(&l->used);
	gs_hmap_free(&l->by_name);
	gs_hmap_free(&l->by_alias);
	gs_hmap_free(&l->ambiguous);
	free(l->dedicated_taint);
	free(l->annotation);
	free(l->scheduler_name);
	free(l);
}

size_t gs_lint_count(const struct gs_lint *l)
{
	return l->n_diags;
}

const struct gs_lint_diag *gs_lint_diag_at(const struct gs_lint *l, size_t i)
{
	return i < l->n_diags ? &l->diags[i] : NULL;
}

size_t gs_lint_errors(const struct gs_lint *l)
{
	return l->errors;
}

size_t gs_lint_warnings(const struct gs_lint *l)
{
	return l->warnings;
}

size_t gs_lint_notes(const struct gs_lint *l)
{
	return l->notes;
}

size_t gs_lint_workloads(const struct gs_lint *l)
{
	return l->workloads;
}

/* ---- YAML helpers --------------------------------------------------------------------------------- */

static int line_of(const yaml_node_t *n)
{
	return n ? (int)n->start_mark.line + 1 : 0;
}

static int scalar_is(const yaml_node_t *n, const char *s)
{
	size_t len = strlen(s);
	return n && n->type == YAML_SCALAR_NODE && n->data.scalar.length == len &&
	       memcmp(n->data.scalar.value, s, len) == 0;
}

/* The scalar's text, NUL-terminated by libyaml, or NULL when n is not a scalar. */
static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* m[key]: the last of duplicates, as kubectl and a non-strict apiserver keep it (a duplicate is an
 * error of its own: check_duplicates). */
static yaml_node_t *get(yaml_document_t *d, const yaml_node_t *m, const char *key)
{
	yaml_node_t *found = NULL;

	if (!m || m->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++)
		if (scalar_is(yaml_document_get_node(d, p->key), key))
			found = yaml_document_get_node(d, p->value);
	return found;
}

static yaml_node_t *path(yaml_document_t *d, yaml_node_t *n, const char *const *keys)
{
	for (; n && *keys; keys++)
		n = get(d, n, *keys);
	return n;
}
#define PATH(d, n, ...) path((d), (n), (const char *const[]){__VA_ARGS__, NULL})

/* A non-negative integer scalar; -1 otherwise (absent, templated, negative, too large). */
static long integer(const yaml_node_t *n)
{
	const char *s = scalar(n);
	char *end;
	long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v > 1000000000L)
		return -1;
	return v;
}

/* ---- the checks of one template ------------------------------------------------------------------- */

static struct msrc msrc_of(const char *file, const yaml_node_t *n, const char *label)
{
	return (struct msrc){.file = file,
			     .line = line_of(n),
			     .literal = n->data.scalar.style == YAML_LITERAL_SCALAR_STYLE,
			     .label = label};
}

/* The file line of the map's line map_line: exact inside a literal block, else the scalar's line. */
static int map_line_in_file(const struct msrc *s, int map_line)
{
	if (map_line > 0 && s->literal)
		return s->line + map_line;
	return s->line;
}

/* The node a map's name means, as the scheduler resolves it: the node of that name, else the one
 * node whose alias label has that value. NULL and *ambiguous set when two have it. */
static const struct gs_lint_node *resolve(struct gs_lint *l, const char *name, const struct gs_lint_node **second)
{
	const struct gs_lint_node *n = gs_hmap_get_str(&l->by_name, name);

	*second = NULL;
	if (n)
		return n;
	n = gs_hmap_get_str(&l->by_alias, name);
	if (n && (*second = gs_hmap_get_str(&l->ambiguous, name)))
		return NULL;
	return n;
}

static int reachable(const struct tmpl *t, long index)
{
	switch (t->reach) {
	case REACH_RANGE:
		return index >= t->lo && index <= t->hi;
	case REACH_ONE:
		return index == t->lo;
	default:
		return 1; /* unknown: every entry may be used */
	}
}

/* The entry's devices claimed by t's owner, at file:line (the map's file: a GPUPlacementMap's may be
 * another than t's). */
static void add_claims(struct tmpl *t, const struct gs_map_entry *e, const char *node, const char *file, int line,
		       int shared)
{
	struct gs_lint *l = t->l;
	const char *d = e->devices;

	while (*d) {
		size_t n = strcspn(d, ",");
		size_t nl = strlen(node), ol = strlen(t->what);
		struct claim *c = gs_xmalloc(sizeof(*c));
		/* key "node/device", then NUL, node, NUL, device: one allocation */
		c->key = gs_xmalloc(2 * (nl + n) + 4);
		memcpy(c->key, node, nl);
		c->key[nl] = '/';
		memcpy(c->key + nl + 1, d, n);
		c->key[nl + 1 + n] = 0;
		c->node = c->key + nl + n + 2;
		memcpy(c->node, node, nl + 1);
		c->device = c->node + nl + 1;
		memcpy(c->device, d, n);
		c->device[n] = 0;
		c->owner = memcpy(gs_xmalloc(ol + 1), t->what, ol + 1);
		c->file = file;
		c->line = line;
		c->shared = shared;
		if (l->n_claims == l->cap_claims) {
			l->cap_claims = l->cap_claims ? l->cap_claims * 2 : 64;
			l->claims = gs_xreallocarray(l->claims, l->cap_claims, sizeof(*l->claims));
		}
		l->claims[l->n_claims++] = c;
		d += n;
		if (*d == ',')
			d++;
	}
}

static void check_node(struct tmpl *t, const struct gs_map_entry *e, const char *file, int line, const char **resolved)
{
	struct gs_lint *l = t->l;
	const struct gs_lint_node *second, *n = resolve(l, e->node, &second);

	*resolved = e->node;
	if (!l->have_nodes)
		return;
	if (second) {
		const struct gs_lint_node *first = gs_hmap_get_str(&l->by_alias, e->node);
		diag(l, file, line, GS_LINT_WARNING,
		     "%s: node \"%s\" (index %ld) is the alias of both %s and %s: its pod waits (NODE_ALIAS_AMBIGUOUS)",
		     t->what, e->node, e->index, first->name, second->name);
		return;
	}
	if (!n) {
		diag(l, file, line, GS_LINT_WARNING,
		     "%s: node \"%s\" (index %ld) is not in the node list: its pod waits (NODE_MISSING)", t->what,
		     e->node, e->index);
		return;
	}
	char shown[600];
	*resolved = n->name;
	if (l->have_pods && !gs_hmap_get_str(&l->used, n->name)) {
		size_t nl = strlen(e->node);
		struct use *u = gs_xmalloc(sizeof(*u) + nl + 1);
		u->node = n;
		u->file = file;
		u->line = line;
		memcpy(u->name, e->node, nl + 1);
		if (l->n_uses == l->cap_uses) {
			l->cap_uses = l->cap_uses ? l->cap_uses * 2 : 16;
			l->uses = gs_xreallocarray(l->uses, l->cap_uses, sizeof(*l->uses));
		}
		l->uses[l->n_uses++] = u;
		gs_hmap_put_str(&l->used, n->name, u, NULL);
	}
	if (strcmp(n->name, e->node))
		snprintf(shown, sizeof(shown), "\"%s\" (node %s)", e->node, n->name);
	else
		snprintf(shown, sizeof(shown), "\"%s\"", n->name);
	if (e->max_index >= 0 && n->gpus >= 0 && e->max_index >= n->gpus) {
		char words[128];
		gs_inuse_node_gpus_words(n->gpus, n->gpus_from, words, sizeof(words));
		diag(l, file, line, GS_LINT_WARNING,
		     "%s: node %s %s, so it has no device %ld (index %ld waits: NODE_DEVICES)", t->what, shown, words,
		     e->max_index, e->index);
	} else if (e->max_index >= 0 && n->gpus < 0)
		diag(l, file, line, GS_LINT_WARNING,
		     "%s: node %s advertises no nvidia.com/gpu (index %ld names device %ld)", t->what, shown, e->index,
		     e->max_index);
}

/* Indices the workload reaches without an entry, listed in one warning (at its count's line, else at
 * line: the map's annotation or the reference). */
static void check_missing(struct tmpl *t, const struct gs_map *m, int line)
{
	char list[256] = "";
	size_t used = 0, missing, within = 0;
	int listed = 0;

	if (t->reach == REACH_ONE) {
		if (!gs_map_lookup(m, t->lo))
			diag(t->l, t->file, line, GS_LINT_WARNING,
			     "%s: the pod's index %ld has no entry in the map: it waits (NO_ENTRY)", t->what, t->lo);
		return;
	}
	if (t->reach != REACH_RANGE)
		return;
	for (size_t i = 0; i < gs_map_count(m); i++)
		within += reachable(t, gs_map_entry_at(m, i)->index);
	missing = (size_t)(t->hi - t->lo + 1) - within;
	if (!missing)
		return;
	for (long i = t->lo; i <= t->hi && listed < LIST_MAX; i++) {
		if (gs_map_lookup(m, i))
			continue;
		int w = snprintf(list + used, sizeof(list) - used, "%s%ld", listed ? ", " : "", i);
		if (w > 0 && (size_t)w < sizeof(list) - used)
			used += (size_t)w;
		listed++;
	}
	diag(t->l, t->file, t->count_line ? t->count_line : line, GS_LINT_WARNING,
	     "%s: %s %ld%s but no entry for index %s%s: %s pod%s wait%s (NO_ENTRY)", t->what, t->count_key,
	     t->hi - t->lo + 1, t->count_line ? "" : " (the default)", list, missing > (size_t)listed ? ", ..." : "",
	     missing == 1 ? "that" : "those", missing == 1 ? "" : "s", missing == 1 ? "s" : "");
}

struct map_ctx {
	struct gs_lint *l;
	const char *what; /* the workload or the object */
	const struct msrc *src;
};

/* One problem of the map: an error at its line in the file, the map's own line in the message. */
static void map_problem(void *arg, const struct gs_map_error *err)
{
	const struct map_ctx *c = arg;
	const char *msg = err->msg;

	if (!strncmp(msg, "line ", 5) && strchr(msg, ':'))
		msg = strchr(msg, ':') + 2; /* the file's line replaces the map's */
	diag(c->l, c->src->file, map_line_in_file(c->src, err->line), GS_LINT_ERROR, "%s: %s%s%.0d: %s", c->what,
	     c->src->label, err->line > 0 ? " line " : "", err->line, msg);
}

/* The map of the scalar n (at src) with every problem an error; its good entries, or NULL. */
static struct gs_map *parse_map(struct gs_lint *l, const char *what, const struct msrc *src, const yaml_node_t *n)
{
	struct gs_map *m = NULL;
	int problems = gs_map_parse_all(scalar(n), n->data.scalar.length, &m, map_problem,
					&(struct map_ctx){.l = l, .what = what, .src = src});

	if (problems > GS_MAP_MAX_ERRORS)
		diag(l, src->file, src->line, GS_LINT_ERROR, "%s: %s: %d more problems not shown", what, src->label,
		     problems - GS_MAP_MAX_ERRORS);
	return m;
}

/* ---- all-or-nothing (sched/gang.h) ------------------------------------------------------------------ */

/* A workload's gang settings, and where a finding about them goes: the annotations' lines, or for a
 * workload by reference the reference's line (the counts it is checked against are the workload's). */
struct gang {
	int placement_line, size_line;
	int has_size;
	char size_name[700]; /* GS_GANG_SIZE, or "GPUPlacementMap ns/name spec.gangSize" */
	struct gs_gang_opts o;
};

/* A plain scalar kubectl's YAML (1.1) reads as a number, a boolean or null ("8", "-1.5", "true", "~"):
 * refused as an annotation value. Not exhaustive (hex, exponents, yes/no are too); the common slips. */
static int yaml_non_string(const yaml_node_t *n)
{
	static const char *const words[] = {"~",    "null", "Null",  "NULL",  "true",
					    "True", "TRUE", "false", "False", "FALSE"};
	const char *s = scalar(n);
	size_t i = 0;
	int digits = 0, dots = 0;

	if (!s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	if (!*s)
		return 1;
	for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++)
		if (!strcmp(s, words[w]))
			return 1;
	if (s[i] == '-' || s[i] == '+')
		i++;
	for (; s[i]; i++) {
		if (s[i] >= '0' && s[i] <= '9')
			digits++;
		else if (s[i] == '.')
			dots++;
		else
			return 0;
	}
	return digits > 0 && dots <= 1;
}

/* Reads and parses the annotations: 0, or an error given (the webhook's message) and -EINVAL. */
static int gang_read(struct tmpl *t, yaml_node_t *tmpl_node, struct gang *g)
{
	yaml_document_t *d = t->doc;
	yaml_node_t *anns = PATH(d, tmpl_node, "metadata", "annotations"), *at;
	yaml_node_t *placement = get(d, anns, GS_GANG_PLACEMENT), *timeout = get(d, anns, GS_GANG_TIMEOUT);
	yaml_node_t *size = get(d, anns, GS_GANG_SIZE);
	yaml_node_t *const each[] = {placement, timeout, size};
	const char *names[] = {GS_GANG_PLACEMENT, GS_GANG_TIMEOUT, GS_GANG_SIZE};
	char msg[300];

	g->placement_line = line_of(placement);
	g->size_line = line_of(size);
	g->has_size = size != NULL;
	snprintf(g->size_name, sizeof(g->size_name), "%s", GS_GANG_SIZE);
	for (int i = 0; i < 3; i++) {
		const yaml_node_t *n = each[i];
		if (n && n->type != YAML_SCALAR_NODE) {
			diag(t->l, t->file, line_of(n), GS_LINT_ERROR, "%s: the %s annotation is not a string", t->what,
			     names[i]);
			return -EINVAL;
		}
		if (yaml_non_string(n)) {
			diag(t->l, t->file, line_of(n), GS_LINT_ERROR,
			     "%s: %s: %s is not a string in YAML and annotation values must be: quote it (\"%s\")",
			     t->what, names[i], scalar(n), scalar(n));
			return -EINVAL;
		}
	}
	if (gs_gang_opts_parse(scalar(placement), scalar(timeout), scalar(size), &g->o, msg, sizeof(msg)) == 0)
		return 0;
	at = !strncmp(msg, GS_GANG_TIMEOUT, strlen(GS_GANG_TIMEOUT)) ? timeout
	     : !strncmp(msg, GS_GANG_SIZE, strlen(GS_GANG_SIZE))     ? size
								     : placement;
	diag(t->l, t->file, line_of(at), GS_LINT_ERROR, "%s: %s", t->what, msg);
	return -EINVAL;
}

/* "gpu-scheduler.io/gang-size 8" or "the gang of the map's 4 entries" (no gang-size: the default). */
static const char *gang_size_words(char *out, size_t size, const struct gang *g, long n)
{
	if (g->has_size)
		snprintf(out, size, "%s %ld", g->size_name, n);
	else
		snprintf(out, size, "the gang of the map's %ld entries (no %s: the default)", n, g->size_name);
	return out;
}

/* A StatefulSet's gang: no more than its replicas, and its pods created together. */
static void gang_statefulset(struct tmpl *t, const struct gang *g, long n)
{
	const struct counts *c = &t->c;
	long replicas = c->replicas;
	char words[900];

	if (replicas == 0)
		return; /* nothing runs */
	if (n > 0 && replicas > 0 && n > replicas)
		diag(t->l, t->file, g->has_size ? g->size_line : g->placement_line, GS_LINT_ERROR,
		     "%s: %s is more than replicas %ld%s: the gang could never complete", t->what,
		     gang_size_words(words, sizeof(words), g, n), replicas, c->replicas_line ? "" : " (the default)");
	if (n == 1 || replicas == 1 || !c->ordered)
		return; /* a gang of one pod, or Parallel (or a value the apiserver refuses) */
	diag(t->l, t->file, c->policy_line ? c->policy_line : g->placement_line, GS_LINT_ERROR,
	     "%s: all-or-nothing with podManagementPolicy OrderedReady%s can never complete: pod 1 is not created "
	     "until pod 0 is Ready; set podManagementPolicy: Parallel",
	     t->what, c->policy_line ? "" : " (the default)");
}

/* A Job's gang: no more than the pods it runs at once (parallelism, default 1, and completions). */
static void gang_job(struct tmpl *t, const struct gang *g, long n)
{
	const struct counts *c = &t->c;
	long par = c->parallelism, comp = c->completions;
	int line = g->has_size ? g->size_line : g->placement_line;
	char words[900];

	if (n <= 0 || par == 0 || comp == 0)
		return; /* unknown size, or nothing runs */
	if (par > 0 && n > par)
		diag(t->l, t->file, line, GS_LINT_ERROR,
		     "%s: %s is more than parallelism %ld%s: at most %ld pod%s of the Job run%s at once, the gang "
		     "could never complete",
		     t->what, gang_size_words(words, sizeof(words), g, n), par,
		     c->parallelism_line ? "" : " (the default)", par, par == 1 ? "" : "s", par == 1 ? "s" : "");
	else if (comp > 0 && n > comp)
		diag(t->l, t->file, line, GS_LINT_ERROR,
		     "%s: %s is more than completions %ld: the gang could never complete", t->what,
		     gang_size_words(words, sizeof(words), g, n), comp);
}

/* The gang of n pods against the workload's counts. */
static void gang_counts(struct tmpl *t, const struct gang *g, long n)
{
	if (t->has_counts && !strcmp(t->kind, "StatefulSet"))
		gang_statefulset(t, g, n);
	else if (t->has_counts && !strcmp(t->kind, "Job"))
		gang_job(t, g, n);
}

/* The all-or-nothing checks of a template of ours; m is its map (NULL: none, or none that parsed). */
static void check_gang(struct tmpl *t, yaml_node_t *tmpl_node, const struct gs_map *m)
{
	struct gang g;
	long n;

	if (gang_read(t, tmpl_node, &g) < 0 || !g.o.all_or_nothing)
		return;
	n = g.o.size ? g.o.size : m ? (long)gs_map_count(m) : 0;
	if (g.o.size && m && (size_t)g.o.size > gs_map_count(m))
		diag(t->l, t->file, g.size_line, GS_LINT_ERROR,
		     "%s: %s %ld is more than the %zu %s of %s: the gang could never complete", t->what, GS_GANG_SIZE,
		     g.o.size, gs_map_count(m), gs_map_count(m) == 1 ? "entry" : "entries", t->l->annotation);
	gang_counts(t, &g, n);
}

/* ---- one pod template ----------------------------------------------------------------------------- */

/* Every entry of m against the workload: reached, its node, its devices claimed. */
static void check_entries(struct tmpl *t, const struct gs_map *m, const struct msrc *src, int shared)
{
	for (size_t i = 0; i < gs_map_count(m); i++) {
		const struct gs_map_entry *e = gs_map_entry_at(m, i);
		int line = map_line_in_file(src, e->line);
		const char *node;

		if (!reachable(t, e->index)) {
			if (t->reach == REACH_RANGE)
				diag(t->l, src->file, line, GS_LINT_WARNING,
				     "%s: the entry for index %ld is never used: %s %ld gives indices %ld-%ld", t->what,
				     e->index, t->count_key, t->hi - t->lo + 1, t->lo, t->hi);
			continue; /* REACH_ONE: the other entries are the template's other pods' */
		}
		check_node(t, e, src->file, line, &node);
		add_claims(t, e, node, src->file, line, shared);
	}
}

/* A map (or a reference) on a template of another scheduler. */
static void not_ours(struct tmpl *t, const yaml_node_t *sched, const yaml_node_t *at, const char *what_ann)
{
	diag(t->l, t->file, line_of(sched ? sched : at), GS_LINT_WARNING,
	     "%s: has a %s annotation but spec.schedulerName is %s%s%s: %s will not place its pods", t->what, what_ann,
	     scalar(sched) ? "\"" : "", scalar(sched) ? scalar(sched) : "unset (default-scheduler)",
	     scalar(sched) ? "\"" : "", t->l->scheduler_name);
}

/*
 * A template naming a GPUPlacementMap (gpm.h): what can be said now (its scheduler, its index, gang
 * annotations beside it), and the rest recorded for gs_lint_finish, when every file has given its
 * objects.
 */
static void check_reference(struct tmpl *t, yaml_node_t *tmpl_node, const yaml_node_t *ref, int ours, int shared)
{
	struct gs_lint *l = t->l;
	yaml_node_t *anns = PATH(t->doc, tmpl_node, "metadata", "annotations");
	const char *gang[] = {GS_GANG_PLACEMENT, GS_GANG_TIMEOUT, GS_GANG_SIZE}, *name = scalar(ref);
	yaml_node_t *sched = PATH(t->doc, tmpl_node, "spec", "schedulerName");
	struct ref *r;
	size_t klen;

	l->workloads++;
	if (!name || !*name) {
		diag(l, t->file, line_of(ref), GS_LINT_ERROR, "%s: the %s annotation is not an object's name", t->what,
		     GS_MAP_REF_ANNOTATION);
		return;
	}
	if (!ours)
		not_ours(t, sched, ref, GS_MAP_REF_ANNOTATION);
	if (t->reach == REACH_NONE)
		diag(l, t->file, line_of(ref), GS_LINT_WARNING, "%s: its pods have no index (NO_INDEX): %s", t->what,
		     t->none_why);
	for (int i = 0; i < 3; i++) {
		yaml_node_t *g = get(t->doc, anns, gang[i]);
		if (g)
			diag(l, t->file, line_of(g), GS_LINT_ERROR,
			     "%s: %s beside %s: a workload by reference takes its all-or-nothing settings from the %s "
			     "(spec.placement, spec.gangTimeout, spec.gangSize); the webhook denies its pods, the "
			     "scheduler makes them wait (GANG_INVALID)",
			     t->what, gang[i], GS_MAP_REF_ANNOTATION, GS_GPM_KIND);
	}
	r = gs_xmalloc(sizeof(*r));
	r->t = *t;
	r->t.doc = NULL;
	r->t.ns = NULL;
	klen = (t->ns ? strlen(t->ns) : 0) + strlen(name) + 2;
	r->key = gs_xmalloc(klen);
	snprintf(r->key, klen, "%s/%s", t->ns ? t->ns : "", name);
	r->line = line_of(ref);
	r->ours = ours;
	r->shared = shared;
	l->refs = gs_xreallocarray(l->refs, l->n_refs + 1, sizeof(*l->refs));
	l->refs[l->n_refs++] = r;
}

static void check_template(struct tmpl *t, yaml_node_t *tmpl_node)
{
	struct gs_lint *l = t->l;
	yaml_document_t *d = t->doc;
	yaml_node_t *anns = PATH(d, tmpl_node, "metadata", "annotations");
	yaml_node_t *ann = get(d, anns, l->annotation), *ref = get(d, anns, GS_MAP_REF_ANNOTATION);
	yaml_node_t *sched = PATH(d, tmpl_node, "spec", "schedulerName");
	const char *shared_v = scalar(get(d, anns, "gpu-scheduler.io/allow-shared-devices"));
	int ours = scalar_is(sched, l->scheduler_name), shared = shared_v && !strcmp(shared_v, "true");
	struct gs_map *m = NULL;
	struct msrc src;

	if (!ann && !ref) {
		if (!ours)
			return;
		diag(l, t->file, line_of(sched), GS_LINT_WARNING,
		     "%s: spec.schedulerName is %s but the pod template has no %s annotation: its pods wait "
		     "(NO_MAP)",
		     t->what, l->scheduler_name, l->annotation);
		check_gang(t, tmpl_node, NULL);
		return;
	}
	if (!ann) {
		check_reference(t, tmpl_node, ref, ours, shared);
		return;
	}
	l->workloads++;
	if (ref)
		diag(l, t->file, line_of(ref), GS_LINT_ERROR,
		     "%s: both %s and %s: a pod carries its map or names a %s, not both; the webhook denies its pods, "
		     "the scheduler makes them wait (MAP_INVALID)",
		     t->what, l->annotation, GS_MAP_REF_ANNOTATION, GS_GPM_KIND);
	if (ann->type != YAML_SCALAR_NODE) {
		diag(l, t->file, line_of(ann), GS_LINT_ERROR, "%s: the %s annotation is not a string", t->what,
		     l->annotation);
		return;
	}
	if (!ours)
		not_ours(t, sched, ann, l->annotation);
	if (t->reach == REACH_NONE)
		diag(l, t->file, line_of(ann), GS_LINT_WARNING, "%s: its pods have no index (NO_INDEX): %s", t->what,
		     t->none_why);
	src = msrc_of(t->file, ann, l->annotation);
	m = parse_map(l, t->what, &src, ann);
	if (ours)
		check_gang(t, tmpl_node, m);
	if (!m)
		return; /* every line bad (or none, or the text too large, or -ENOMEM): nothing to check */
	check_entries(t, m, &src, shared);
	check_missing(t, m, line_of(ann));
	gs_map_unref(m);
}

/* ---- GPUPlacementMap objects (sched/gpm.h) -------------------------------------------------------- */

/* A plain scalar YAML reads as an integer ("8", "-1"): what the CRD's integer fields take. */
static int plain_integer(const yaml_node_t *n)
{
	const char *s = scalar(n);

	if (!s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	if (*s == '-' || *s == '+')
		s++;
	return *s && strspn(s, "0123456789") == strlen(s);
}

/* A field of spec whose YAML type is not the CRD's: the apiserver refuses the object. */
static int gpm_field_type(struct gs_lint *l, const char *file, const struct object *o, const yaml_node_t *n,
			  const char *field, int integer_type)
{
	const char *s = scalar(n);

	if (!n || (s && (integer_type ? plain_integer(n) : !yaml_non_string(n))))
		return 0;
	if (!s)
		diag(l, file, line_of(n), GS_LINT_ERROR, "%s: %s is not a%s", o->what, field,
		     integer_type ? "n integer" : " string");
	else
		diag(l, file, line_of(n), GS_LINT_ERROR,
		     "%s: %s: %s is not %s in YAML and the CRD's type is %s: the apiserver refuses the object", o->what,
		     field, s, integer_type ? "an integer" : "a string", integer_type ? "integer" : "string");
	return -EINVAL;
}

/* spec.placement, gangTimeout and gangSize: read by gs_gang_opts_parse as the annotations are. */
static void gpm_settings(struct gs_lint *l, const char *file, yaml_document_t *d, yaml_node_t *spec, struct object *o)
{
	yaml_node_t *pl = get(d, spec, "placement"), *to = get(d, spec, "gangTimeout"), *sz = get(d, spec, "gangSize");
	char msg[300];
	const yaml_node_t *at;

	if (gpm_field_type(l, file, o, pl, GS_GANG_SPEC_PLACEMENT, 0) < 0 ||
	    gpm_field_type(l, file, o, to, GS_GANG_SPEC_TIMEOUT, 0) < 0 ||
	    gpm_field_type(l, file, o, sz, GS_GANG_SPEC_SIZE, 1) < 0)
		return;
	if (gs_gang_opts_parse_named(&gs_gang_spec_names, scalar(pl), scalar(to), scalar(sz), &o->o, msg, sizeof(msg)) <
	    0) {
		at = !strncmp(msg, GS_GANG_SPEC_TIMEOUT, strlen(GS_GANG_SPEC_TIMEOUT)) ? to
		     : !strncmp(msg, GS_GANG_SPEC_SIZE, strlen(GS_GANG_SPEC_SIZE))     ? sz
										       : pl;
		diag(l, file, line_of(at ? at : spec), GS_LINT_ERROR, "%s: %s", o->what, msg);
		return;
	}
	o->gang_ok = 1;
	if (o->o.all_or_nothing && o->o.size && o->map && (size_t)o->o.size > gs_map_count(o->map))
		diag(l, file, line_of(sz), GS_LINT_ERROR,
		     "%s: spec.gangSize %ld is more than the %zu %s of spec.map: the gang could never complete",
		     o->what, o->o.size, gs_map_count(o->map), gs_map_count(o->map) == 1 ? "entry" : "entries");
}

/* A GPUPlacementMap: its map and settings checked, and kept (the last of its namespace and name) for
 * the workloads that name it. */
static void check_gpm(struct gs_lint *l, const char *file, yaml_document_t *d, yaml_node_t *obj, const char *ns,
		      const char *name)
{
	yaml_node_t *spec = get(d, obj, "spec"), *map = get(d, spec, "map");
	struct object *o = gs_xmalloc(sizeof(*o)), *old = NULL;
	char key[600];

	memset(o, 0, sizeof(*o));
	snprintf(o->what, sizeof(o->what), "%s %s%s%s", GS_GPM_KIND, ns ? ns : "", ns ? "/" : "",
		 name ? name : "(unnamed)");
	if (!map)
		diag(l, file, line_of(spec ? spec : obj), GS_LINT_ERROR, "%s: no spec.map (the CRD requires it)",
		     o->what);
	else if (map->type != YAML_SCALAR_NODE || yaml_non_string(map))
		diag(l, file, line_of(map), GS_LINT_ERROR, "%s: spec.map is not a string", o->what);
	else {
		o->src = msrc_of(file, map, "spec.map");
		o->map = parse_map(l, o->what, &o->src, map);
	}
	gpm_settings(l, file, d, spec, o);
	if (!name) {
		gs_map_unref(o->map);
		free(o);
		return; /* no workload can name it */
	}
	snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", name);
	gs_hmap_put_str(&l->objects, key, o, (void **)&old);
	if (old) {
		gs_map_unref(old->map);
		free(old);
	}
}

/* A workload by reference against its object, if the files hold it (else a note: the cluster may). */
static void resolve_ref(struct gs_lint *l, struct ref *r)
{
	const struct object *o = gs_hmap_get_str(&l->objects, r->key);
	struct tmpl *t = &r->t;
	const char *shown = r->key[0] == '/' ? r->key + 1 : r->key;

	if (!o) {
		diag(l, t->file, r->line, GS_LINT_NOTE,
		     "%s: %s %s is not in the files given: not checked (it may be in the cluster; without it the "
		     "pods wait, MAP_MISSING)",
		     t->what, GS_GPM_KIND, shown);
		return;
	}
	if (o->map) {
		check_entries(t, o->map, &o->src, r->shared);
		check_missing(t, o->map, r->line);
	}
	if (r->ours && o->gang_ok && o->o.all_or_nothing) {
		struct gang g = {.placement_line = r->line, .size_line = r->line, .has_size = o->o.size > 0, .o = o->o};
		snprintf(g.size_name, sizeof(g.size_name), "%s spec.gangSize", o->what);
		gang_counts(t, &g, o->o.size ? o->o.size : o->map ? (long)gs_map_count(o->map) : 0);
	}
}

/* ---- one object of a document --------------------------------------------------------------------- */

/* A StatefulSet's or Job's counts, read now: a reference is checked after the document is gone. */
static void read_counts(struct tmpl *t, yaml_node_t *spec)
{
	yaml_document_t *d = t->doc;
	yaml_node_t *r = get(d, spec, "replicas"), *p = get(d, spec, "parallelism");
	yaml_node_t *c = get(d, spec, "completions"), *policy = get(d, spec, "podManagementPolicy");

	t->has_counts = spec != NULL;
	t->c = (struct counts){
		.replicas = r ? integer(r) : 1,
		.parallelism = p ? integer(p) : 1,
		.completions = c ? integer(c) : -1,
		.replicas_line = line_of(r),
		.parallelism_line = line_of(p),
		.completions_line = line_of(c),
		.policy_line = line_of(policy),
		.ordered = !policy || scalar_is(policy, "OrderedReady"),
	};
}

/* A Pod is its own template; its index from its label, the Job's annotation or its name. */
static void check_pod(struct tmpl *t, yaml_node_t *obj, const char *name)
{
	yaml_document_t *d = t->doc;
	long idx;
	enum gs_index_source src;
	const char *label = scalar(get(d, PATH(d, obj, "metadata", "labels"), "apps.kubernetes.io/pod-index"));
	const char *job =
		scalar(get(d, PATH(d, obj, "metadata", "annotations"), "batch.kubernetes.io/job-completion-index"));

	t->kind = "Pod";
	if (name && gs_map_pod_index(label, job, name, &idx, &src) == 0) {
		t->reach = REACH_ONE;
		t->lo = t->hi = idx;
	} else if (name) {
		t->reach = REACH_NONE;
		t->none_why = "neither the label apps.kubernetes.io/pod-index, the Job annotation nor a trailing -N of "
			      "the name gives the pod an index";
	}
	check_template(t, obj);
}

/* One object (a document's root or a List item). */
static void check_object(struct gs_lint *l, const char *file, yaml_document_t *d, yaml_node_t *obj, int depth)
{
	struct tmpl t = {.l = l, .file = file, .doc = d, .reach = REACH_UNKNOWN};
	yaml_node_t *kind = get(d, obj, "kind"), *spec = get(d, obj, "spec"), *tn;
	const char *k = scalar(kind), *name = scalar(PATH(d, obj, "metadata", "name"));
	const char *ns = scalar(PATH(d, obj, "metadata", "namespace"));

	if (!k)
		return;
	if (!strcmp(k, "List")) {
		yaml_node_t *items = get(d, obj, "items");
		if (depth > 0 || !items || items->type != YAML_SEQUENCE_NODE)
			return;
		for (yaml_node_item_t *it = items->data.sequence.items.start; it < items->data.sequence.items.top; it++)
			check_object(l, file, d, yaml_document_get_node(d, *it), depth + 1);
		return;
	}
	if (!strcmp(k, GS_GPM_KIND)) {
		check_gpm(l, file, d, obj, ns, name);
		return;
	}
	snprintf(t.what, sizeof(t.what), "%s %s%s%s", k, ns ? ns : "", ns ? "/" : "", name ? name : "(unnamed)");
	t.ns = ns;
	if (!strcmp(k, "Pod")) {
		check_pod(&t, obj, name);
		return;
	}
	if (!strcmp(k, "CronJob")) {
		spec = PATH(d, spec, "jobTemplate", "spec");
		k = "Job";
	}
	tn = get(d, spec, "template");
	if (!strcmp(k, "StatefulSet")) {
		yaml_node_t *r = get(d, spec, "replicas");
		long n = r ? integer(r) : 1, start = integer(PATH(d, spec, "ordinals", "start"));
		t.kind = "StatefulSet";
		t.count_key = "replicas";
		t.count_line = line_of(r);
		if (n >= 0) {
			t.reach = REACH_RANGE;
			t.lo = start > 0 ? start : 0;
			t.hi = t.lo + n - 1;
		}
	} else if (!strcmp(k, "Job")) {
		yaml_node_t *c = get(d, spec, "completions");
		long n = c ? integer(c) : 1;
		t.kind = "Job";
		t.count_key = "completions";
		t.count_line = line_of(c);
		if (!scalar_is(get(d, spec, "completionMode"), "Indexed")) {
			t.reach = REACH_NONE;
			t.none_why = "the Job is not completionMode: Indexed";
		} else if (n >= 0) {
			t.reach = REACH_RANGE;
			t.lo = 0;
			t.hi = n - 1;
		}
	} else if (!strcmp(k, "Deployment")) {
		t.kind = "Deployment";
		t.reach = REACH_NONE;
		t.none_why = "a Deployment's pods end in a random suffix; use a StatefulSet or an Indexed Job";
	} else {
		return;
	}
	if (strcmp(k, "Deployment"))
		read_counts(&t, spec);
	if (t.reach == REACH_RANGE && t.hi < t.lo)
		t.reach = REACH_UNKNOWN; /* replicas: 0: nothing runs, nothing to say about indices */
	if (tn)
		check_template(&t, tn);
}

/* ---- bounds before and checks after the loader ---------------------------------------------------- */

/*
 * Where text first nests deeper than GS_LINT_MAX_DEPTH. libyaml's scanner keeps a possible simple key
 * per open flow collection and walks all of them for every token, so nesting d costs O(d) a token:
 * 100,000 nested brackets (200 KB) took 30 s, and the loader runs that same parser, so it cannot be
 * capped from outside. This pass runs the parser alone and stops at the first collection past the
 * limit, before the cost grows (the scanner looks at most 1024 characters ahead); the documents
 * before it are counted, and loaded and linted as usual. A syntax error ends the pass quietly: the
 * loader reports it with its line.
 */
struct depth_scan {
	size_t docs_ok; /* whole documents before the deep one */
	int deep;       /* found one */
	int line;       /* its line */
};

static void depth_scan(const char *text, size_t len, struct depth_scan *ds)
{
	yaml_parser_t p;
	yaml_event_t e;
	int depth = 0, done = 0;

	memset(ds, 0, sizeof(*ds));
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!done && yaml_parser_parse(&p, &e)) {
		switch (e.type) {
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (++depth > GS_LINT_MAX_DEPTH) {
				ds->deep = done = 1;
				ds->line = (int)e.start_mark.line + 1;
			}
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		case YAML_DOCUMENT_END_EVENT:
			done = ++ds->docs_ok > GS_LINT_MAX_DOCUMENTS; /* the loader stops there */
			break;
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		default:
			break;
		}
		yaml_event_delete(&e);
	}
	yaml_parser_delete(&p);
}

/* s[0..n) quoted for a message: printable ASCII as is, the rest as \xNN, cut after 60 bytes. */
static const char *quote_key(char *out, size_t size, const unsigned char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, i;

	out[o++] = '"';
	for (i = 0; i < n && i < 60 && o + 6 < size; i++) {
		if (s[i] < 0x20 || s[i] >= 0x7f || s[i] == '"' || s[i] == '\\') {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[s[i] >> 4];
			out[o++] = hex[s[i] & 15];
		} else {
			out[o++] = (char)s[i];
		}
	}
	out[o++] = '"';
	if (i < n)
		o += (size_t)snprintf(out + o, size - o, "...");
	out[o] = '\0';
	return out;
}

/* A scalar key of one mapping, for sorting. */
struct key_ref {
	const unsigned char *v;
	size_t len;
	size_t pos; /* its place in the mapping */
	int line;
};

static int key_cmp(const void *a, const void *b)
{
	const struct key_ref *x = a, *y = b;
	int c;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	if ((c = memcmp(x->v, y->v, x->len)) != 0)
		return c;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/*
 * Duplicate scalar keys in every mapping of d are errors, as strict Kubernetes decoding makes them
 * (kubectl and a non-strict apiserver silently keep the last). Sorted, not hashed, so that no chosen set of
 * keys is slow: O(n log n) for a mapping of n keys; reported in the mapping's order, at most
 * DUP_MAX_REPORTED a file (*reported counts them all).
 */
#define DUP_MAX_REPORTED 100
static void check_duplicates(struct gs_lint *l, const char *file, yaml_document_t *d, size_t *reported)
{
	struct key_ref *keys = NULL;
	int *first_line = NULL;
	size_t cap = 0;

	for (yaml_node_t *m = d->nodes.start; m < d->nodes.top; m++) {
		size_t n = 0, np;
		if (m->type != YAML_MAPPING_NODE)
			continue;
		np = (size_t)(m->data.mapping.pairs.top - m->data.mapping.pairs.start);
		if (np < 2)
			continue;
		if (np > cap) {
			cap = np;
			keys = gs_xreallocarray(keys, cap, sizeof(*keys));
			first_line = gs_xreallocarray(first_line, cap, sizeof(*first_line));
		}
		for (size_t i = 0; i < np; i++) {
			yaml_node_t *k = yaml_document_get_node(d, m->data.mapping.pairs.start[i].key);
			first_line[i] = 0;
			if (k && k->type == YAML_SCALAR_NODE)
				keys[n++] = (struct key_ref){.v = k->data.scalar.value,
							     .len = k->data.scalar.length,
							     .pos = i,
							     .line = line_of(k)};
		}
		qsort(keys, n, sizeof(*keys), key_cmp);
		for (size_t i = 1, run = 0; i < n; i++) {
			if (keys[i].len != keys[run].len || memcmp(keys[i].v, keys[run].v, keys[i].len))
				run = i;
			else
				first_line[keys[i].pos] = keys[run].line;
		}
		for (size_t i = 0; i < np; i++) {
			yaml_node_t *k = yaml_document_get_node(d, m->data.mapping.pairs.start[i].key);
			char q[256];
			if (!first_line[i] || ++*reported > DUP_MAX_REPORTED)
				continue;
			diag(l, file, line_of(k), GS_LINT_ERROR, "duplicate key %s at line %d (first at line %d)",
			     quote_key(q, sizeof(q), k->data.scalar.value, k->data.scalar.length), line_of(k),
			     first_line[i]);
		}
	}
	free(keys);
	free(first_line);
}

void gs_lint_add(struct gs_lint *l, const char *file, const char *text, size_t len)
{
	yaml_parser_t p;
	struct depth_scan ds;
	char *f;
	size_t docs = 0, dups = 0;

	l->files = gs_xreallocarray(l->files, l->n_files + 1, sizeof(*l->files));
	f = l->files[l->n_files++] = gs_xstrdup(file);
	if (len > GS_LINT_MAX_BYTES) {
		diag(l, f, 0, GS_LINT_ERROR, "larger than %d bytes", GS_LINT_MAX_BYTES);
		return;
	}
	depth_scan(text, len, &ds);
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	for (;;) {
		yaml_document_t d;
		yaml_node_t *root;

		if (ds.deep && docs == ds.docs_ok) {
			diag(l, f, ds.line, GS_LINT_ERROR,
			     "nesting deeper than %d at line %d: the rest of the file is "
			     "not read",
			     GS_LINT_MAX_DEPTH, ds.line);
			break;
		}
		if (!yaml_parser_load(&p, &d)) {
			diag(l, f, (int)p.problem_mark.line + 1, GS_LINT_ERROR, "YAML: %s%s%s",
			     p.problem ? p.problem : "syntax error", p.context ? " " : "", p.context ? p.context : "");
			break;
		}
		root = yaml_document_get_root_node(&d);
		if (!root) {
			yaml_document_delete(&d);
			break; /* the end of the stream */
		}
		if (++docs > GS_LINT_MAX_DOCUMENTS) {
			diag(l, f, line_of(root), GS_LINT_ERROR, "more than %d documents", GS_LINT_MAX_DOCUMENTS);
			yaml_document_delete(&d);
			break;
		}
		check_duplicates(l, f, &d, &dups);
		check_object(l, f, &d, root, 0);
		yaml_document_delete(&d);
	}
	if (dups > DUP_MAX_REPORTED)
		diag(l, f, 0, GS_LINT_ERROR, "%zu more duplicate keys not shown", dups - DUP_MAX_REPORTED);
	yaml_parser_delete(&p);
}

#define DEDICATED_PODS_SHOWN 3

/*
 * Nodes the maps use that carry device-plugin GPU pods but not the dedicated taint: the plugin hands
 * those pods GPUs without knowing the maps, so a mapped GPU can end up with two workloads. Once per
 * node, at its first use.
 */
static void check_dedicated(struct gs_lint *l)
{
	struct gs_buf pods;

	gs_buf_init(&pods, 0);
	for (size_t i = 0; i < l->n_uses; i++) {
		const struct use *u = l->uses[i];
		char shown[600];
		size_t count = 0;

		if (u->node->dedicated)
			continue;
		gs_buf_reset(&pods);
		for (size_t j = 0; j < l->n_gpu_pods; j++) {
			const struct gs_lint_gpu_pod *p = &l->gpu_pods[j];
			if (!p->node || strcmp(p->node, u->node->name))
				continue;
			if (count++ < DEDICATED_PODS_SHOWN)
				gs_buf_printf(&pods, "%s%s/%s", count > 1 ? ", " : "", p->ns ? p->ns : "",
					      p->name ? p->name : "");
		}
		if (!count)
			continue;
		if (count > DEDICATED_PODS_SHOWN)
			gs_buf_printf(&pods, " and %zu more", count - DEDICATED_PODS_SHOWN);
		if (strcmp(u->name, u->node->name))
			snprintf(shown, sizeof(shown), "\"%s\" (node %s)", u->name, u->node->name);
		else
			snprintf(shown, sizeof(shown), "\"%s\"", u->node->name);
		diag(l, u->file, u->line, GS_LINT_WARNING,
		     "node %s, which maps use, has no %s:NoSchedule taint and runs %zu pod%s that get nvidia.com/gpu "
		     "from the device plugin (%.400s): the plugin may hand them GPUs the maps give to their pods; "
		     "dedicate the node: kubectl taint nodes %s %s=true:NoSchedule (mapped pods tolerate it through "
		     "the webhook's --tolerate-dedicated-taint)",
		     shown, l->dedicated_taint, count, count == 1 ? "" : "s", pods.data ? pods.data : "", u->node->name,
		     l->dedicated_taint);
	}
	gs_buf_free(&pods);
}

void gs_lint_finish(struct gs_lint *l)
{
	struct gs_hmap first;

	for (size_t i = 0; i < l->n_refs; i++)
		resolve_ref(l, l->refs[i]);
	gs_hmap_init(&first, 0);
	for (size_t i = 0; i < l->n_claims; i++) {
		struct claim *c = l->claims[i], *o = gs_hmap_get_str(&first, c->key);
		if (!o) {
			gs_hmap_put_str(&first, c->key, c, NULL);
			continue;
		}
		if (!strcmp(o->owner, c->owner) || (o->shared && c->shared))
			continue;
		diag(l, c->file, c->line, GS_LINT_WARNING,
		     "%s: node \"%s\" device %s is also claimed by %s (%s:%d): pods of different owners wait for "
		     "each other (DEVICE_BUSY)",
		     c->owner, c->node, c->device, o->owner, o->file, o->line);
	}
	gs_hmap_free(&first);
	check_dedicated(l);
}

/* ---- node lists ----------------------------------------------------------------------------------- */

/* A NodeList item's metadata.name (NULL when absent) and, with an alias label, its value of that
 * label (*alias, NULL when none). */
static const char *node_names(yaml_document_t *d, yaml_node_t *node, const char *alias_label, const char **alias)
{
	*alias = alias_label && *alias_label ? scalar(get(d, PATH(d, node, "metadata", "labels"), alias_label)) : NULL;
	return scalar(PATH(d, node, "metadata", "name"));
}

/* o->gpus as the daemon counts a node's GPUs (lint.h): the index table of the agent's annotation, GPU
 * Feature Discovery's label, what it advertises. */
static void node_gpus(yaml_document_t *d, yaml_node_t *node, struct gs_lint_node *o)
{
	const char *inuse = scalar(PATH(d, node, "metadata", "annotations", GS_INUSE_ANNOTATION));
	const char *label = scalar(get(d, PATH(d, node, "metadata", "labels"), GS_GFD_COUNT_LABEL));
	long cap = integer(get(d, PATH(d, node, "status", "capacity"), "nvidia.com/gpu"));
	long alloc = integer(get(d, PATH(d, node, "status", "allocatable"), "nvidia.com/gpu"));
	struct gs_inuse *u = NULL;
	char err[160];

	if (inuse && gs_inuse_parse(inuse, strlen(inuse), &u, err, sizeof(err)) < 0)
		u = NULL;
	o->gpus = gs_inuse_node_gpus(u ? u->n_index : 0, label, cap, alloc, &o->gpus_from);
	gs_inuse_free(u);
}

int gs_lint_nodes_parse(const char *text, size_t len, const char *alias_label, struct gs_lint_node **nodes, size_t *n,
			char *err, size_t errlen)
{
	yaml_parser_t p;
	yaml_document_t d;
	yaml_node_t *items;
	struct depth_scan ds;
	size_t count = 0, bytes = 0;
	int r = -EINVAL;
	char *pool;
	struct gs_lint_node *out;

	*nodes = NULL;
	*n = 0;
	if (len > GS_LINT_MAX_BYTES) {
		snprintf(err, errlen, "larger than %d bytes", GS_LINT_MAX_BYTES);
		return -EINVAL;
	}
	depth_scan(text, len, &ds);
	if (ds.deep && ds.docs_ok == 0) {
		snprintf(err, errlen, "line %d: nesting deeper than %d", ds.line, GS_LINT_MAX_DEPTH);
		return -EINVAL;
	}
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, &d)) {
		snprintf(err, errlen, "line %d: YAML: %s", (int)p.problem_mark.line + 1,
			 p.problem ? p.problem : "syntax error");
		yaml_parser_delete(&p);
		return -EINVAL;
	}
	items = get(&d, yaml_document_get_root_node(&d), "items");
	if (!items || items->type != YAML_SEQUENCE_NODE) {
		snprintf(err, errlen, "not a NodeList (no items)");
		goto out;
	}
	for (yaml_node_item_t *it = items->data.sequence.items.start; it < items->data.sequence.items.top; it++) {
		yaml_node_t *node = yaml_document_get_node(&d, *it);
		const char *alias, *name = node_names(&d, node, alias_label, &alias);
		if (!name) {
			snprintf(err, errlen, "line %d: an item without metadata.name", line_of(node));
			goto out;
		}
		count++;
		bytes += strlen(name) + 1 + (alias ? strlen(alias) + 1 : 0);
	}
	out = gs_xmalloc(count * sizeof(*out) + bytes);
	pool = (char *)(out + count);
	count = 0;
	for (yaml_node_item_t *it = items->data.sequence.items.start; it < items->data.sequence.items.top; it++) {
		yaml_node_t *node = yaml_document_get_node(&d, *it);
		const char *alias, *name = node_names(&d, node, alias_label, &alias);
		struct gs_lint_node *o = &out[count++];

		o->name = strcpy(pool, name);
		pool += strlen(name) + 1;
		o->alias = alias ? strcpy(pool, alias) : NULL;
		pool += alias ? strlen(alias) + 1 : 0;
		node_gpus(&d, node, o);
	}
	*nodes = out;
	*n = count;
	r = 0;
out:
	yaml_document_delete(&d);
	yaml_parser_delete(&p);
	return r;
}
