/*
 * decode.c: see decode.h and docs/k8s-decode.md (quantities and times: decode_scalar.c).
 *
 * cJSON builds the whole tree of one event or one list page; we then walk only the fixed paths we
 * need with the reading helpers of decode_json.h: absent or null is "not there" (0 returned, output
 * NULL), the wrong JSON type is an error that names the field.
 */
#include "k8s/decode.h"
#include "k8s/decode_items.h"
#include "k8s/decode_json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "sched/gang.h"
#include "sched/gpm.h"
#include "sched/inuse.h"

/* map[key] where map is a string->string object (labels, annotations), borrowed. */
static int get_map_sref(struct gs_dctx *d, const cJSON *map, const char *key, const char *mapname, const char **out)
{
	const cJSON *v = key ? gs_dctx_get(map, key) : NULL;
	*out = NULL;
	if (v && !cJSON_IsString(v))
		return gs_dctx_fail(d, "%s[\"%.64s\"] is not a string", mapname, key);
	*out = v ? v->valuestring : NULL;
	return 0;
}

/* The same, copied out. */
static int get_map_str(struct gs_dctx *d, const cJSON *map, const char *key, const char *mapname, char **out)
{
	const char *s;
	int r = get_map_sref(d, map, key, mapname, &s);
	*out = NULL;
	if (r < 0 || !s)
		return r;
	*out = strdup(s);
	return *out ? 0 : gs_dctx_nomem(d);
}

/* ---- resource lists ------------------------------------------------------------------------------ */

/*
 * Appends to ext (counted before: it has room). A name given twice (hand-written JSON only) keeps its
 * first place and its last value, as Go's decoding into a map does. The apiserver writes map keys
 * sorted (encoding/json), so while they come sorted (*sorted) a name past the last one is new without
 * a search, and a long list stays linear.
 */
static int set_ext(struct gs_dctx *d, struct gs_resources *out, const char *name, int64_t v, int *sorted)
{
	if (out->n_ext > 0 && !(*sorted && strcmp(name, out->ext[out->n_ext - 1].name) > 0)) {
		*sorted = 0;
		for (int i = 0; i < out->n_ext; i++) {
			if (strcmp(out->ext[i].name, name) == 0) {
				out->ext[i].value = v;
				return 0;
			}
		}
	}
	if (!(out->ext[out->n_ext].name = strdup(name)))
		return gs_dctx_nomem(d);
	out->ext[out->n_ext++].value = v;
	return 0;
}

/*
 * parent[key], a resource list (name -> quantity string), into *out (zeroed). cpu in millicores, the
 * rest in whole units, all rounded up; extended resources are counted first so ext is allocated once.
 */
static int decode_resources(struct gs_dctx *d, const cJSON *parent, const char *key, const char *path,
			    struct gs_resources *out)
{
	const cJSON *list, *q;
	int n = 0, sorted = 1, r;

	if ((r = gs_dctx_get_obj(d, parent, key, path, &list)) < 0 || !list)
		return r;
	cJSON_ArrayForEach(q, list)
		n += !cJSON_IsNull(q) && gs_decode_res_kind(q->string, strlen(q->string)) == GS_RES_EXT;
	if (n && !(out->ext = calloc((size_t)n, sizeof(*out->ext))))
		return gs_dctx_nomem(d);
	cJSON_ArrayForEach(q, list) {
		enum gs_res_kind k = gs_decode_res_kind(q->string, strlen(q->string));
		int64_t v;
		if (cJSON_IsNull(q))
			continue;
		if (!cJSON_IsString(q))
			return gs_dctx_fail(d, "%s%s%s[\"%.64s\"] is not a string", path, GS_DCTX_DOT(path), key,
					    q->string);
		r = gs_decode_res_set(out, k, q->valuestring, &v);
		if (r < 0)
			return gs_dctx_fail(d, "%s%s%s[\"%.64s\"] \"%.40s\" is %s", path, GS_DCTX_DOT(path), key,
					    q->string, q->valuestring,
					    r == -ERANGE ? "out of range" : "not a quantity");
		if (k == GS_RES_EXT && (r = set_ext(d, out, q->string, v, &sorted)) < 0)
			return r;
	}
	return 0;
}

/* ---- labels, selectors, taints ------------------------------------------------------------------- */


/* NoSchedule, PreferNoSchedule, NoExecute; "" or absent is if_empty; anything else GS_EFFECT_OTHER. */
static enum gs_taint_effect effect_of(const char *s, enum gs_taint_effect if_empty)
{
	if (!s || !*s)
		return if_empty;
	if (strcmp(s, "NoSchedule") == 0)
		return GS_EFFECT_NO_SCHEDULE;
	if (strcmp(s, "PreferNoSchedule") == 0)
		return GS_EFFECT_PREFER_NO_SCHEDULE;
	if (strcmp(s, "NoExecute") == 0)
		return GS_EFFECT_NO_EXECUTE;
	return GS_EFFECT_OTHER;
}


#define REQUIRED_KEY      "requiredDuringSchedulingIgnoredDuringExecution"
#define REQUIRED_AFFINITY "spec.affinity.nodeAffinity." REQUIRED_KEY

static int decode_term(struct gs_dctx *d, const cJSON *t, const char *path, struct gs_sel_term *out)
{
	static const char *const lists[] = {"matchExpressions", "matchFields"};
	const cJSON *arr[2], *q;
	char qpath[224];
	int n, j = 0, r;

	if (!cJSON_IsObject(t))
		return gs_dctx_fail(d, "%s is not an object", path);
	if ((r = gs_dctx_get_arr(d, t, lists[0], path, &arr[0])) < 0 ||
	    (r = gs_dctx_get_arr(d, t, lists[1], path, &arr[1])) < 0)
		return r;
	n = cJSON_GetArraySize(arr[0]) + cJSON_GetArraySize(arr[1]);
	if (gs_decode__term_reqs(out, n) < 0)
		return gs_dctx_nomem(d);
	for (int l = 0; l < 2; l++) {
		int i = 0;
		cJSON_ArrayForEach(q, arr[l]) {
			snprintf(qpath, sizeof(qpath), "%s.%s[%d]", path, lists[l], i++);
			if ((r = gs_decode__sel_req(d, q, qpath, l, &out->reqs[j++])) < 0)
				return r;
		}
	}
	return 0;
}

/* spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms. */
static int decode_affinity(struct gs_dctx *d, const cJSON *spec, struct gs_pod_obj *out)
{
	const cJSON *aff, *na, *req, *terms, *t;
	char path[160];
	int i = 0, n, r;

	if ((r = gs_dctx_get_obj(d, spec, "affinity", "spec", &aff)) < 0 ||
	    (r = gs_dctx_get_obj(d, aff, "nodeAffinity", "spec.affinity", &na)) < 0 ||
	    (r = gs_dctx_get_obj(d, na, REQUIRED_KEY, "spec.affinity.nodeAffinity", &req)) < 0 || !req)
		return r;
	out->has_affinity = 1;
	if ((r = gs_dctx_get_arr(d, req, "nodeSelectorTerms", REQUIRED_AFFINITY, &terms)) < 0 || !terms ||
	    (n = cJSON_GetArraySize(terms)) == 0)
		return r;
	if (!(out->terms = calloc((size_t)n, sizeof(*out->terms))))
		return gs_dctx_nomem(d);
	out->n_terms = n;
	cJSON_ArrayForEach(t, terms) {
		snprintf(path, sizeof(path), REQUIRED_AFFINITY ".nodeSelectorTerms[%d]", i);
		if ((r = decode_term(d, t, path, &out->terms[i++])) < 0)
			return r;
	}
	return 0;
}

/*
 * spec.tolerations. A toleration with an operator other than Equal (or empty) and Exists tolerates
 * nothing in Kubernetes (ToleratesTaint): it is dropped. tolerationSeconds <= 0 means "evict at once"
 * and is kept as 0, so that -1 stays "absent".
 */
static int decode_tolerations(struct gs_dctx *d, const cJSON *spec, struct gs_pod_obj *out)
{
	const cJSON *arr, *t;
	char path[48];
	int i = 0, n, r;

	if ((r = gs_dctx_get_arr(d, spec, "tolerations", "spec", &arr)) < 0 || !arr ||
	    (n = cJSON_GetArraySize(arr)) == 0)
		return r;
	if (!(out->tolerations = calloc((size_t)n, sizeof(*out->tolerations))))
		return gs_dctx_nomem(d);
	cJSON_ArrayForEach(t, arr) {
		struct gs_toleration *o = &out->tolerations[out->n_tolerations];
		const char *key, *op, *value, *effect;
		int64_t secs = 0;
		snprintf(path, sizeof(path), "spec.tolerations[%d]", i++);
		if (!cJSON_IsObject(t))
			return gs_dctx_fail(d, "%s is not an object", path);
		if ((r = gs_dctx_get_sref(d, t, "key", path, &key)) < 0 ||
		    (r = gs_dctx_get_sref(d, t, "operator", path, &op)) < 0 ||
		    (r = gs_dctx_get_sref(d, t, "value", path, &value)) < 0 ||
		    (r = gs_dctx_get_sref(d, t, "effect", path, &effect)) < 0 ||
		    (r = gs_dctx_get_int(d, t, "tolerationSeconds", path, INT64_MIN, INT64_MAX, &secs)) < 0)
			return r;
		if (op && *op && strcmp(op, "Equal") != 0 && strcmp(op, "Exists") != 0)
			continue;
		o->exists = op && strcmp(op, "Exists") == 0;
		o->effect = effect_of(effect, GS_EFFECT_ALL);
		o->seconds = !gs_dctx_get(t, "tolerationSeconds") ? -1 : secs < 0 ? 0 : secs;
		out->n_tolerations++;
		if ((key && *key && !(o->key = strdup(key))) || (value && !(o->value = strdup(value))))
			return gs_dctx_nomem(d);
	}
	if (out->n_tolerations == 0) {
		free(out->tolerations);
		out->tolerations = NULL;
	}
	return 0;
}

/* ---- pods ---------------------------------------------------------------------------------------- */

/* c is a container object at cpath ("spec.containers[1]"). */
static int fold_container(struct gs_dctx *d, const cJSON *c, const char *cpath, struct gs_decode__cuda_fold *f)
{
	char path[96];
	const cJSON *env, *e;
	int j = 0, state = 0; /* 0 unset, 1 literal, 2 valueFrom */
	const char *val = NULL;

	if (gs_dctx_get_arr(d, c, "env", cpath, &env) < 0)
		return -EINVAL;
	cJSON_ArrayForEach(e, env) {
		const char *name, *v;
		const cJSON *from;
		snprintf(path, sizeof(path), "%s.env[%d]", cpath, j++);
		if (!cJSON_IsObject(e))
			return gs_dctx_fail(d, "%s is not an object", path);
		if (gs_dctx_get_sref(d, e, "name", path, &name) < 0)
			return -EINVAL;
		if (!name || strcmp(name, "CUDA_VISIBLE_DEVICES") != 0)
			continue;
		if (gs_dctx_get_sref(d, e, "value", path, &v) < 0 ||
		    gs_dctx_get_obj(d, e, "valueFrom", path, &from) < 0)
			return -EINVAL;
		/* The kubelet lets a later duplicate win; so do we. An entry with neither is "". */
		state = from ? 2 : 1;
		val = from ? NULL : v ? v : "";
	}
	gs_decode__cuda_add(f, state, val, val ? strlen(val) : 0);
	return 0;
}

