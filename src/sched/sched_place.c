/*
 * sched_place.c: where a pod goes, and the pulls. See sched.h and docs/sched.md.
 *
 * A pending pod is in exactly one place: the bind queue (QUEUED), the waiter list of the node it waits
 * for (WAITING with a NODE_* reason), nowhere (WAITING for a reason of its own: it waits for its next
 * upsert), the retry heap (BACKOFF), or in flight (BINDING). gs_sched__place is the one function that
 * decides between queue and waiting, and it is called again at pull time, so a decision handed out is
 * always checked against the nodes as they are now; everything else just moves pods between places.
 *
 * Reports: a pod whose (reason, message) differs from what it last reported is put on the report
 * queue once; the pull skips it if it stopped waiting or came back to what was reported meanwhile.
 */
#include "sched/sched_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

#define MSG_MAX 1024

/* ---- states and places ------------------------------------------------------------------------- */

enum gs_wait_reason gs_sched__node_block(const struct gs_sched__node *n)
{
	if (!n || !n->present)
		return GS_WAIT_NODE_MISSING;
	if (!n->ready)
		return GS_WAIT_NODE_NOT_READY;
	if (n->unschedulable)
		return GS_WAIT_NODE_CORDONED;
	return GS_WAIT_NONE;
}

void gs_sched__set_state(struct gs_sched *s, struct gs_sched__pod *p, enum gs_pod_state st)
{
	if (p->state < GS_POD__COUNT)
		s->by_state[p->state]--;
	s->by_state[st]++;
	p->state = st;
}

static void heap_put(struct gs_sched *s, size_t i, struct gs_sched__pod *p)
{
	s->heap[i] = p;
	p->heap_pos = i;
}

static void heap_up(struct gs_sched *s, size_t i)
{
	struct gs_sched__pod *p = s->heap[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (s->heap[parent]->due_ms <= p->due_ms)
			break;
		heap_put(s, i, s->heap[parent]);
		i = parent;
	}
	heap_put(s, i, p);
}

static void heap_down(struct gs_sched *s, size_t i)
{
	struct gs_sched__pod *p = s->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= s->heap_len)
			break;
		if (c + 1 < s->heap_len && s->heap[c + 1]->due_ms < s->heap[c]->due_ms)
			c++;
		if (p->due_ms <= s->heap[c]->due_ms)
			break;
		heap_put(s, i, s->heap[c]);
		i = c;
	}
	heap_put(s, i, p);
}

static void heap_push(struct gs_sched *s, struct gs_sched__pod *p)
{
	if (s->heap_len == s->heap_cap) {
		size_t cap = s->heap_cap ? s->heap_cap * 2 : 16;
		struct gs_sched__pod **h = realloc(s->heap, cap * sizeof(*h));
		if (!h) {
			gs_log_error("sched: out of memory");
			abort();
		}
		s->heap = h;
		s->heap_cap = cap;
	}
	heap_put(s, s->heap_len++, p);
	heap_up(s, s->heap_len - 1);
}

static void heap_remove(struct gs_sched *s, struct gs_sched__pod *p)
{
	size_t i = p->heap_pos;
	struct gs_sched__pod *last = s->heap[--s->heap_len];

	if (i < s->heap_len) {
		heap_put(s, i, last);
		heap_down(s, i);
		heap_up(s, last->heap_pos);
	}
}

void gs_sched__detach(struct gs_sched *s, struct gs_sched__pod *p)
{
	switch (p->state) {
	case GS_POD_WAITING:
		s->waiting_by[p->reason]--;
		p->reason = GS_WAIT_NONE;
		if (p->wait_node) {
			struct gs_sched__node *n = p->wait_node;
			gs_sched__list_del(&p->qlink);
			n->n_waiters--;
			p->wait_node = NULL;
			gs_sched__node_gc(s, n);
		}
		break;
	case GS_POD_QUEUED:
		gs_sched__list_del(&p->qlink);
		break;
	case GS_POD_BACKOFF:
		heap_remove(s, p);
		break;
	default:
		break;
	}
}

static int in_report_queue(const struct gs_sched__pod *p)
{
	return p->rlink.next != &p->rlink;
}

