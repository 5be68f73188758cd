/*
 * sched_use.c: what the pods on a node take from it. See sched_use.h, sched_int.h (struct
 * gs_sched__use) and docs/sched.md ("Node admission checks", "The device ledger").
 *
 * Every non-terminal pod with spec.nodeName, whatever its scheduler, and every Binding of ours in
 * flight is one use: its requests are added to the node's running totals, its host ports to the
 * node's port table, its devices to the node's ledger. A check is then O(resources the pod asks for +
 * ports of the node + owners of each device), never a scan of the node's pods; removing a use marks the
 * node dirty so the pods waiting for it are placed again once, at the next pull.
 */
#include "sched/sched_use.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/num.h"
#include "sched/checks.h"
#include "sched/sched_agent.h"
#include "sched/sched_ledger.h"
#include "sched/sched_node.h"

/* ---- resources ----------------------------------------------------------------------------------- */

/* kube-scheduler's rule: an ignored name, or a name "GROUP/..." of an ignored group; never hugepages. */
static int res_ignored(const struct gs_sched_config *cfg, const char *name)
{
	const char *slash = strchr(name, '/');

	if (strncmp(name, "hugepages-", 10) == 0)
		return 0;
	return gs_sched__listed(cfg->ignored_resources, name, strlen(name)) ||
	       (slash && gs_sched__listed(cfg->ignored_resource_groups, name, (size_t)(slash - name)));
}

uint32_t gs_sched__res_id(struct gs_sched *s, const char *name)
{
	uintptr_t v = (uintptr_t)gs_hmap_get_str(&s->res_ids, name);
	char **names;

	if (v)
		return (uint32_t)(v - 1);
	names = gs_xreallocarray(s->res_names, s->n_res + 1, sizeof(*names));
	s->res_names = names;
	s->res_ignored = gs_xreallocarray(s->res_ignored, s->n_res + 1, 1);
	s->res_ignored[s->n_res] = (unsigned char)res_ignored(&s->cfg, name);
	s->res_gpu = gs_xreallocarray(s->res_gpu, s->n_res + 1, 1);
	s->res_gpu[s->n_res] = (unsigned char)gs_inuse_resource_match(s->cfg.gpu_resources, name);
	names[s->n_res] = gs_xstrdup(name);
	gs_sched__hmap_put(&s->res_ids, names[s->n_res], (void *)(uintptr_t)(s->n_res + 1));
	return s->n_res++;
}

void gs_sched__req_from(struct gs_sched *s, struct gs_sched__req *out, const struct gs_resources *r)
{
	memset(out, 0, sizeof(*out));
	out->cpu = r->milli_cpu;
	out->mem = r->memory;
	out->eph = r->ephemeral;
	if (r->n_ext <= 0)
		return;
	out->ext = gs_xmalloc((size_t)r->n_ext * sizeof(*out->ext));
	for (int i = 0; i < r->n_ext; i++) {
		if (r->ext[i].value <= 0)
			continue;
		out->ext[out->n_ext].id = gs_sched__res_id(s, r->ext[i].name);
		out->ext[out->n_ext++].v = r->ext[i].value;
	}
}

void gs_sched__req_free(struct gs_sched__req *r)
{
	free(r->ext);
	memset(r, 0, sizeof(*r));
}

int64_t gs_sched__req_ext(const struct gs_sched__req *r, uint32_t id)
{
	for (uint32_t i = 0; i < r->n_ext; i++)
		if (r->ext[i].id == id)
			return r->ext[i].v;
	return 0;
}

/* node->used.ext is indexed by resource id (not a pair list) and grows as ids are made. */
static int64_t *used_ext_slot(struct gs_sched *s, struct gs_sched__node *n, uint32_t id)
{
	if (id >= n->used.n_ext) {
		uint32_t len = s->n_res > id ? s->n_res : id + 1;
		struct gs_sched__ext *e = gs_xreallocarray(n->used.ext, len, sizeof(*e));
		for (uint32_t i = n->used.n_ext; i < len; i++)
			e[i] = (struct gs_sched__ext){.id = i, .v = 0};
		n->used.ext = e;
		n->used.n_ext = len;
	}
	return &n->used.ext[id].v;
}