/* The host ports of the regular containers, counted before any is decoded so that the array is sized
 * once (the decoding pass reports the type errors this count steps over). */
static int count_host_ports(const cJSON *ctrs)
{
	const cJSON *c, *p;
	int n = 0;

	cJSON_ArrayForEach(c, ctrs) {
		const cJSON *ports = gs_dctx_get(c, "ports");
		if (!cJSON_IsArray(ports))
			continue;
		cJSON_ArrayForEach(p, ports) {
			const cJSON *hp = gs_dctx_get(p, "hostPort");
			n += cJSON_IsNumber(hp) && hp->valuedouble > 0;
		}
	}
	return n;
}

/* A regular container's ports with a hostPort into out->host_ports (room for cap). */
static int decode_ports(struct gs_dctx *d, const cJSON *c, const char *cpath, struct gs_pod_obj *out, int cap)
{
	const cJSON *ports, *p;
	char path[96];
	int i = 0, r;

	if ((r = gs_dctx_get_arr(d, c, "ports", cpath, &ports)) < 0)
		return r;
	cJSON_ArrayForEach(p, ports) {
		struct gs_host_port *hp;
		const char *proto, *ip;
		int64_t port = 0;
		i++;
		if (cJSON_IsObject(p) && !gs_dctx_get(p, "hostPort"))
			continue; /* the usual containerPort alone: nothing to read */
		snprintf(path, sizeof(path), "%s.ports[%d]", cpath, i - 1);
		if (!cJSON_IsObject(p))
			return gs_dctx_fail(d, "%s is not an object", path);
		if ((r = gs_dctx_get_int(d, p, "hostPort", path, 0, 65535, &port)) < 0)
			return r;
		if (port == 0)
			continue; /* 0 is "no host port" */
		if ((r = gs_dctx_get_sref(d, p, "protocol", path, &proto)) < 0 ||
		    (r = gs_dctx_get_sref(d, p, "hostIP", path, &ip)) < 0)
			return r;
		if (out->n_host_ports >= cap) /* cannot happen: count_host_ports counted this one */
			return gs_dctx_fail(d, "%s: more host ports than counted", path);
		hp = &out->host_ports[out->n_host_ports];
		hp->port = (int)port;
		if (!proto || !*proto || strcmp(proto, "TCP") == 0)
			hp->proto = 'T';
		else if (strcmp(proto, "UDP") == 0)
			hp->proto = 'U';
		else if (strcmp(proto, "SCTP") == 0)
			hp->proto = 'S';
		else
			return gs_dctx_fail(d, "%s.protocol \"%.16s\" is not TCP, UDP or SCTP", path, proto);
		if (ip && *ip && strcmp(ip, "0.0.0.0") != 0 && !(hp->host_ip = strdup(ip)))
			return gs_dctx_nomem(d);
		out->n_host_ports++;
	}
	return 0;
}

/*
 * spec.initContainers and spec.containers, in one pass: resources.requests (one entry per container, zeroed
 * when it has none), an init container's restartPolicy Always (a sidecar, 1.28+) and, but for a partial
 * record, CUDA_VISIBLE_DEVICES and the regular containers' host ports. A name of the wrong type fails the
 * pod here, as in decode_pb.c (decode_pod_status matches statuses to containers by name).
 */
static int decode_containers(struct gs_dctx *d, const cJSON *spec, int partial, struct gs_pod_obj *out)
{
	static const char *const lists[] = {"initContainers", "containers"};
	struct gs_decode__cuda_fold f = {0};
	char cpath[64], rpath[80];
	int r;

	for (int l = 0; l < 2; l++) {
		struct gs_resources **req = l ? &out->ctr_req : &out->init_req;
		int *n_req = l ? &out->n_ctr : &out->n_init;
		const cJSON *arr, *c, *res;
		int i = 0, n, cap = 0;

		if ((r = gs_dctx_get_arr(d, spec, lists[l], "spec", &arr)) < 0)
			return r;
		if (!arr || (n = cJSON_GetArraySize(arr)) == 0)
			continue;
		if (!(*req = calloc((size_t)n, sizeof(**req))))
			return gs_dctx_nomem(d);
		*n_req = n;
		if (l == 1 && !partial && (cap = count_host_ports(arr)) > 0 &&
		    !(out->host_ports = calloc((size_t)cap, sizeof(*out->host_ports))))
			return gs_dctx_nomem(d);
		cJSON_ArrayForEach(c, arr) {
			const char *name, *policy;
			snprintf(cpath, sizeof(cpath), "spec.%s[%d]", lists[l], i);
			if (!cJSON_IsObject(c))
				return gs_dctx_fail(d, "%s is not an object", cpath);
			if ((!partial && (r = fold_container(d, c, cpath, &f)) < 0) ||
			    (r = gs_dctx_get_sref(d, c, "name", cpath, &name)) < 0 ||
			    (r = gs_dctx_get_obj(d, c, "resources", cpath, &res)) < 0 ||
			    (r = gs_dctx_get_sref(d, c, "restartPolicy", cpath, &policy)) < 0)
				return r;
			if (res) {
				snprintf(rpath, sizeof(rpath), "%s.resources", cpath);
				if ((r = decode_resources(d, res, "requests", rpath, &(*req)[i])) < 0)
					return r;
			}
			if (l == 0 && policy && strcmp(policy, "Always") == 0 && gs_decode__sidecar(out, i) < 0)
				return gs_dctx_nomem(d);
			if (l == 1 && !partial && (r = decode_ports(d, c, cpath, out, cap)) < 0)
				return r;
			i++;
		}
	}
	if (partial)
		return 0; /* no CUDA_VISIBLE_DEVICES fold: n_containers and cuda_state stay 0 */
	if (gs_decode__containers_done(out, &f) < 0)
		return gs_dctx_nomem(d);
	return 0;
}