/* Makes p wait for reason r (on node slot n for NODE_* reasons), noting a report if it is news. */
static void set_waiting(struct gs_sched *s, struct gs_sched__pod *p, enum gs_wait_reason r,
			struct gs_sched__node *n, const char *msg)
{
	if (p->state == GS_POD_WAITING && p->wait_node == n) {
		s->waiting_by[p->reason]--;
	} else {
		gs_sched__detach(s, p);
		gs_sched__set_state(s, p, GS_POD_WAITING);
		if (n) {
			gs_sched__list_add_tail(&n->waiters, &p->qlink);
			n->n_waiters++;
			p->wait_node = n;
		}
	}
	if (p->reason != r || !p->msg || strcmp(p->msg, msg) != 0)
		gs_log_debug("pod %s/%s: waiting (%s): %s", p->ns, p->name, gs_wait_reason_name(r), msg);
	p->reason = r;
	s->waiting_by[r]++;
	if (!p->msg || strcmp(p->msg, msg) != 0) {
		free(p->msg);
		p->msg = gs_sched__xstrdup(msg);
	}
	if (!in_report_queue(p) &&
	    (p->reported_reason != r || !p->reported || strcmp(p->reported, p->msg) != 0))
		gs_sched__list_add_tail(&s->reportq, &p->rlink);
}

static void set_queued(struct gs_sched *s, struct gs_sched__pod *p)
{
	if (p->state == GS_POD_QUEUED)
		return; /* keeps its place in the queue */
	gs_sched__detach(s, p);
	gs_sched__set_state(s, p, GS_POD_QUEUED);
	gs_sched__list_add_tail(&s->bindq, &p->qlink);
	free(p->msg);
	p->msg = NULL;
	gs_log_debug("pod %s/%s: queued for node %s devices %s", p->ns, p->name, p->entry->node,
		     p->entry->devices);
}

void gs_sched__place(struct gs_sched *s, struct gs_sched__pod *p)
{
	struct gs_sched__node *n;
	enum gs_wait_reason r;
	char msg[MSG_MAX];
	const char *what = "";

	if (p->intrinsic != GS_WAIT_NONE) {
		set_waiting(s, p, p->intrinsic, NULL, p->imsg);
		return;
	}
	n = gs_hmap_get_str(&s->nodes, p->entry->node);
	r = gs_sched__node_block(n);
	/* GPU indexes against the node's advertised count; UUIDs, and nodes with no count, unchecked. */
	if (r == GS_WAIT_NONE && n->gpus >= 0 && p->entry->max_index >= n->gpus) {
		snprintf(msg, sizeof(msg),
			 "node \"%s\" named by %s line %d for index %ld advertises %lld nvidia.com/gpu, "
			 "so it has no device %ld",
			 n->name, s->cfg.annotation, p->entry->line, p->index, (long long)n->gpus, p->entry->max_index);
		set_waiting(s, p, GS_WAIT_NODE_DEVICES, n, msg);
		return;
	}
	if (r == GS_WAIT_NONE) {
		set_queued(s, p);
		return;
	}
	if (!n)
		n = gs_sched__node_slot(s, p->entry->node);
	switch (r) {
	case GS_WAIT_NODE_MISSING:
		what = "does not exist";
		break;
	case GS_WAIT_NODE_NOT_READY:
		what = "is not Ready";
		break;
	default:
		what = "is cordoned (spec.unschedulable)";
		break;
	}
	snprintf(msg, sizeof(msg), "node \"%s\" named by %s line %d for index %ld %s", n->name,
		 s->cfg.annotation, p->entry->line, p->index, what);
	set_waiting(s, p, r, n, msg);
}

/* ---- the pod's own inputs ---------------------------------------------------------------------- */

/* Writes s quoted, escaped and cut short: label and annotation values are user text. */
static const char *quote(char *out, size_t size, const char *str)
{
	size_t o = 0, i;

	out[o++] = '"';
	for (i = 0; str[i] && i < 40 && o + 6 < size; i++) {
		unsigned char c = (unsigned char)str[i];
		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o++] = '"';
	if (str[i] && o + 4 < size) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return out;
}

static void no_index_msg(char *msg, size_t size, const struct gs_pod_obj *o)
{
	char ql[64], qj[64], lab[160], job[160];

	if (o->label_pod_index)
		snprintf(lab, sizeof(lab), "label apps.kubernetes.io/pod-index is %s, not an index",
			 quote(ql, sizeof(ql), o->label_pod_index));
	else
		snprintf(lab, sizeof(lab), "no label apps.kubernetes.io/pod-index");
	if (o->job_index)
		snprintf(job, sizeof(job), "annotation batch.kubernetes.io/job-completion-index is %s, not an index",
			 quote(qj, sizeof(qj), o->job_index));
	else
		snprintf(job, sizeof(job), "no annotation batch.kubernetes.io/job-completion-index");
	snprintf(msg, size, "cannot tell the pod's index: %s, %s, and the name does not end in -N", lab, job);
}