static void totals_add(struct gs_sched *s, struct gs_sched__node *n, const struct gs_sched__req *r, int sign)
{
	n->used.cpu = gs_num_sat_add(n->used.cpu, sign * r->cpu);
	n->used.mem = gs_num_sat_add(n->used.mem, sign * r->mem);
	n->used.eph = gs_num_sat_add(n->used.eph, sign * r->eph);
	for (uint32_t i = 0; i < r->n_ext; i++) {
		int64_t *v = used_ext_slot(s, n, r->ext[i].id);
		*v = gs_num_sat_add(*v, sign * r->ext[i].v);
	}
	n->used_pods += sign;
}

/* ---- host ports ---------------------------------------------------------------------------------- */

struct gs_sched__port *gs_sched__ports_from(const struct gs_pod_obj *o, size_t *n)
{
	struct gs_sched__port *p;

	*n = 0;
	if (o->n_host_ports <= 0)
		return NULL;
	p = gs_xcalloc((size_t)o->n_host_ports, sizeof(*p));
	for (int i = 0; i < o->n_host_ports; i++) {
		p[i].port = o->host_ports[i].port;
		p[i].proto = o->host_ports[i].proto ? o->host_ports[i].proto : 'T';
		p[i].ip = o->host_ports[i].host_ip ? gs_xstrdup(o->host_ports[i].host_ip) : NULL;
	}
	*n = (size_t)o->n_host_ports;
	return p;
}

void gs_sched__ports_free(struct gs_sched__port *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(p[i].ip);
	free(p);
}