/* How many entries a resource list object has (null values are not entries): "present" is at least one,
 * as protobuf cannot tell an empty map from an absent one. */
static int res_entries(const cJSON *list)
{
	const cJSON *q;
	int n = 0;

	cJSON_ArrayForEach(q, list)
		n += !cJSON_IsNull(q);
	return n;
}

/* spec.resources.requests: pod-level resources (1.32+). */
static int decode_pod_resources(struct gs_dctx *d, const cJSON *spec, struct gs_pod_obj *out)
{
	const cJSON *res, *req;
	int r;

	if ((r = gs_dctx_get_obj(d, spec, "resources", "spec", &res)) < 0 ||
	    (r = gs_dctx_get_obj(d, res, "requests", "spec.resources", &req)) < 0 || !req)
		return r;
	out->has_pod_req = res_entries(req) > 0;
	return decode_resources(d, res, "requests", "spec.resources", &out->pod_req);
}

/* The index of the regular container called name whose status is not yet set, or -1 (the first status of a
 * name counts, as component-helpers' findContainerStatus). */
static int ctr_by_name(const cJSON *spec, const char *name, const struct gs_pod_obj *out)
{
	const cJSON *c;
	int i = 0;

	if (!name)
		return -1;
	cJSON_ArrayForEach(c, gs_dctx_get(spec, "containers")) {
		const cJSON *n = gs_dctx_get(c, "name");
		if (i < out->n_ctr && cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
			return out->ctr_status_set && out->ctr_status_set[i] ? -1 : i;
		i++;
	}
	return -1;
}

/* One status.containerStatuses entry: whether it runs (stopped), and its requests after a resize. */
static int decode_ctr_status(struct gs_dctx *d, const cJSON *spec, const cJSON *cs, const char *path,
			     struct gs_pod_obj *out)
{
	const cJSON *state, *w, *t, *res, *req = NULL, *alloc;
	const char *name;
	char spath[96];
	int k, r;

	if (!cJSON_IsObject(cs))
		return gs_dctx_fail(d, "%s is not an object", path);
	snprintf(spath, sizeof(spath), "%s.state", path);
	if ((r = gs_dctx_get_sref(d, cs, "name", path, &name)) < 0 ||
	    (r = gs_dctx_get_obj(d, cs, "state", path, &state)) < 0 ||
	    (r = gs_dctx_get_obj(d, state, "waiting", spath, &w)) < 0 ||
	    (r = gs_dctx_get_obj(d, state, "terminated", spath, &t)) < 0 ||
	    (r = gs_dctx_get_obj(d, cs, "allocatedResources", path, &alloc)) < 0 ||
	    (r = gs_dctx_get_obj(d, cs, "resources", path, &res)) < 0)
		return r;
	snprintf(spath, sizeof(spath), "%s.resources", path);
	if ((r = gs_dctx_get_obj(d, res, "requests", spath, &req)) < 0)
		return r;
	if (!w && !t) /* the kubelet's notRunning: neither terminated nor waiting is running */
		out->stopped = 0;
	if ((k = ctr_by_name(spec, name, out)) < 0)
		return 0;
	if (!(req && res_entries(req) > 0) && !(alloc && res_entries(alloc) > 0))
		return 0;
	struct gs_resources *slot = gs_decode__status_slot(out, k);
	if (!slot)
		return gs_dctx_nomem(d);
	if (req && res_entries(req) > 0)
		r = decode_resources(d, res, "requests", spath, slot);
	else
		r = decode_resources(d, cs, "allocatedResources", path, slot);
	if (r == 0)
		out->ctr_status_set[k] = 1;
	return r;
}

/* status.conditions[i] at path (a PodCondition or a NodeCondition): its type and its string field key, borrowed. */
static int decode_condition(struct gs_dctx *d, const cJSON *c, const char *path, const char *key, const char **type,
			    const char **val)
{
	int r;

	if (!cJSON_IsObject(c))
		return gs_dctx_fail(d, "%s is not an object", path);
	if ((r = gs_dctx_get_sref(d, c, "type", path, type)) < 0 || (r = gs_dctx_get_sref(d, c, key, path, val)) < 0)
		return r;
	return 0;
}

/* status.containerStatuses (stopped, ctr_status_req), status.resize and status.conditions (resize_infeasible),
 * status.nominatedNodeName. */
static int decode_pod_status(struct gs_dctx *d, const cJSON *spec, const cJSON *status, struct gs_pod_obj *out)
{
	const cJSON *arr, *conds, *c;
	const char *resize, *nominated;
	char path[64];
	int i = 0, r;

	out->stopped = 1;
	if ((r = gs_dctx_get_sref(d, status, "nominatedNodeName", "status", &nominated)) < 0 ||
	    (r = gs_dctx_dup(d, nominated && *nominated ? nominated : NULL, &out->nominated_node)) < 0 ||
	    (r = gs_dctx_get_sref(d, status, "resize", "status", &resize)) < 0 ||
	    (r = gs_dctx_get_arr(d, status, "conditions", "status", &conds)) < 0 ||
	    (r = gs_dctx_get_arr(d, status, "containerStatuses", "status", &arr)) < 0)
		return r;
	out->resize_infeasible = resize && strcmp(resize, "Infeasible") == 0;
	cJSON_ArrayForEach(c, conds) {
		const char *type, *reason;
		snprintf(path, sizeof(path), "status.conditions[%d]", i++);
		if ((r = decode_condition(d, c, path, "reason", &type, &reason)) < 0)
			return r;
		if (type && strcmp(type, "PodResizePending") == 0 && reason && strcmp(reason, "Infeasible") == 0)
			out->resize_infeasible = 1;
	}
	i = 0;
	cJSON_ArrayForEach(c, arr) {
		snprintf(path, sizeof(path), "status.containerStatuses[%d]", i++);
		if ((r = decode_ctr_status(d, spec, c, path, out)) < 0)
			return r;
	}
	return 0;
}

/* spec.schedulingGates (Kubernetes 1.26+): how many, and the first one's name. */
static int decode_gates(struct gs_dctx *d, const cJSON *spec, struct gs_pod_obj *out)
{
	const cJSON *gates, *g;
	char path[48];
	int i = 0, r;

	if ((r = gs_dctx_get_arr(d, spec, "schedulingGates", "spec", &gates)) < 0)
		return r;
	cJSON_ArrayForEach(g, gates) {
		const char *name;
		snprintf(path, sizeof(path), "spec.schedulingGates[%d]", i);
		if (!cJSON_IsObject(g))
			return gs_dctx_fail(d, "%s is not an object", path);
		if ((r = gs_dctx_get_sref(d, g, "name", path, &name)) < 0)
			return r;
		if (i++ == 0 && name && !(out->first_gate = strdup(name)))
			return gs_dctx_nomem(d);
	}
	out->n_gates = i;
	return 0;
}

static int decode_owner(struct gs_dctx *d, const cJSON *meta, struct gs_pod_obj *out)
{
	const cJSON *refs, *ref;
	char path[64];
	int i = 0, r, taken = 0;

	if (gs_dctx_get_arr(d, meta, "ownerReferences", "metadata", &refs) < 0)
		return -EINVAL;
	cJSON_ArrayForEach(ref, refs) {
		int controller;
		snprintf(path, sizeof(path), "metadata.ownerReferences[%d]", i++);
		if (!cJSON_IsObject(ref))
			return gs_dctx_fail(d, "%s is not an object", path);
		if (gs_dctx_get_bool(d, ref, "controller", path, &controller) < 0)
			return -EINVAL;
		/* The apiserver allows one controller; the first one counts, whatever fields it lacks (a
		 * second must not write over the first's strings: fuzz_decode found that leak). */
		if (!controller || taken)
			continue;
		taken = 1;
		if ((r = gs_dctx_get_str(d, ref, "kind", path, &out->owner_kind)) < 0 ||
		    (r = gs_dctx_get_str(d, ref, "name", path, &out->owner_name)) < 0 ||
		    (r = gs_dctx_get_str(d, ref, "uid", path, &out->owner_uid)) < 0)
			return r;
	}
	return 0;
}

/* The labels, annotations and owner a full record keeps; a partial one only the labels, the sharing annotation
 * and the owner. */
static int pod_meta_maps(struct gs_dctx *d, const cJSON *meta, const char *map_annotation, int partial,
			 struct gs_pod_obj *out)
{
	const cJSON *labels, *ann;
	const char *shared;
	int r;

	if ((r = gs_dctx_get_obj(d, meta, "annotations", "metadata", &ann)) < 0 ||
	    (r = get_map_sref(d, ann, GS_ANN_ALLOW_SHARED, "metadata.annotations", &shared)) < 0 ||
	    (r = decode_owner(d, meta, out)) < 0 ||
	    (r = gs_decode__labels(d, meta, "labels", "metadata", &out->labels, &out->n_labels)) < 0)
		return r;
	out->allow_shared = shared && strcmp(shared, "true") == 0;
	if (partial)
		return 0;
	if ((r = gs_dctx_get_obj(d, meta, "labels", "metadata", &labels)) < 0 ||
	    (r = get_map_str(d, labels, GS_LABEL_POD_INDEX, "metadata.labels", &out->label_pod_index)) < 0 ||
	    (r = get_map_str(d, ann, GS_ANN_JOB_INDEX, "metadata.annotations", &out->job_index)) < 0 ||
	    (r = get_map_str(d, ann, GS_ANN_ASSIGNED, "metadata.annotations", &out->assigned)) < 0 ||
	    (r = get_map_str(d, ann, GS_GANG_PLACEMENT, "metadata.annotations", &out->placement)) < 0 ||
	    (r = get_map_str(d, ann, GS_GANG_TIMEOUT, "metadata.annotations", &out->gang_timeout)) < 0 ||
	    (r = get_map_str(d, ann, GS_GANG_SIZE, "metadata.annotations", &out->gang_size)) < 0 ||
	    (r = get_map_str(d, ann, GS_GANG_PLACEHOLDER_FOR, "metadata.annotations", &out->placeholder_for)) < 0 ||
	    (r = get_map_str(d, ann, GS_MAP_REF_ANNOTATION, "metadata.annotations", &out->map_ref)) < 0 ||
	    (r = get_map_str(d, ann, GS_MAP_REF_GENERATION, "metadata.annotations", &out->map_ref_generation)) < 0 ||
	    (r = get_map_str(d, ann, map_annotation, "metadata.annotations", &out->map_owned)) < 0)
		return r;
	if (out->map_owned) { /* cJSON unescaped it into its tree: our copy, which the record owns */
		out->map_text = out->map_owned;
		out->map_len = strlen(out->map_owned);
	}
	return 0;
}

/* The spec a record keeps besides schedulerName and nodeName: for a partial one, what gs_checks_pod_requests reads. */
static int pod_spec_rest(struct gs_dctx *d, const cJSON *spec, int partial, struct gs_pod_obj *out)
{
	const cJSON *os;
	const char *ppol = NULL;
	int r;

	if ((r = decode_containers(d, spec, partial, out)) < 0 ||
	    (r = decode_resources(d, spec, "overhead", "spec", &out->overhead)) < 0 ||
	    (r = decode_pod_resources(d, spec, out)) < 0 || partial)
		return r;
	if ((r = gs_dctx_get_int(d, spec, "priority", "spec", INT32_MIN, INT32_MAX, &out->priority)) < 0 ||
	    (r = gs_dctx_get_sref(d, spec, "preemptionPolicy", "spec", &ppol)) < 0 ||
	    (r = decode_gates(d, spec, out)) < 0 ||
	    (r = gs_decode__labels(d, spec, "nodeSelector", "spec", &out->node_selector, &out->n_node_selector)) < 0 ||
	    (r = decode_affinity(d, spec, out)) < 0 || (r = decode_tolerations(d, spec, out)) < 0 ||
	    (r = gs_dctx_get_obj(d, spec, "os", "spec", &os)) < 0 ||
	    (r = gs_dctx_get_str(d, os, "name", "spec.os", &out->os_name)) < 0)
		return r;
	out->preempt_never = ppol && strcmp(ppol, "Never") == 0;
	return 0;
}

/* partial: only what objects.h lists for a partial record (a DELETED event, as the protobuf decoder; the JSON
 * tree is built whole anyway, so a held pod is read in full). */
static int decode_pod(struct gs_dctx *d, const cJSON *pod, const char *map_annotation, int partial,
		      struct gs_pod_obj *out)
{
	const cJSON *meta, *spec, *status;
	const char *ts, *phase;
	int r;

	if (!cJSON_IsObject(pod))
		return gs_dctx_fail(d, "not an object");
	if ((r = gs_dctx_get_obj(d, pod, "metadata", "", &meta)) < 0 ||
	    (r = gs_dctx_get_str(d, meta, "namespace", "metadata", &out->ns)) < 0 ||
	    (r = gs_dctx_get_str(d, meta, "name", "metadata", &out->name)) < 0)
		return r;
	if (!out->ns || !out->name)
		return gs_dctx_fail(d, "metadata.%s is missing", out->ns ? "name" : "namespace");
	snprintf(d->what, sizeof(d->what), "pod %s/%s", out->ns, out->name);
	if ((r = gs_dctx_get_str(d, meta, "uid", "metadata", &out->uid)) < 0)
		return r;
	if (!out->uid)
		return gs_dctx_fail(d, "metadata.uid is missing");
	if ((r = gs_dctx_get_str(d, meta, "resourceVersion", "metadata", &out->resource_version)) < 0 ||
	    (r = pod_meta_maps(d, meta, map_annotation, partial, out)) < 0)
		return r;
	if ((r = gs_dctx_get_sref(d, meta, "creationTimestamp", "metadata", &ts)) < 0)
		return r;
	if (ts && gs_decode_time(ts, &out->created_ms) < 0)
		return gs_dctx_fail(d, "metadata.creationTimestamp \"%.40s\" is not an RFC 3339 time", ts);
	if ((r = gs_dctx_get_sref(d, meta, "deletionTimestamp", "metadata", &ts)) < 0)
		return r;
	out->deleting = ts != NULL;
	if ((r = gs_dctx_get_obj(d, pod, "spec", "", &spec)) < 0 ||
	    (r = gs_dctx_get_str(d, spec, "schedulerName", "spec", &out->scheduler_name)) < 0 ||
	    (r = gs_dctx_get_str(d, spec, "nodeName", "spec", &out->node_name)) < 0 ||
	    (r = pod_spec_rest(d, spec, partial, out)) < 0)
		return r;
	if ((r = gs_dctx_get_obj(d, pod, "status", "", &status)) < 0 ||
	    (r = gs_dctx_get_sref(d, status, "phase", "status", &phase)) < 0 ||
	    (r = decode_pod_status(d, spec, status, out)) < 0)
		return r;
	out->terminal = phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
	out->running = phase && strcmp(phase, "Running") == 0;
	out->partial = partial;
	return 0;
}

static int pod_record(const cJSON *pod, const char *map_annotation, int partial, struct gs_pod_obj *out, char *err,
		      size_t errlen)
{
	struct gs_dctx d = {.err = err, .errlen = errlen, .what = "pod"};

	memset(out, 0, sizeof(*out));
	int r = decode_pod(&d, pod, map_annotation, partial, out);
	if (r < 0) {
		gs_pod_obj_free(out);
		memset(out, 0, sizeof(*out));
	}
	return r;
}

int gs_decode_pod(const cJSON *pod, const char *map_annotation, struct gs_pod_obj *out, char *err, size_t errlen)
{
	return pod_record(pod, map_annotation, 0, out, err, errlen);
}

/* ---- nodes --------------------------------------------------------------------------------------- */

/* spec.taints: an absent or empty effect is GS_EFFECT_OTHER (never tolerated but by an empty effect). */
static int decode_taints(struct gs_dctx *d, const cJSON *spec, struct gs_node_obj *out)
{
	const cJSON *arr, *t;
	char path[40];
	int i = 0, n, r;

	if ((r = gs_dctx_get_arr(d, spec, "taints", "spec", &arr)) < 0 || !arr || (n = cJSON_GetArraySize(arr)) == 0)
		return r;
	if (!(out->taints = calloc((size_t)n, sizeof(*out->taints))))
		return gs_dctx_nomem(d);
	out->n_taints = n;
	cJSON_ArrayForEach(t, arr) {
		struct gs_taint *o = &out->taints[i];
		const char *effect;
		snprintf(path, sizeof(path), "spec.taints[%d]", i++);
		if (!cJSON_IsObject(t))
			return gs_dctx_fail(d, "%s is not an object", path);
		if ((r = gs_dctx_get_sref(d, t, "effect", path, &effect)) < 0 ||
		    (r = gs_dctx_get_str(d, t, "key", path, &o->key)) < 0 ||
		    (r = gs_dctx_get_str(d, t, "value", path, &o->value)) < 0)
			return r;
		o->effect = effect_of(effect, GS_EFFECT_OTHER);
	}
	return 0;
}

/* status.capacity["nvidia.com/gpu"] (the rest of the capacity is not kept): -1 when absent. */
static int node_gpu_capacity(struct gs_dctx *d, const cJSON *status, struct gs_node_obj *out)
{
	const cJSON *cap, *q;
	int64_t v;
	int r;

	if ((r = gs_dctx_get_obj(d, status, "capacity", "status", &cap)) < 0 || !(q = gs_dctx_get(cap, GS_RES_GPU)))
		return r;
	if (!cJSON_IsString(q))
		return gs_dctx_fail(d, "status.capacity[\"%s\"] is not a string", GS_RES_GPU);
	if ((r = gs_decode_quantity(q->valuestring, &v)) < 0)
		return gs_dctx_fail(d, "status.capacity[\"%s\"] \"%.40s\" is %s", GS_RES_GPU, q->valuestring,
				    r == -ERANGE ? "out of range" : "not a quantity");
	out->gpu_capacity = v;
	return 0;
}

/* status.nodeInfo.bootID; "" as absent (the protobuf encoding cannot tell them apart). */
static int node_boot_id(struct gs_dctx *d, const cJSON *status, struct gs_node_obj *out)
{
	const cJSON *info;
	int r;

	if ((r = gs_dctx_get_obj(d, status, "nodeInfo", "status", &info)) < 0 ||
	    (r = gs_dctx_get_str(d, info, "bootID", "status.nodeInfo", &out->boot_id)) < 0)
		return r;
	if (out->boot_id && !*out->boot_id) {
		free(out->boot_id);
		out->boot_id = NULL;
	}
	return 0;
}

static int decode_node(struct gs_dctx *d, const cJSON *node, struct gs_node_obj *out)
{
	const cJSON *meta, *ann, *spec, *status, *conds, *c;
	char path[64];
	int i = 0, r;

	out->gpus = -1;
	out->gpu_capacity = -1;
	if (!cJSON_IsObject(node))
		return gs_dctx_fail(d, "not an object");
	if ((r = gs_dctx_get_obj(d, node, "metadata", "", &meta)) < 0 ||
	    (r = gs_dctx_get_str(d, meta, "name", "metadata", &out->name)) < 0)
		return r;
	if (!out->name)
		return gs_dctx_fail(d, "metadata.name is missing");
	snprintf(d->what, sizeof(d->what), "node %s", out->name);
	if ((r = gs_dctx_get_str(d, meta, "resourceVersion", "metadata", &out->resource_version)) < 0 ||
	    (r = gs_decode__labels(d, meta, "labels", "metadata", &out->labels, &out->n_labels)) < 0 ||
	    (r = gs_dctx_get_obj(d, meta, "annotations", "metadata", &ann)) < 0 ||
	    (r = get_map_str(d, ann, GS_ANN_ALLOWED_NS, "metadata.annotations", &out->allowed_ns)) < 0 ||
	    (r = get_map_str(d, ann, GS_INUSE_ANNOTATION, "metadata.annotations", &out->inuse)) < 0 ||
	    (r = gs_dctx_get_obj(d, node, "spec", "", &spec)) < 0 ||
	    (r = gs_dctx_get_bool(d, spec, "unschedulable", "spec", &out->unschedulable)) < 0 ||
	    (r = decode_taints(d, spec, out)) < 0 || (r = gs_dctx_get_obj(d, node, "status", "", &status)) < 0 ||
	    (r = gs_dctx_get_arr(d, status, "conditions", "status", &conds)) < 0)
		return r;
	cJSON_ArrayForEach(c, conds) {
		const char *type, *st;
		snprintf(path, sizeof(path), "status.conditions[%d]", i++);
		if ((r = decode_condition(d, c, path, "status", &type, &st)) < 0)
			return r;
		if (type && strcmp(type, "Ready") == 0)
			out->ready = st && strcmp(st, "True") == 0;
	}
	if ((r = decode_resources(d, status, "allocatable", "status", &out->alloc)) < 0)
		return r;
	for (i = 0; i < out->alloc.n_ext; i++)
		if (strcmp(out->alloc.ext[i].name, GS_RES_GPU) == 0)
			out->gpus = out->alloc.ext[i].value;
	if ((r = node_boot_id(d, status, out)) < 0)
		return r;
	return node_gpu_capacity(d, status, out);
}

int gs_decode_node(const cJSON *node, struct gs_node_obj *out, char *err, size_t errlen)
{
	struct gs_dctx d = {.err = err, .errlen = errlen, .what = "node"};

	memset(out, 0, sizeof(*out));
	int r = decode_node(&d, node, out);
	if (r < 0)
		gs_decode__node_failed(out);
	return r;
}

/* ---- documents ----------------------------------------------------------------------------------- */

const char *gs_decode_event_type_name(enum gs_decode_event_type t)
{
	return gs_dctx_event_type_name(t);
}

static int decode_event(struct gs_dctx *d, const cJSON *root, const char *map_annotation, struct gs_decode_event *ev)
{
	const cJSON *obj;
	int r = gs_dctx_event(d, root, &ev->type, &obj, &ev->resource_version, &ev->status_code, &ev->status_reason,
			      &ev->status_message);

	if (r != 0)
		return r < 0 ? r : 0;
	char *dst = d->err;
	if (ev->kind == GS_OBJ_POD) {
		/* DELETED: the reader forgets the uid; the rest is not read (a partial record, objects.h). */
		r = pod_record(obj, map_annotation, ev->type == GS_DECODE_EV_DELETED, &ev->pod, dst, d->errlen);
		if (r == 0 && ev->pod.resource_version && !(ev->resource_version = strdup(ev->pod.resource_version)))
			r = gs_dctx_nomem(d);
	} else {
		r = gs_decode_node(obj, &ev->node, dst, d->errlen);
		if (r == 0 && ev->node.resource_version && !(ev->resource_version = strdup(ev->node.resource_version)))
			r = gs_dctx_nomem(d);
	}
	return r;
}

int gs_decode_watch_event(const char *json, size_t len, enum gs_obj_kind kind, const char *map_annotation,
			  struct gs_decode_event *ev, char *err, size_t errlen)
{
	struct gs_dctx d = {.err = err, .errlen = errlen, .what = "watch event"};
	cJSON *root;
	int r;

	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->node.gpus = -1;
	ev->node.gpu_capacity = -1;
	if (!(root = gs_dctx_parse(&d, json, len, &r)))
		return r;
	r = decode_event(&d, root, map_annotation, ev);
	cJSON_Delete(root);
	if (r < 0) {
		gs_decode_event_free(ev);
		ev->kind = kind;
	}
	return r;
}

void gs_decode_event_free(struct gs_decode_event *ev)
{
	gs_pod_obj_free(&ev->pod);
	gs_node_obj_free(&ev->node);
	free(ev->resource_version);
	free(ev->status_reason);
	free(ev->status_message);
	memset(ev, 0, sizeof(*ev));
	ev->node.gpus = -1;
	ev->node.gpu_capacity = -1;
}

/* Decodes one list item into its record and hands it to cb. Returns cb's result (0 or < 0), -ENOMEM,
 * or 1 when the item does not decode (ierr says why). */
static int decode_item(const cJSON *it, enum gs_obj_kind kind, const char *map_annotation, gs_decode_item_cb cb,
		       void *ud, char *ierr, size_t ierrlen)
{
	struct gs_pod_obj pod;
	struct gs_node_obj node;
	int r = kind == GS_OBJ_POD ? gs_decode_pod(it, map_annotation, &pod, ierr, ierrlen)
				   : gs_decode_node(it, &node, ierr, ierrlen);
	return gs_decode__deliver(r, kind, &pod, &node, cb, ud);
}

struct list_ctx {
	enum gs_obj_kind kind;
	const char *map_annotation;
	gs_decode_item_cb cb;
	void *ud;
};

static int list_item(const cJSON *it, void *ud, char *ierr, size_t ierrlen)
{
	const struct list_ctx *x = ud;

	return decode_item(it, x->kind, x->map_annotation, x->cb, x->ud, ierr, ierrlen);
}

int gs_decode_list_ex(const char *json, size_t len, enum gs_obj_kind kind, const char *map_annotation,
		      gs_decode_item_cb cb, void *ud, char **resource_version, char **continue_token, unsigned *skipped,
		      char *err, size_t errlen)
{
	struct gs_dctx d = {.err = err, .errlen = errlen};
	struct list_ctx x = {.kind = kind, .map_annotation = map_annotation, .cb = cb, .ud = ud};

	snprintf(d.what, sizeof(d.what), "%s list", kind == GS_OBJ_POD ? "pod" : "node");
	return gs_dctx_list_each(&d, json, len, list_item, &x, resource_version, continue_token, skipped);
}

int gs_decode_list_item(const char *json, size_t len, enum gs_obj_kind kind, const char *map_annotation,
			gs_decode_item_cb cb, void *ud, unsigned *skipped)
{
	struct gs_dctx d = {0};
	char ierr[512];
	cJSON *root;
	int r;

	d.err = ierr;
	d.errlen = sizeof(ierr);
	snprintf(d.what, sizeof(d.what), "%s list item", kind == GS_OBJ_POD ? "pod" : "node");
	if (!(root = gs_dctx_parse(&d, json, len, &r))) {
		if (r == -ENOMEM)
			return r;
		gs_log_warn("%s skipped: %s", d.what, ierr);
		(*skipped)++;
		return 0;
	}
	r = decode_item(root, kind, map_annotation, cb, ud, ierr, sizeof(ierr));
	cJSON_Delete(root);
	return gs_decode__stream_outcome(r, kind, ierr, skipped);
}

int gs_decode_list_meta(const char *json, size_t len, char **resource_version, char *err, size_t errlen)
{
	struct gs_dctx d = {.err = err, .errlen = errlen};
	cJSON *root;
	int r;

	snprintf(d.what, sizeof(d.what), "list metadata");
	*resource_version = NULL;
	if (!(root = gs_dctx_parse(&d, json, len, &r)))
		return r;
	r = gs_dctx_get_str(&d, root, "resourceVersion", "metadata", resource_version);
	cJSON_Delete(root);
	return r < 0 ? r : 0;
}

int gs_decode_list(const char *json, size_t len, enum gs_obj_kind kind, const char *map_annotation,
		   gs_decode_item_cb cb, void *ud, char **resource_version, char **continue_token, char *err,
		   size_t errlen)
{
	return gs_decode_list_ex(json, len, kind, map_annotation, cb, ud, resource_version, continue_token, NULL, err,
				 errlen);
}

char *gs_decode_object_uid(const char *json, size_t len)
{
	struct gs_dctx d = {0};
	const cJSON *meta;
	char *uid = NULL;
	cJSON *root;
	int r;

	if (!(root = gs_dctx_parse(&d, json, len, &r)))
		return NULL;
	if (gs_dctx_get_obj(&d, root, "metadata", "", &meta) < 0 || !meta ||
	    gs_dctx_get_str(&d, meta, "uid", "metadata", &uid) < 0 || (uid && !*uid)) {
		free(uid);
		uid = NULL;
	}
	cJSON_Delete(root);
	return uid;
}

int gs_decode_status(const char *json, size_t len, int *code, char **reason, char **message)
{
	struct gs_dctx d = {0};
	cJSON *root;
	int r;

	*code = 0;
	*reason = NULL;
	*message = NULL;
	if (!(root = gs_dctx_parse(&d, json, len, &r)))
		return r;
	r = gs_dctx_status(&d, root, code, reason, message);
	cJSON_Delete(root);
	if (r < 0) {
		free(*reason);
		free(*message);
		*code = 0;
		*reason = NULL;
		*message = NULL;
	}
	return r;
}