/* NONE, or NOT_MUTATED with msg, from what the containers say about CUDA_VISIBLE_DEVICES. */
static enum gs_wait_reason cuda_check(const struct gs_sched *s, const struct gs_pod_obj *o,
				      const struct gs_map_entry *e, char *msg, size_t size)
{
	char q[64];

	switch (o->cuda_state) {
	case GS_CUDA_SAME:
		if (o->cuda_value && strcmp(o->cuda_value, e->devices) == 0)
			return GS_WAIT_NONE;
		snprintf(msg, size,
			 "containers have CUDA_VISIBLE_DEVICES=%s but %s line %d gives %s for index %ld "
			 "(the pod was mutated for another map)",
			 o->cuda_value ? quote(q, sizeof(q), o->cuda_value) : "\"\"", s->cfg.annotation, e->line,
			 e->devices, e->index);
		break;
	case GS_CUDA_MIXED:
		snprintf(msg, size,
			 "containers disagree on CUDA_VISIBLE_DEVICES, want CUDA_VISIBLE_DEVICES=%s in every "
			 "container (the admission webhook did not mutate this pod)",
			 e->devices);
		break;
	default:
		snprintf(msg, size,
			 "containers lack CUDA_VISIBLE_DEVICES=%s (the admission webhook did not mutate this pod)",
			 e->devices);
		break;
	}
	return GS_WAIT_NOT_MUTATED;
}

void gs_sched__pod_inputs(struct gs_sched *s, struct gs_sched__pod *p, const struct gs_pod_obj *o)
{
	const struct gs_map_entry *e = NULL;
	const struct gs_map_error *err = NULL;
	enum gs_wait_reason r = GS_WAIT_NONE;
	enum gs_index_source src;
	struct gs_map *m = NULL;
	char msg[MSG_MAX];
	long index;
	int rc;

	if (gs_pod_index(o->label_pod_index, o->job_index, o->name, &index, &src) < 0)
		index = -1;
	if (index != p->index || src != p->index_source) {
		if (index >= 0)
			gs_log_debug("pod %s/%s: index %ld from %s", p->ns, p->name, index,
				     gs_index_source_name(src));
		else
			gs_log_debug("pod %s/%s: no index", p->ns, p->name);
	}

	if (!o->map_text) {
		r = GS_WAIT_NO_MAP;
		snprintf(msg, sizeof(msg), "pod has no %s annotation", s->cfg.annotation);
	} else {
		rc = gs_map_cache_get(s->maps, o->map_text, strlen(o->map_text), &m, &err);
		if (rc == -ENOMEM) {
			gs_log_error("sched: out of memory");
			abort();
		}
		if (rc < 0) {
			r = GS_WAIT_MAP_INVALID;
			snprintf(msg, sizeof(msg), err->line ? "%s %s" : "%s: %s", s->cfg.annotation, err->msg);
		}
	}
	if (r == GS_WAIT_NONE && index < 0) {
		r = GS_WAIT_NO_INDEX;
		no_index_msg(msg, sizeof(msg), o);
	}
	if (r == GS_WAIT_NONE && !(e = gs_map_lookup(m, index))) {
		r = GS_WAIT_NO_ENTRY;
		size_t n = gs_map_count(m);
		snprintf(msg, sizeof(msg), "%s has no entry for index %ld (index from %s; the map has %zu %s)",
			 s->cfg.annotation, index, gs_index_source_name(src), n, n == 1 ? "entry" : "entries");
	}
	if (r == GS_WAIT_NONE && s->cfg.check_env)
		r = cuda_check(s, o, e, msg, sizeof(msg));

	gs_map_unref(p->map);
	p->map = m;
	p->entry = e;
	p->intrinsic = r;
	free(p->imsg);
	p->imsg = r != GS_WAIT_NONE ? gs_sched__xstrdup(msg) : NULL;
	p->index = index;
	p->index_source = src;
	p->recreate_ok = o->owner_kind &&
			 (strcmp(o->owner_kind, "StatefulSet") == 0 || strcmp(o->owner_kind, "Job") == 0);
	p->created_ms = o->created_ms;
}

/* ---- pulls ------------------------------------------------------------------------------------- */