static int same_ip(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* kube-scheduler's HostPortInfo: the same protocol and port conflict when either side listens on every
 * address or both on the same one. */
static int ports_conflict(const struct gs_sched__port *a, const struct gs_sched__port *b)
{
	return a->port == b->port && a->proto == b->proto && (!a->ip || !b->ip || strcmp(a->ip, b->ip) == 0);
}

static const char *proto_name(char p)
{
	return p == 'U' ? "UDP" : p == 'S' ? "SCTP" : "TCP";
}

/* The node's entry of port p (same port, protocol and address), or NULL. */
static struct gs_sched__port *node_port(struct gs_sched__node *n, const struct gs_sched__port *p)
{
	for (size_t i = 0; i < n->n_ports; i++) {
		struct gs_sched__port *q = &n->ports[i];
		if (q->port == p->port && q->proto == p->proto && same_ip(q->ip, p->ip))
			return q;
	}
	return NULL;
}

static void node_ports_add(struct gs_sched__node *n, const struct gs_sched__port *p)
{
	struct gs_sched__port *q = node_port(n, p);

	if (q) {
		q->count++;
		return;
	}
	if (n->n_ports == n->cap_ports) {
		size_t cap = n->cap_ports ? n->cap_ports * 2 : 4;
		struct gs_sched__port *v = gs_xreallocarray(n->ports, cap, sizeof(*v));
		n->ports = v;
		n->cap_ports = cap;
	}
	n->ports[n->n_ports++] = (struct gs_sched__port){
		.port = p->port, .proto = p->proto, .ip = p->ip ? gs_xstrdup(p->ip) : NULL, .count = 1};
}

static void node_ports_del(struct gs_sched__node *n, const struct gs_sched__port *p)
{
	struct gs_sched__port *q = node_port(n, p);

	if (q && --q->count == 0) {
		free(q->ip);
		*q = n->ports[--n->n_ports];
	}
}

/* ---- the devices of a use ------------------------------------------------------------------------ */

static size_t count_devs(const char *devices)
{
	size_t n = 0;
	if (!devices || !*devices)
		return 0;
	for (const char *p = devices; *p; p++)
		n += *p == ',';
	return n + 1;
}

/* The GPU resources' request of a use that holds no device in the ledger (sched_int.h, plugin_gpus). */
static int64_t plugin_request(const struct gs_sched *s, const struct gs_sched__use *u)
{
	return u->n_holds ? 0 : gs_sched__plugin_request(s, &u->req);
}

/* ---- uses ---------------------------------------------------------------------------------------- */

/* Copies str to *at and advances it. */
static char *put_str(char **at, const char *str, size_t len)
{
	char *d = memcpy(*at, str, len);
	d[len] = '\0';
	*at += len + 1;
	return d;
}

static void use_free(struct gs_sched__use *u)
{
	gs_sched__ports_free(u->ports, u->n_ports);
	free(u->ignored);
	free(u->labels); /* one block: the pairs, then their strings */
	free(u);         /* holds, ext and strings live in the same block */
}

/* 1 when u's labels are l[0..n), in that order. */
static int labels_same(const struct gs_sched__use *u, const struct gs_label *l, int n)
{
	if (u->n_labels != n)
		return 0;
	for (int i = 0; i < n; i++)
		if (strcmp(u->labels[i].key, l[i].key) != 0 ||
		    strcmp(u->labels[i].value, l[i].value ? l[i].value : "") != 0)
			return 0;
	return 1;
}

void gs_sched__use_labels(struct gs_sched__use *u, const struct gs_label *l, int n)
{
	size_t len = 0;
	char *at;

	if (labels_same(u, l, n))
		return;
	free(u->labels);
	u->labels = NULL;
	u->n_labels = 0;
	if (n <= 0)
		return;
	for (int i = 0; i < n; i++)
		len += strlen(l[i].key) + 1 + (l[i].value ? strlen(l[i].value) : 0) + 1;
	u->labels = gs_xmalloc((size_t)n * sizeof(*u->labels) + len);
	at = (char *)(u->labels + n);
	for (int i = 0; i < n; i++) {
		const char *v = l[i].value ? l[i].value : "";
		u->labels[i].key = put_str(&at, l[i].key, strlen(l[i].key));
		u->labels[i].value = put_str(&at, v, strlen(v));
	}
	u->n_labels = n;
}


struct gs_sched__use *gs_sched__use_add(struct gs_sched *s, const char *uid, struct gs_sched__node *node,
					const struct gs_sched__req *req, const struct gs_sched__port *ports,
					size_t n_ports, const char *devices, const char *owner, int shared,
					const char *key)
{
	size_t nd = count_devs(devices), ul = strlen(uid), ol = 0, kl = 0, size;
	struct gs_sched__use *u;
	const char *p;
	char *at;

	gs_sched__use_remove(s, uid);
	/* Most pods hold no device: owner only with holds. One block for all but the ports. */
	if (nd) {
		owner = owner ? owner : uid;
		ol = strlen(owner);
	}
	key = key ? key : uid;
	kl = strlen(key);
	size = sizeof(*u) + nd * sizeof(struct gs_sched__hold) + req->n_ext * sizeof(struct gs_sched__ext) + ul + 1 +
	       (nd ? ol + 1 : 0) + kl + 1;
	u = gs_xcalloc(1, size);
	at = (char *)(u + 1);
	u->holds = nd ? (struct gs_sched__hold *)(void *)at : NULL;
	at += nd * sizeof(struct gs_sched__hold);
	u->node = node;
	u->req = *req;
	u->req.ext = req->n_ext ? memcpy(at, req->ext, req->n_ext * sizeof(*req->ext)) : NULL;
	at += req->n_ext * sizeof(struct gs_sched__ext);
	u->uid = put_str(&at, uid, ul);
	if (nd)
		u->owner = put_str(&at, owner, ol);
	u->key = put_str(&at, key, kl);
	GS_ASSERT(at <= (char *)u + size);
	if (n_ports) {
		u->ports = gs_xcalloc(n_ports, sizeof(*u->ports));
		for (size_t i = 0; i < n_ports; i++) {
			u->ports[i] = ports[i];
			u->ports[i].ip = ports[i].ip ? gs_xstrdup(ports[i].ip) : NULL;
			node_ports_add(node, &u->ports[i]);
		}
		u->n_ports = n_ports;
	}
	totals_add(s, node, &u->req, +1);
	node->n_uses++;
	gs_list_insert_tail(&node->uses, &u->nlink);
	u->shared = shared;
	for (p = devices; nd && *p && u->n_holds < nd;) {
		size_t len;
		const char *d = p;
		p = gs_sched__next_dev(p, &len);
		if (len) {
			u->holds[u->n_holds].use = u;
			gs_sched__ledger_add(s, node, &u->holds[u->n_holds++], d, len, u->owner, shared);
		}
	}
	node->plugin_gpus = gs_num_sat_add(node->plugin_gpus, plugin_request(s, u));
	gs_sched__hmap_put(&s->uses, u->uid, u);
	if (u->req.n_ext)
		gs_sched__hmap_put(&node->keyed, u->key, u); /* the newest pod of that name */
	if (node->agent.fresh && (u->n_holds || u->req.n_ext))
		gs_sched__agent_conflicts(s, node);
	return u;
}

void gs_sched__use_ignore(struct gs_sched__use *u, const char *devices, const char *why, const char *key)
{
	size_t dl = strlen(devices), kl = strlen(key);

	free(u->ignored);
	u->ignored = gs_xmalloc(dl + 1 + kl + 1);
	memcpy(u->ignored, devices, dl + 1);
	u->ignored_key = memcpy(u->ignored + dl + 1, key, kl + 1);
	u->ignored_why = why;
}

void gs_sched__node_mark_dirty(struct gs_sched *s, struct gs_sched__node *n)
{
	/* Its waiters, and those whose map name resolves to it through its alias label, may fit now. */
	if (!gs_list_linked(&n->dirty) && (n->n_waiters || gs_sched__alias_waiters(s, n)))
		gs_list_insert_tail(&s->dirty, &n->dirty);
}

int gs_sched__use_remove(struct gs_sched *s, const char *uid)
{
	struct gs_sched__node *n = gs_sched__use_take(s, uid);

	if (!n)
		return 0;
	gs_sched__node_mark_dirty(s, n);
	gs_sched__node_gc(s, n);
	return 1;
}

struct gs_sched__node *gs_sched__use_take(struct gs_sched *s, const char *uid)
{
	struct gs_sched__use *u = gs_hmap_get_str(&s->uses, uid);
	struct gs_sched__node *n;

	if (!u)
		return NULL;
	n = u->node;
	gs_hmap_del_str(&s->uses, u->uid, NULL);
	totals_add(s, n, &u->req, -1);
	n->plugin_gpus -= plugin_request(s, u);
	if (u->req.n_ext && gs_hmap_get_str(&n->keyed, u->key) == u)
		gs_hmap_del_str(&n->keyed, u->key, NULL);
	for (size_t i = 0; i < u->n_ports; i++)
		node_ports_del(n, &u->ports[i]);
	for (size_t i = 0; i < u->n_holds; i++)
		gs_sched__ledger_del(s, n, &u->holds[i]);
	GS_ASSERT(n->n_uses > 0 && !u->hidden);
	n->n_uses--;
	gs_sched__use_unnominate(s, u);
	gs_list_remove(&u->nlink);
	int recheck = n->agent.fresh && (u->n_holds || u->req.n_ext);
	use_free(u);
	if (recheck)
		gs_sched__agent_conflicts(s, n); /* a conflict that ended may be reported again if it comes back */
	return n;
}

void gs_sched__pod_reserve(struct gs_sched *s, const struct gs_sched__pod *p, struct gs_sched__node *n)
{
	static const struct gs_sched__req none;
	const struct gs_sched__spec *sp = p->spec;

	struct gs_sched__use *u =
		gs_sched__use_add(s, p->uid, n, sp ? &sp->req : &none, sp ? sp->ports : NULL, sp ? sp->n_ports : 0,
				  p->entry->devices, p->owner, p->shared, p->key);

	/* the pod's own: a partial record of it seen bound keeps them (sched.c, use_from_obj) */
	u->priority = p->priority;
	u->created_ms = p->created_ms;
}

void gs_sched__use_unnominate(struct gs_sched *s, struct gs_sched__use *u)
{
	if (!u->nominated)
		return;
	GS_ASSERT(u->node->n_nominated > 0 && s->n_nominated > 0);
	u->nominated = 0;
	u->node->n_nominated--;
	s->n_nominated--;
}

void gs_sched__pod_nominate(struct gs_sched *s, struct gs_sched__pod *p, struct gs_sched__node *n)
{
	struct gs_sched__use *u;

	gs_sched__pod_reserve(s, p, n);
	u = gs_hmap_get_str(&s->uses, p->uid);
	u->nominated = 1;
	n->n_nominated++;
	s->n_nominated++;
	free(p->status_nominated); /* taken, or replaced by the engine's own */
	p->status_nominated = NULL;
}

void gs_sched__use_hide(struct gs_sched *s, struct gs_sched__use *u, int hide)
{
	struct gs_sched__node *n = u->node;
	int sign = hide ? -1 : 1;

	GS_ASSERT(!u->hidden == !!hide);
	u->hidden = (unsigned char)!!hide;
	totals_add(s, n, &u->req, sign);
	n->plugin_gpus += sign * plugin_request(s, u);
	for (size_t i = 0; i < u->n_ports; i++) {
		struct gs_sched__port *q = node_port(n, &u->ports[i]);
		GS_ASSERT(q); /* counted there while the use exists */
		q->hidden += (size_t)(hide ? 1 : -1);
	}
	for (size_t i = 0; i < u->n_holds; i++) {
		struct gs_sched__dev *d = u->holds[i].dev;
		if (hide && ++d->n_hidden == d->n)
			n->hidden_devs++;
		else if (!hide && d->n_hidden-- == d->n)
			n->hidden_devs--;
	}
}

void gs_sched__use_free(struct gs_sched__use *u)
{
	use_free(u);
}

void gs_sched__node_usage_free(struct gs_sched__node *n)
{
	gs_sched__ledger_free(n);
	gs_sched__req_free(&n->used);
	gs_sched__ports_free(n->ports, n->n_ports);
	n->ports = NULL;
	n->n_ports = n->cap_ports = 0;
}

/* ---- the fit ------------------------------------------------------------------------------------- */

/* "Insufficient cpu: requests 64, 1.95 free of 2 allocatable" */
static int insufficient(char *msg, size_t size, const char *what, int64_t want, int64_t used, int64_t alloc,
			enum gs_qty_kind k)
{
	char a[32], b[32], c[32];
	int64_t free_ = alloc - used;

	if (want <= 0 || (used <= alloc && want <= free_))
		return 0;
	snprintf(msg, size, "Insufficient %s: requests %s, %s free of %s allocatable", what,
		 gs_checks_qty_format(a, sizeof(a), want, k),
		 gs_checks_qty_format(b, sizeof(b), free_ > 0 ? free_ : 0, k),
		 gs_checks_qty_format(c, sizeof(c), alloc, k));
	return 1;
}

static int fit_resources(struct gs_sched *s, const struct gs_sched__req *r, struct gs_sched__node *n, char *msg,
			 size_t size)
{
	if (n->obj.alloc.pods > 0 && n->used_pods + 1 > n->obj.alloc.pods) {
		snprintf(msg, size, "Insufficient pods: %" PRId64 " of %" PRId64 " allocatable pods are in use",
			 n->used_pods, n->obj.alloc.pods);
		return 0;
	}
	if (insufficient(msg, size, "cpu", r->cpu, n->used.cpu, n->alloc.cpu, GS_QTY_CPU) ||
	    insufficient(msg, size, "memory", r->mem, n->used.mem, n->alloc.mem, GS_QTY_BYTES) ||
	    insufficient(msg, size, "ephemeral-storage", r->eph, n->used.eph, n->alloc.eph, GS_QTY_BYTES))
		return 0;
	for (uint32_t i = 0; i < r->n_ext; i++) {
		uint32_t id = r->ext[i].id;
		int64_t used = id < n->used.n_ext ? n->used.ext[id].v : 0;
		if (s->res_ignored[id])
			continue;
		if (insufficient(msg, size, s->res_names[id], r->ext[i].v, used, gs_sched__req_ext(&n->alloc, id),
				 GS_QTY_COUNT))
			return 0;
	}
	return 1;
}

enum gs_wait_reason gs_sched__fit_ports(const struct gs_sched__pod *p, const struct gs_sched__node *n, char *msg,
					size_t size)
{
	const struct gs_sched__spec *sp = p->spec;

	for (size_t i = 0; sp && i < sp->n_ports; i++) {
		for (size_t j = 0; j < n->n_ports; j++) {
			if (n->ports[j].count > n->ports[j].hidden && ports_conflict(&sp->ports[i], &n->ports[j])) {
				snprintf(msg, size, "host port %s %d%s%s is already in use on node \"%s\"",
					 proto_name(sp->ports[i].proto), sp->ports[i].port,
					 sp->ports[i].ip ? " on " : "", sp->ports[i].ip ? sp->ports[i].ip : "",
					 n->name);
				return GS_WAIT_HOST_PORT;
			}
		}
	}
	return GS_WAIT_NONE;
}

enum gs_wait_reason gs_sched__fit_resources(struct gs_sched *s, const struct gs_sched__pod *p, struct gs_sched__node *n,
					    char *msg, size_t size)
{
	static const struct gs_sched__req none;

	if (fit_resources(s, p->spec ? &p->spec->req : &none, n, msg, size))
		return GS_WAIT_NONE;
	size_t l = strlen(msg);
	snprintf(msg + l, size - l, " on node \"%s\"", n->name);
	l = strlen(msg);
	if (n->n_reserved)
		snprintf(msg + l, size - l, " (%zu of its pods %s reserved for all-or-nothing gangs still gathering)",
			 n->n_reserved, n->n_reserved == 1 ? "is" : "are");
	l = strlen(msg);
	if (n->n_leaving)
		snprintf(msg + l, size - l, " (%zu gang placeholder pod%s being deleted still count%s there)",
			 n->n_leaving, n->n_leaving == 1 ? "" : "s", n->n_leaving == 1 ? "s" : "");
	return GS_WAIT_INSUFFICIENT_RESOURCE;
}


/* A device of the ledger, by one of its names, that pod p may not take (gs_sched__agent_related's fn). */
struct holder_find {
	const struct gs_sched__node *n;
	const struct gs_sched__pod *p;
	int other;      /* found by another name than the pod's own, copied into name */
	char name[128]; /* (the caller's may not outlive the call: an index made for it) */
};

static const void *held_by(const char *name, size_t len, void *ud)
{
	struct holder_find *hb = ud;
	const struct gs_sched__dev *dv = gs_hmap_get(&hb->n->ledger, name, len);
	const struct gs_sched__hold *h =
		dv ? gs_sched__dev_conflict(dv, hb->p->owner ? hb->p->owner : hb->p->uid, hb->p->shared) : NULL;

	if (h && hb->other)
		snprintf(hb->name, sizeof(hb->name), "%.*s", (int)len, name);
	return h;
}

static int is_index_name(const char *d, size_t len)
{
	return len > 0 && d[0] >= '0' && d[0] <= '9';
}

enum gs_wait_reason gs_sched__fit_devices(const struct gs_sched *s, const struct gs_sched__pod *p,
					  const struct gs_sched__node *n, char *msg, size_t size)
{
	if (s->cfg.device_sharing_any)
		return GS_WAIT_NONE;
	for (const char *q = p->entry->devices; *q;) {
		size_t len;
		const char *d = q;
		struct holder_find hb = {.n = n, .p = p};
		q = gs_sched__next_dev(q, &len);
		/* by its own name, else by another the agent's data gives it (its index or ID; a MIG instance and
		 * its GPU hold each other) */
		const struct gs_sched__hold *h = held_by(d, len, &hb);
		if (!h && (hb.other = 1))
			h = gs_sched__agent_related(n, d, len, held_by, &hb);
		if (!h)
			continue;
		const struct gs_sched__pod *hp = gs_hmap_get_str(&s->pods, h->use->uid);
		const char *who = gs_sched__holder_shown(h->use->key, p->key);
		char through[128] = "";
		if (hb.other) { /* by its index, one of its MIG instances, or its ID */
			size_t hl = strlen(hb.name);
			if (is_index_name(hb.name, hl))
				snprintf(through, sizeof(through), " through its GPU %s", hb.name);
			else if (gs_inuse_mig_parent(n->agent.data, hb.name, hl) >= 0)
				snprintf(through, sizeof(through), " through its MIG instance %s", hb.name);
			else
				snprintf(through, sizeof(through), " (as %s)", hb.name);
		}
		snprintf(msg, size, "%s %s%.*s is held by %s%s%s%s", n->name,
			 is_index_name(d, len) ? "GPU " : "device ", (int)len, d, who, through,
			 who == h->use->key ? ", a pod of another owner" : "",
			 hp && hp->reserved ? " (reserved while its all-or-nothing gang gathers)" : "");
		return GS_WAIT_DEVICE_BUSY;
	}
	return gs_sched__fit_plugin(s, p, n, msg, size);
}

int gs_sched__fit_reason(enum gs_wait_reason r)
{
	return r == GS_WAIT_HOST_PORT || r == GS_WAIT_INSUFFICIENT_RESOURCE || r == GS_WAIT_DEVICE_BUSY;
}

void gs_sched__nominations_hide(struct gs_sched *s, const struct gs_sched__pod *p, struct gs_sched__node *n, int hide)
{
	const struct gs_list *l;
	size_t left = n->n_nominated;

	GS_LIST_FOREACH(l, &n->uses) {
		struct gs_sched__use *u = GS_CONTAINER_OF(l, struct gs_sched__use, nlink);
		if (!left)
			break;
		if (!u->nominated)
			continue;
		left--;
		if (u->priority < p->priority || strcmp(u->uid, p->uid) == 0)
			gs_sched__use_hide(s, u, hide);
	}
}

enum gs_wait_reason gs_sched__fit(struct gs_sched *s, const struct gs_sched__pod *p, struct gs_sched__node *n,
				  char *msg, size_t size)
{
	enum gs_wait_reason r;

	if (n->n_nominated)
		gs_sched__nominations_hide(s, p, n, 1);
	r = gs_sched__fit_ports(p, n, msg, size);
	if (r == GS_WAIT_NONE)
		r = gs_sched__fit_resources(s, p, n, msg, size);
	if (r == GS_WAIT_NONE)
		r = gs_sched__fit_devices(s, p, n, msg, size);
	if (n->n_nominated)
		gs_sched__nominations_hide(s, p, n, 0);
	return r;
}