int gs_sched_next_bind(struct gs_sched *s, int64_t now_ms, struct gs_bind_decision *out)
{
	/* Due retries join the queue's tail (or wait, if their node went away meanwhile). */
	while (s->heap_len && s->heap[0]->due_ms <= now_ms)
		gs_sched__place(s, s->heap[0]);

	while (!gs_sched__list_empty(&s->bindq)) {
		struct gs_sched__pod *p = GS_SCHED__CONTAINER(s->bindq.next, struct gs_sched__pod, qlink);
		gs_sched__place(s, p); /* the node as it is now */
		if (p->state != GS_POD_QUEUED)
			continue;
		gs_sched__list_del(&p->qlink);
		gs_sched__set_state(s, p, GS_POD_BINDING);
		p->attempts++;
		*out = (struct gs_bind_decision){
			.uid = p->uid,
			.ns = p->ns,
			.name = p->name,
			.node = p->entry->node,
			.devices = p->entry->devices,
			.n_devices = p->entry->n_devices,
			.index = p->index,
			.index_source = p->index_source,
			.map_line = p->entry->line,
			.created_ms = p->created_ms,
			.attempt = p->attempts,
		};
		gs_log_debug("pod %s/%s: bind to %s devices %s (index %ld from %s, attempt %u)", p->ns, p->name,
			     out->node, out->devices, p->index, gs_index_source_name(p->index_source),
			     p->attempts);
		return 1;
	}
	return 0;
}

/* splitmix64: small, fast, and any seed (even 0) gives a good sequence. */
static uint64_t rng_next(struct gs_sched *s)
{
	uint64_t z = (s->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The delay before retry number `failures` (1-based): uniform in [ceiling/2, ceiling], the ceiling
 * doubling from backoff_min_ms up to backoff_max_ms. */
static int64_t backoff_delay(struct gs_sched *s, unsigned failures)
{
	int64_t ceiling = s->cfg.backoff_min_ms;
	uint64_t half;

	for (unsigned i = 1; i < failures && ceiling < s->cfg.backoff_max_ms; i++)
		ceiling *= 2;
	if (ceiling > s->cfg.backoff_max_ms)
		ceiling = s->cfg.backoff_max_ms;
	half = (uint64_t)ceiling / 2;
	return (int64_t)((uint64_t)ceiling - half + rng_next(s) % (half + 1));
}

int gs_sched_bind_done(struct gs_sched *s, const char *uid, enum gs_bind_result res, int64_t now_ms)
{
	struct gs_sched__pod *p = gs_hmap_get_str(&s->pods, uid);

	if (!p || p->state != GS_POD_BINDING)
		return -ENOENT;
	switch (res) {
	case GS_BIND_OK:
		gs_sched__set_state(s, p, GS_POD_BOUND);
		s->binds_ok++;
		break;
	case GS_BIND_GONE:
		gs_sched__set_state(s, p, GS_POD_GONE);
		s->binds_gone++;
		gs_log_debug("pod %s/%s: binding gone, forgotten until it changes", p->ns, p->name);
		break;
	case GS_BIND_RETRY:
		p->due_ms = now_ms + backoff_delay(s, p->attempts);
		gs_sched__set_state(s, p, GS_POD_BACKOFF);
		heap_push(s, p);
		s->binds_retry++;
		gs_log_debug("pod %s/%s: binding failed, retry at %lld", p->ns, p->name, (long long)p->due_ms);
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

int64_t gs_sched_next_deadline(const struct gs_sched *s)
{
	return s->heap_len ? s->heap[0]->due_ms : -1;
}

int gs_sched_next_report(struct gs_sched *s, int64_t now_ms, struct gs_report *out)
{
	while (!gs_sched__list_empty(&s->reportq)) {
		struct gs_sched__pod *p = GS_SCHED__CONTAINER(s->reportq.next, struct gs_sched__pod, rlink);
		gs_sched__list_del(&p->rlink);
		if (p->state != GS_POD_WAITING)
			continue;
		if (p->reported && p->reported_reason == p->reason && strcmp(p->reported, p->msg) == 0)
			continue;
		free(p->reported);
		p->reported = gs_sched__xstrdup(p->msg);
		p->reported_reason = p->reason;
		*out = (struct gs_report){
			.uid = p->uid,
			.ns = p->ns,
			.name = p->name,
			.reason = p->reason,
			.message = p->msg,
			.node = p->wait_node ? p->wait_node->name : NULL,
			.index = p->index,
			.recreate = p->reason == GS_WAIT_NOT_MUTATED && s->cfg.recreate_unmutated && p->recreate_ok,
		};
		s->reports++;
		return 1;
	}
	return 0;
}
