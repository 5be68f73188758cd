/*
 * decode_pb.c: the protobuf half of decode.h (application/vnd.kubernetes.protobuf), filling the same
 * records as the JSON half in decode.c. See docs/k8s-decode.md, "Protobuf".
 *
 * Field numbers are those of the generated.proto files of Kubernetes (k8s.io/api/core/v1,
 * k8s.io/apimachinery/pkg/apis/meta/v1, .../pkg/runtime); each message read below names its fields.
 * The rules are decode.c's, with two translations:
 *   - Go's protobuf code writes every non-pointer string, empty or not, where JSON leaves an empty
 *     omitempty string out. A string field whose JSON tag has omitempty therefore reads "" as absent
 *     (ABSENT_IF_EMPTY below); the few without omitempty (taint key, owner reference kind/name/uid,
 *     requirement key, gate name) keep "" as JSON shows it.
 *   - metav1.Time is {seconds, nanos} where JSON has RFC 3339 to the second; the zero time (Go's year 1,
 *     which JSON writes as null) is absent.
 * A field with the wrong wire type fails the object with a message naming the field, as a JSON field of
 * the wrong type does; unknown fields are skipped.
 */
#include "k8s/decode.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/log.h"
#include "core/pb.h"

static const uint8_t pb_magic[4] = {'k', '8', 's', 0};

struct pctx {
	char *err;
	size_t errlen;
	char what[320];
};

__attribute__((format(printf, 2, 3))) static int pfail(struct pctx *d, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (d->err && d->errlen)
		snprintf(d->err, d->errlen, "%s%s%s", d->what, d->what[0] ? ": " : "", msg);
	return -EINVAL;
}

static int pnomem(struct pctx *d)
{
	if (d->err && d->errlen)
		snprintf(d->err, d->errlen, "%s: out of memory", d->what[0] ? d->what : "decode");
	return -ENOMEM;
}

/* A reader's failure, naming the message it was reading. */
static int pbad(struct pctx *d, const struct gs_pb *r, const char *path)
{
	return pfail(d, "%s: malformed protobuf at byte %zu: %s", path[0] ? path : "object", gs_pb_offset(r),
		     r->err ? r->err : "?");
}

/* ---- fields ------------------------------------------------------------------------------------- */

#define DOT(path) ((path)[0] ? "." : "")

static int want(struct pctx *d, const struct gs_pb_field *f, enum gs_pb_wire wire, const char *path, const char *key)
{
	if (f->wire == wire)
		return 0;
	return pfail(d, "%s%s%s has wire type %s, not %s", path, DOT(path), key, gs_pb_wire_name(f->wire),
		     gs_pb_wire_name(wire));
}

/* A string field borrowed as (s, n); it must be length-delimited and hold no NUL byte (our records are C
 * strings; JSON cannot carry one either, as cJSON ends the string there). */
static int sref(struct pctx *d, const struct gs_pb_field *f, const char *path, const char *key, const char **s,
		size_t *n)
{
	int r = want(d, f, GS_PB_LEN, path, key);
	if (r < 0)
		return r;
	if (memchr(f->data, 0, f->len))
		return pfail(d, "%s%s%s holds a NUL byte", path, DOT(path), key);
	*s = (const char *)f->data;
	*n = f->len;
	return 0;
}

enum { KEEP_EMPTY = 0, ABSENT_IF_EMPTY = 1 };

/* A string field copied into *out (a repeated scalar field: the last one wins, as in protobuf). */
static int sdup(struct pctx *d, const struct gs_pb_field *f, const char *path, const char *key, int empty, char **out)
{
	const char *s;
	size_t n;
	int r = sref(d, f, path, key, &s, &n);
	if (r < 0)
		return r;
	free(*out);
	*out = NULL;
	if (n == 0 && empty == ABSENT_IF_EMPTY)
		return 0;
	if (!(*out = strndup(s, n)))
		return pnomem(d);
	return 0;
}

static int eq(const char *s, size_t n, const char *lit)
{
	return s && strlen(lit) == n && memcmp(s, lit, n) == 0;
}

static int uvarint(struct pctx *d, const struct gs_pb_field *f, const char *path, const char *key, uint64_t *v)
{
	int r = want(d, f, GS_PB_VARINT, path, key);
	if (r == 0)
		*v = f->v;
	return r;
}

/* An int32/int64 varint in [lo, hi] (negative int32s come sign-extended to 64 bits). */
static int ivarint(struct pctx *d, const struct gs_pb_field *f, const char *path, const char *key, int64_t lo,
		   int64_t hi, int64_t *out)
{
	uint64_t v = 0;
	int r = uvarint(d, f, path, key, &v);
	if (r < 0)
		return r;
	if ((int64_t)v < lo || (int64_t)v > hi)
		return pfail(d, "%s%s%s %lld is out of range", path, DOT(path), key, (long long)(int64_t)v);
	*out = (int64_t)v;
	return 0;
}

/* A map<string, V> entry: {1: key, 2: value}; value is returned as a field (may be absent: wire -1). */
static int map_entry(struct pctx *d, const struct gs_pb_field *f, const char *path, const char **k, size_t *kn,
		     struct gs_pb_field *val)
{
	struct gs_pb r;
	struct gs_pb_field g;
	int rc;

	*k = "";
	*kn = 0;
	memset(val, 0, sizeof(*val));
	val->wire = (enum gs_pb_wire)-1;
	if ((rc = want(d, f, GS_PB_LEN, path, "")) < 0)
		return rc;
	gs_pb_sub(&r, f);
	while ((rc = gs_pb_next(&r, &g)) > 0) {
		if (g.num == 1 && (rc = sref(d, &g, path, "key", k, kn)) < 0)
			return rc;
		if (g.num == 2)
			*val = g;
	}
	return rc < 0 ? pbad(d, &r, path) : 0;
}

/* A map<string,string> value (absent: ""). */
static int map_sval(struct pctx *d, const struct gs_pb_field *val, const char *path, const char *k, size_t kn,
		    const char **s, size_t *n)
{
	char key[96];
	*s = "";
	*n = 0;
	if ((int)val->wire == -1)
		return 0;
	snprintf(key, sizeof(key), "[\"%.*s\"]", (int)(kn < 64 ? kn : 64), k);
	return sref(d, val, path, key, s, n);
}

/* ---- resource lists ------------------------------------------------------------------------------ */

enum res_kind { RES_CPU, RES_MEMORY, RES_EPHEMERAL, RES_PODS, RES_EXT };

static enum res_kind res_kind(const char *k, size_t n)
{
	if (eq(k, n, "cpu"))
		return RES_CPU;
	if (eq(k, n, "memory"))
		return RES_MEMORY;
	if (eq(k, n, "ephemeral-storage"))
		return RES_EPHEMERAL;
	if (eq(k, n, "pods"))
		return RES_PODS;
	return RES_EXT;
}

/* As decode.c's set_ext: a name given twice keeps its first place and its last value. */
static int set_ext(struct pctx *d, struct gs_resources *out, const char *name, size_t n, int64_t v)
{
	for (int i = 0; i < out->n_ext; i++) {
		if (eq(name, n, out->ext[i].name)) {
			out->ext[i].value = v;
			return 0;
		}
	}
	if (!(out->ext[out->n_ext].name = strndup(name, n)))
		return pnomem(d);
	out->ext[out->n_ext++].value = v;
	return 0;
}

/* A map<string, resource.Quantity> (Quantity is {1: string}) into *out (zeroed). */
static int resources(struct pctx *d, const uint8_t *data, size_t len, uint32_t num, const char *path,
		     struct gs_resources *out)
{
	struct gs_pb r;
	struct gs_pb_field f, val, q;
	char qs[128];
	int n = 0, rc;

	/* Extended resources are counted first so that ext is allocated once. */
	gs_pb_init(&r, data, len);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		const char *k;
		size_t kn;
		if (f.num != num)
			continue;
		if ((rc = map_entry(d, &f, path, &k, &kn, &val)) < 0)
			return rc;
		n += res_kind(k, kn) == RES_EXT;
	}
	if (rc < 0)
		return pbad(d, &r, path);
	if (n && !(out->ext = calloc((size_t)n, sizeof(*out->ext))))
		return pnomem(d);
	gs_pb_init(&r, data, len);
	while (gs_pb_next(&r, &f) > 0) {
		const char *k, *s = "";
		size_t kn, sn = 0;
		int64_t v;
		struct gs_pb qr;
		if (f.num != num)
			continue;
		map_entry(d, &f, path, &k, &kn, &val); /* checked by the counting pass */
		if ((int)val.wire != -1) {
			char key[96];
			snprintf(key, sizeof(key), "[\"%.*s\"]", (int)(kn < 64 ? kn : 64), k);
			if ((rc = want(d, &val, GS_PB_LEN, path, key)) < 0)
				return rc;
			gs_pb_sub(&qr, &val);
			while ((rc = gs_pb_next(&qr, &q)) > 0)
				if (q.num == 1 && (rc = sref(d, &q, path, key, &s, &sn)) < 0)
					return rc;
			if (rc < 0)
				return pbad(d, &qr, path);
		}
		enum res_kind kind = res_kind(k, kn);
		snprintf(qs, sizeof(qs), "%.*s", (int)sn, s);
		rc = sn >= sizeof(qs) ? -ERANGE
		     : kind == RES_CPU ? gs_decode_quantity_milli(qs, &v)
				       : gs_decode_quantity(qs, &v);
		if (rc < 0)
			return pfail(d, "%s[\"%.*s\"] \"%.40s\" is %s", path, (int)(kn < 64 ? kn : 64), k, qs,
				     rc == -ERANGE ? "out of range" : "not a quantity");
		switch (kind) {
		case RES_CPU:
			out->milli_cpu = v;
			break;
		case RES_MEMORY:
			out->memory = v;
			break;
		case RES_EPHEMERAL:
			out->ephemeral = v;
			break;
		case RES_PODS:
			out->pods = v;
			break;
		case RES_EXT:
			if ((rc = set_ext(d, out, k, kn, v)) < 0)
				return rc;
			break;
		}
	}
	return 0;
}

/* A map<string,string> (labels, nodeSelector) field num of data into an array, in order. */
static int labels(struct pctx *d, const uint8_t *data, size_t len, uint32_t num, const char *path,
		  struct gs_label **out, int *n_out)
{
	struct gs_pb r;
	struct gs_pb_field f, val;
	int n = gs_pb_count(data, len, num), rc;

	if (n <= 0)
		return 0; /* a malformed message was reported by the caller's own pass */
	if (!(*out = calloc((size_t)n, sizeof(**out))))
		return pnomem(d);
	gs_pb_init(&r, data, len);
	while (gs_pb_next(&r, &f) > 0) {
		const char *k, *s;
		size_t kn, sn;
		struct gs_label *l = &(*out)[*n_out];
		if (f.num != num)
			continue;
		if ((rc = map_entry(d, &f, path, &k, &kn, &val)) < 0 || (rc = map_sval(d, &val, path, k, kn, &s, &sn)) < 0)
			return rc;
		if (memchr(k, 0, kn))
			return pfail(d, "%s key holds a NUL byte", path);
		if (!(l->key = strndup(k, kn)))
			return pnomem(d);
		(*n_out)++;
		if (!(l->value = strndup(s, sn)))
			return pnomem(d);
	}
	return 0;
}

/* ---- metadata ------------------------------------------------------------------------------------ */

/* metav1.Time {1: seconds, 2: nanos} -> ms; the zero time (Go's year 1) is "absent" (*present 0). */
static int time_ms(struct pctx *d, const struct gs_pb_field *f, const char *path, int64_t *ms, int *present)
{
	struct gs_pb r;
	struct gs_pb_field g;
	int64_t secs = 0, nanos = 0;
	int rc;

	if ((rc = want(d, f, GS_PB_LEN, "metadata", path)) < 0)
		return rc;
	gs_pb_sub(&r, f);
	while ((rc = gs_pb_next(&r, &g)) > 0) {
		if (g.num == 1 && (rc = ivarint(d, &g, path, "seconds", -62135596800LL, 253402300799LL, &secs)) < 0)
			return rc;
		if (g.num == 2 && (rc = ivarint(d, &g, path, "nanos", 0, 999999999, &nanos)) < 0)
			return rc;
	}
	if (rc < 0)
		return pbad(d, &r, path);
	*present = !(secs == -62135596800LL && nanos == 0);
	*ms = *present ? secs * 1000 + nanos / 1000000 : 0;
	return 0;
}

/* What ObjectMeta holds for a pod or a node. */
struct meta {
	char *name, *ns, *uid, *rv;
	int64_t created_ms;
	int deleting;
	const uint8_t *data; /* the message, for the label and annotation passes */
	size_t len;
};

static void meta_free(struct meta *m)
{
	free(m->name);
	free(m->ns);
	free(m->uid);
	free(m->rv);
}

/* ObjectMeta: 1 name, 3 namespace, 5 uid, 6 resourceVersion, 8 creationTimestamp, 9 deletionTimestamp,
 * 11 labels, 12 annotations, 13 ownerReferences. */
static int meta_scalars(struct pctx *d, const struct gs_pb_field *mf, struct meta *m)
{
	struct gs_pb r;
	struct gs_pb_field f;
	int rc, present;
	int64_t ms;

	if ((rc = want(d, mf, GS_PB_LEN, "", "metadata")) < 0)
		return rc;
	m->data = mf->data;
	m->len = mf->len;
	gs_pb_sub(&r, mf);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		switch (f.num) {
		case 1:
			rc = sdup(d, &f, "metadata", "name", ABSENT_IF_EMPTY, &m->name);
			break;
		case 3:
			rc = sdup(d, &f, "metadata", "namespace", ABSENT_IF_EMPTY, &m->ns);
			break;
		case 5:
			rc = sdup(d, &f, "metadata", "uid", ABSENT_IF_EMPTY, &m->uid);
			break;
		case 6:
			rc = sdup(d, &f, "metadata", "resourceVersion", ABSENT_IF_EMPTY, &m->rv);
			break;
		case 8:
			rc = time_ms(d, &f, "creationTimestamp", &ms, &present);
			m->created_ms = ms;
			break;
		case 9:
			rc = time_ms(d, &f, "deletionTimestamp", &ms, &present);
			m->deleting = 1; /* a pointer in Go: sent only when set */
			break;
		case 11:
		case 12:
		case 13:
			rc = want(d, &f, GS_PB_LEN, "metadata", f.num == 11 ? "labels" : f.num == 12 ? "annotations"
											 : "ownerReferences");
			break;
		default:
			rc = 0;
		}
		if (rc < 0)
			return rc;
	}
	return rc < 0 ? pbad(d, &r, "metadata") : 0;
}

/* The value of one key of the labels (11) or annotations (12) map, copied; NULL when absent. */
static int meta_map_str(struct pctx *d, const struct meta *m, uint32_t num, const char *key, char **out)
{
	struct gs_pb r;
	struct gs_pb_field f, val;
	const char *mapname = num == 11 ? "metadata.labels" : "metadata.annotations";
	int rc;

	*out = NULL;
	if (!key)
		return 0;
	gs_pb_init(&r, m->data, m->len);
	while (gs_pb_next(&r, &f) > 0) {
		const char *k, *s;
		size_t kn, sn;
		if (f.num != num)
			continue;
		if ((rc = map_entry(d, &f, mapname, &k, &kn, &val)) < 0)
			return rc;
		if (!eq(k, kn, key))
			continue;
		if ((rc = map_sval(d, &val, mapname, k, kn, &s, &sn)) < 0)
			return rc;
		free(*out);
		if (!(*out = strndup(s, sn)))
			return pnomem(d);
	}
	return 0;
}

/* OwnerReference: 1 kind, 3 name, 4 uid, 6 controller; the first controller counts. */
static int owner(struct pctx *d, const struct meta *m, struct gs_pod_obj *out)
{
	struct gs_pb r, o;
	struct gs_pb_field f, g;
	char path[64];
	int i = 0, rc;

	gs_pb_init(&r, m->data, m->len);
	while (gs_pb_next(&r, &f) > 0) {
		char *kind = NULL, *name = NULL, *uid = NULL;
		uint64_t controller = 0;
		if (f.num != 13)
			continue;
		snprintf(path, sizeof(path), "metadata.ownerReferences[%d]", i++);
		gs_pb_sub(&o, &f);
		while ((rc = gs_pb_next(&o, &g)) > 0) {
			if (g.num == 1)
				rc = sdup(d, &g, path, "kind", KEEP_EMPTY, &kind);
			else if (g.num == 3)
				rc = sdup(d, &g, path, "name", KEEP_EMPTY, &name);
			else if (g.num == 4)
				rc = sdup(d, &g, path, "uid", KEEP_EMPTY, &uid);
			else if (g.num == 6)
				rc = uvarint(d, &g, path, "controller", &controller);
			if (rc < 0)
				break;
		}
		if (rc < 0 && o.err)
			rc = pbad(d, &o, path);
		if (rc == 0 && controller && !out->owner_kind) {
			out->owner_kind = kind;
			out->owner_name = name;
			out->owner_uid = uid;
			kind = name = uid = NULL;
		}
		free(kind);
		free(name);
		free(uid);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- pod spec ------------------------------------------------------------------------------------ */

struct cuda_fold {
	int n, n_unset, n_other, differ;
	const char *value; /* the first literal value (borrowed from the message) */
	size_t value_len;
};

/* EnvVar: 1 name, 2 value, 3 valueFrom. A later duplicate wins, as in the kubelet. */
static int fold_env(struct pctx *d, const uint8_t *data, size_t len, const char *cpath, struct cuda_fold *fo)
{
	struct gs_pb r, e;
	struct gs_pb_field f, g;
	char path[96];
	int j = 0, state = 0, rc;
	const char *val = NULL;
	size_t val_len = 0;

	gs_pb_init(&r, data, len);
	while (gs_pb_next(&r, &f) > 0) {
		const char *name = NULL, *v = NULL;
		size_t nn = 0, vn = 0;
		int from = 0;
		if (f.num != 7)
			continue;
		snprintf(path, sizeof(path), "%s.env[%d]", cpath, j++);
		if ((rc = want(d, &f, GS_PB_LEN, cpath, "env")) < 0)
			return rc;
		gs_pb_sub(&e, &f);
		while ((rc = gs_pb_next(&e, &g)) > 0) {
			if (g.num == 1)
				rc = sref(d, &g, path, "name", &name, &nn);
			else if (g.num == 2)
				rc = sref(d, &g, path, "value", &v, &vn);
			else if (g.num == 3)
				rc = want(d, &g, GS_PB_LEN, path, "valueFrom"), from = 1;
			if (rc < 0)
				return rc;
		}
		if (rc < 0)
			return pbad(d, &e, path);
		if (!eq(name, nn, "CUDA_VISIBLE_DEVICES"))
			continue;
		if (from) {
			state = 2;
			val = NULL;
		} else {
			state = 1;
			val = v ? v : "";
			val_len = v ? vn : 0;
		}
	}
	fo->n++;
	if (state == 0) {
		fo->n_unset++;
	} else if (state == 2) {
		fo->n_other++;
	} else if (!fo->value) {
		fo->value = val;
		fo->value_len = val_len;
	} else if (fo->value_len != val_len || memcmp(fo->value, val, val_len) != 0) {
		fo->differ = 1;
	}
	return 0;
}

/* ContainerPort: 2 hostPort, 4 protocol, 5 hostIP. */
static int port(struct pctx *d, const struct gs_pb_field *pf, const char *path, struct gs_pod_obj *out, int cap)
{
	struct gs_pb r;
	struct gs_pb_field g;
	const char *proto = NULL, *ip = NULL;
	size_t pn = 0, ipn = 0;
	int64_t hp = 0;
	int rc;

	if ((rc = want(d, pf, GS_PB_LEN, path, "")) < 0)
		return rc;
	gs_pb_sub(&r, pf);
	while ((rc = gs_pb_next(&r, &g)) > 0) {
		if (g.num == 2)
			rc = ivarint(d, &g, path, "hostPort", 0, 65535, &hp);
		else if (g.num == 4)
			rc = sref(d, &g, path, "protocol", &proto, &pn);
		else if (g.num == 5)
			rc = sref(d, &g, path, "hostIP", &ip, &ipn);
		if (rc < 0)
			return rc;
	}
	if (rc < 0)
		return pbad(d, &r, path);
	if (hp == 0)
		return 0;
	if (out->n_host_ports >= cap)
		return pfail(d, "%s: more host ports than counted", path);
	struct gs_host_port *h = &out->host_ports[out->n_host_ports];
	h->port = (int)hp;
	if (pn == 0 || eq(proto, pn, "TCP"))
		h->proto = 'T';
	else if (eq(proto, pn, "UDP"))
		h->proto = 'U';
	else if (eq(proto, pn, "SCTP"))
		h->proto = 'S';
	else
		return pfail(d, "%s.protocol \"%.*s\" is not TCP, UDP or SCTP", path, (int)(pn < 16 ? pn : 16), proto);
	if (ipn && !eq(ip, ipn, "0.0.0.0") && !(h->host_ip = strndup(ip, ipn)))
		return pnomem(d);
	out->n_host_ports++;
	return 0;
}

/* Container: 6 ports, 7 env, 8 resources (ResourceRequirements: 2 requests). */
static int container(struct pctx *d, const struct gs_pb_field *cf, const char *cpath, int regular,
		     struct gs_resources *req, struct gs_pod_obj *out, int cap, struct cuda_fold *fo)
{
	struct gs_pb r;
	struct gs_pb_field f;
	char path[96];
	int i = 0, rc;

	if ((rc = want(d, cf, GS_PB_LEN, cpath, "")) < 0)
		return rc;
	gs_pb_sub(&r, cf);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		if (f.num == 8) {
			snprintf(path, sizeof(path), "%s.resources", cpath);
			if ((rc = want(d, &f, GS_PB_LEN, cpath, "resources")) < 0)
				return rc;
			gs_resources_free(req);
			if ((rc = resources(d, f.data, f.len, 2, strcat(path, ".requests"), req)) < 0)
				return rc;
		} else if (f.num == 6) {
			snprintf(path, sizeof(path), "%s.ports[%d]", cpath, i++);
			if (regular && (rc = port(d, &f, path, out, cap)) < 0)
				return rc;
		}
	}
	if (rc < 0)
		return pbad(d, &r, cpath);
	return fold_env(d, cf->data, cf->len, cpath, fo);
}

/* Host ports with hostPort > 0 in the regular containers (2), so the array is sized once. */
static int count_host_ports(const uint8_t *spec, size_t len)
{
	struct gs_pb r, c, p;
	struct gs_pb_field f, g, h;
	int n = 0;

	gs_pb_init(&r, spec, len);
	while (gs_pb_next(&r, &f) > 0) {
		if (f.num != 2 || f.wire != GS_PB_LEN)
			continue;
		gs_pb_sub(&c, &f);
		while (gs_pb_next(&c, &g) > 0) {
			if (g.num != 6 || g.wire != GS_PB_LEN)
				continue;
			gs_pb_sub(&p, &g);
			while (gs_pb_next(&p, &h) > 0)
				n += h.num == 2 && h.wire == GS_PB_VARINT && (int64_t)h.v > 0;
		}
	}
	return n;
}

/* PodSpec 20 initContainers, 2 containers. JSON reads init containers first; the fold does not depend
 * on the order, and each list keeps its own. */
static int containers(struct pctx *d, const uint8_t *spec, size_t len, struct gs_pod_obj *out)
{
	struct cuda_fold fo = {0};
	char cpath[64];
	int rc;

	for (int l = 0; l < 2; l++) {
		uint32_t num = l ? 2 : 20;
		struct gs_resources **req = l ? &out->ctr_req : &out->init_req;
		int *n_req = l ? &out->n_ctr : &out->n_init;
		int n = gs_pb_count(spec, len, num), i = 0, cap = 0;
		struct gs_pb r;
		struct gs_pb_field f;

		if (n <= 0)
			continue;
		if (!(*req = calloc((size_t)n, sizeof(**req))))
			return pnomem(d);
		*n_req = n;
		if (l == 1 && (cap = count_host_ports(spec, len)) > 0 &&
		    !(out->host_ports = calloc((size_t)cap, sizeof(*out->host_ports))))
			return pnomem(d);
		gs_pb_init(&r, spec, len);
		while (gs_pb_next(&r, &f) > 0) {
			if (f.num != num)
				continue;
			snprintf(cpath, sizeof(cpath), "spec.%s[%d]", l ? "containers" : "initContainers", i);
			if ((rc = container(d, &f, cpath, l, &(*req)[i], out, cap, &fo)) < 0)
				return rc;
			i++;
		}
	}
	if (out->n_host_ports == 0) {
		free(out->host_ports);
		out->host_ports = NULL;
	}
	out->n_containers = fo.n;
	if (fo.n_unset == fo.n) {
		out->cuda_state = GS_CUDA_UNSET;
	} else if (fo.n_unset == 0 && fo.n_other == 0 && !fo.differ) {
		out->cuda_state = GS_CUDA_SAME;
		if (!(out->cuda_value = strndup(fo.value, fo.value_len)))
			return pnomem(d);
	} else {
		out->cuda_state = GS_CUDA_MIXED;
	}
	return 0;
}

static const char *const sel_ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};

/* NodeSelectorRequirement: 1 key, 2 operator, 3 values. */
static int sel_req(struct pctx *d, const struct gs_pb_field *qf, const char *path, int field, struct gs_sel_req *out)
{
	struct gs_pb r;
	struct gs_pb_field g;
	const char *op = NULL;
	size_t opn = 0;
	int n, i = 0, rc;

	if ((rc = want(d, qf, GS_PB_LEN, path, "")) < 0)
		return rc;
	n = gs_pb_count(qf->data, qf->len, 3);
	if (n > 0 && !(out->values = calloc((size_t)n, sizeof(*out->values))))
		return pnomem(d);
	gs_pb_sub(&r, qf);
	while ((rc = gs_pb_next(&r, &g)) > 0) {
		if (g.num == 1) {
			rc = sdup(d, &g, path, "key", KEEP_EMPTY, &out->key);
		} else if (g.num == 2) {
			rc = sref(d, &g, path, "operator", &op, &opn);
		} else if (g.num == 3) {
			char vkey[24];
			snprintf(vkey, sizeof(vkey), "values[%d]", i);
			rc = sdup(d, &g, path, vkey, KEEP_EMPTY, &out->values[i]);
			out->n_values = ++i;
		}
		if (rc < 0)
			return rc;
	}
	if (rc < 0)
		return pbad(d, &r, path);
	if (!out->key)
		return pfail(d, "%s.key is missing", path);
	out->field = field;
	out->op = GS_SEL_INVALID;
	for (size_t k = 0; k < sizeof(sel_ops) / sizeof(sel_ops[0]); k++)
		if (eq(op, opn, sel_ops[k]))
			out->op = (enum gs_sel_op)k;
	return 0;
}

/* NodeSelectorTerm: 1 matchExpressions, 2 matchFields; expressions first, as decode.c orders them. */
static int term(struct pctx *d, const struct gs_pb_field *tf, const char *path, struct gs_sel_term *out)
{
	static const char *const lists[] = {"matchExpressions", "matchFields"};
	struct gs_pb r;
	struct gs_pb_field f;
	char qpath[224];
	int n, j = 0, rc;

	if ((rc = want(d, tf, GS_PB_LEN, path, "")) < 0)
		return rc;
	if ((n = gs_pb_count(tf->data, tf->len, 1)) < 0)
		return pfail(d, "%s: malformed protobuf", path);
	n += gs_pb_count(tf->data, tf->len, 2);
	if (n == 0)
		return 0;
	if (!(out->reqs = calloc((size_t)n, sizeof(*out->reqs))))
		return pnomem(d);
	out->n_reqs = n;
	for (int l = 0; l < 2; l++) {
		int i = 0;
		gs_pb_init(&r, tf->data, tf->len);
		while (gs_pb_next(&r, &f) > 0) {
			if (f.num != (uint32_t)l + 1)
				continue;
			snprintf(qpath, sizeof(qpath), "%s.%s[%d]", path, lists[l], i++);
			if ((rc = sel_req(d, &f, qpath, l, &out->reqs[j++])) < 0)
				return rc;
		}
	}
	return 0;
}

#define REQUIRED_AFFINITY "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"

/* Affinity 1 nodeAffinity; NodeAffinity 1 required; NodeSelector 1 nodeSelectorTerms. */
static int affinity(struct pctx *d, const struct gs_pb_field *af, struct gs_pod_obj *out)
{
	static const char *const paths[] = {"spec.affinity", "spec.affinity.nodeAffinity", REQUIRED_AFFINITY};
	struct gs_pb r;
	struct gs_pb_field f = *af, g, req = {0};
	char path[160];
	int i = 0, n, rc;

	/* Down the chain of field 1s; the last of each wins (protobuf would merge them: none repeats). */
	for (int level = 0; level < 2; level++) {
		int found = 0;
		if ((rc = want(d, &f, GS_PB_LEN, level ? "spec.affinity" : "spec", level ? "nodeAffinity" : "affinity")) < 0)
			return rc;
		gs_pb_sub(&r, &f);
		while ((rc = gs_pb_next(&r, &g)) > 0)
			if (g.num == 1)
				req = g, found = 1;
		if (rc < 0)
			return pbad(d, &r, paths[level]);
		if (!found)
			return 0;
		f = req;
	}
	if ((rc = want(d, &req, GS_PB_LEN, "spec.affinity.nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")) < 0)
		return rc;
	out->has_affinity = 1;
	if ((n = gs_pb_count(req.data, req.len, 1)) < 0)
		return pfail(d, "%s: malformed protobuf", REQUIRED_AFFINITY);
	if (n == 0)
		return 0;
	if (!(out->terms = calloc((size_t)n, sizeof(*out->terms))))
		return pnomem(d);
	out->n_terms = n;
	gs_pb_sub(&r, &req);
	while (gs_pb_next(&r, &g) > 0) {
		if (g.num != 1)
			continue;
		snprintf(path, sizeof(path), REQUIRED_AFFINITY ".nodeSelectorTerms[%d]", i);
		if ((rc = term(d, &g, path, &out->terms[i++])) < 0)
			return rc;
	}
	return 0;
}

static enum gs_taint_effect effect_of(const char *s, size_t n, enum gs_taint_effect if_empty)
{
	if (!s || n == 0)
		return if_empty;
	if (eq(s, n, "NoSchedule"))
		return GS_EFFECT_NO_SCHEDULE;
	if (eq(s, n, "PreferNoSchedule"))
		return GS_EFFECT_PREFER_NO_SCHEDULE;
	if (eq(s, n, "NoExecute"))
		return GS_EFFECT_NO_EXECUTE;
	return GS_EFFECT_OTHER;
}

/* Toleration: 1 key, 2 operator, 3 value, 4 effect, 5 tolerationSeconds (see decode.c for the rules). */
static int tolerations(struct pctx *d, const uint8_t *spec, size_t len, struct gs_pod_obj *out)
{
	struct gs_pb r, t;
	struct gs_pb_field f, g;
	char path[48];
	int n = gs_pb_count(spec, len, 22), i = 0, rc;

	if (n <= 0)
		return 0;
	if (!(out->tolerations = calloc((size_t)n, sizeof(*out->tolerations))))
		return pnomem(d);
	gs_pb_init(&r, spec, len);
	while (gs_pb_next(&r, &f) > 0) {
		struct gs_toleration *o = &out->tolerations[out->n_tolerations];
		const char *key = NULL, *op = NULL, *value = NULL, *effect = NULL;
		size_t kn = 0, on = 0, vn = 0, en = 0;
		int64_t secs = 0;
		int has_secs = 0;
		if (f.num != 22)
			continue;
		snprintf(path, sizeof(path), "spec.tolerations[%d]", i++);
		if ((rc = want(d, &f, GS_PB_LEN, "spec", "tolerations")) < 0)
			return rc;
		gs_pb_sub(&t, &f);
		while ((rc = gs_pb_next(&t, &g)) > 0) {
			if (g.num == 1)
				rc = sref(d, &g, path, "key", &key, &kn);
			else if (g.num == 2)
				rc = sref(d, &g, path, "operator", &op, &on);
			else if (g.num == 3)
				rc = sref(d, &g, path, "value", &value, &vn);
			else if (g.num == 4)
				rc = sref(d, &g, path, "effect", &effect, &en);
			else if (g.num == 5)
				rc = ivarint(d, &g, path, "tolerationSeconds", INT64_MIN, INT64_MAX, &secs), has_secs = 1;
			if (rc < 0)
				return rc;
		}
		if (rc < 0)
			return pbad(d, &t, path);
		if (on && !eq(op, on, "Equal") && !eq(op, on, "Exists"))
			continue;
		o->exists = eq(op, on, "Exists");
		o->effect = effect_of(effect, en, GS_EFFECT_ALL);
		o->seconds = !has_secs ? -1 : secs < 0 ? 0 : secs;
		out->n_tolerations++;
		/* value is omitempty in JSON: "" reads as absent there, so here too. */
		if ((kn && !(o->key = strndup(key, kn))) || (vn && !(o->value = strndup(value, vn))))
			return pnomem(d);
	}
	if (out->n_tolerations == 0) {
		free(out->tolerations);
		out->tolerations = NULL;
	}
	return 0;
}

/* PodSpec 38 schedulingGates (Kubernetes 1.26+), PodSchedulingGate 1 name. */
static int gates(struct pctx *d, const uint8_t *spec, size_t len, struct gs_pod_obj *out)
{
	struct gs_pb r, g;
	struct gs_pb_field f, h;
	char path[48];
	int i = 0, rc;

	gs_pb_init(&r, spec, len);
	while (gs_pb_next(&r, &f) > 0) {
		if (f.num != 38)
			continue;
		snprintf(path, sizeof(path), "spec.schedulingGates[%d]", i);
		if ((rc = want(d, &f, GS_PB_LEN, "spec", "schedulingGates")) < 0)
			return rc;
		gs_pb_sub(&g, &f);
		while ((rc = gs_pb_next(&g, &h)) > 0)
			if (h.num == 1 && i == 0 && (rc = sdup(d, &h, path, "name", KEEP_EMPTY, &out->first_gate)) < 0)
				return rc;
		if (rc < 0)
			return pbad(d, &g, path);
		i++;
	}
	out->n_gates = i;
	return 0;
}

/* PodSpec: scalars and the affinity in one pass, the repeated parts in their own passes. */
static int pod_spec(struct pctx *d, const struct gs_pb_field *sf, struct gs_pod_obj *out)
{
	struct gs_pb r;
	struct gs_pb_field f, aff = {0};
	int has_aff = 0, rc;

	if ((rc = want(d, sf, GS_PB_LEN, "", "spec")) < 0)
		return rc;
	gs_pb_sub(&r, sf);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		switch (f.num) {
		case 10:
			rc = sdup(d, &f, "spec", "nodeName", ABSENT_IF_EMPTY, &out->node_name);
			break;
		case 19:
			rc = sdup(d, &f, "spec", "schedulerName", ABSENT_IF_EMPTY, &out->scheduler_name);
			break;
		case 25:
			rc = ivarint(d, &f, "spec", "priority", INT32_MIN, INT32_MAX, &out->priority);
			break;
		case 18:
			aff = f;
			has_aff = 1;
			break;
		case 7:
			rc = want(d, &f, GS_PB_LEN, "spec", "nodeSelector");
			break;
		case 32:
			rc = want(d, &f, GS_PB_LEN, "spec", "overhead");
			break;
		case 2:
		case 20:
			rc = want(d, &f, GS_PB_LEN, "spec", f.num == 2 ? "containers" : "initContainers");
			break;
		}
		if (rc < 0)
			return rc;
	}
	if (rc < 0)
		return pbad(d, &r, "spec");
	if ((rc = gates(d, sf->data, sf->len, out)) < 0 || (rc = containers(d, sf->data, sf->len, out)) < 0 ||
	    (rc = resources(d, sf->data, sf->len, 32, "spec.overhead", &out->overhead)) < 0 ||
	    (rc = labels(d, sf->data, sf->len, 7, "spec.nodeSelector", &out->node_selector, &out->n_node_selector)) < 0 ||
	    (has_aff && (rc = affinity(d, &aff, out)) < 0) || (rc = tolerations(d, sf->data, sf->len, out)) < 0)
		return rc;
	return 0;
}

/* ---- pods ---------------------------------------------------------------------------------------- */

/* Pod: 1 metadata, 2 spec, 3 status (PodStatus 1 phase). */
static int decode_pod(struct pctx *d, const uint8_t *data, size_t len, const char *map_annotation,
		      struct gs_pod_obj *out)
{
	struct gs_pb r, s;
	struct gs_pb_field f, g, spec = {0};
	struct meta m = {0};
	char *shared = NULL, *phase = NULL;
	int has_spec = 0, rc;

	gs_pb_init(&r, data, len);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		if (f.num == 1) {
			meta_free(&m);
			memset(&m, 0, sizeof(m));
			if ((rc = meta_scalars(d, &f, &m)) < 0)
				goto out;
		} else if (f.num == 2) {
			spec = f;
			has_spec = 1;
		} else if (f.num == 3) {
			if ((rc = want(d, &f, GS_PB_LEN, "", "status")) < 0)
				goto out;
			gs_pb_sub(&s, &f);
			while ((rc = gs_pb_next(&s, &g)) > 0)
				if (g.num == 1 && (rc = sdup(d, &g, "status", "phase", ABSENT_IF_EMPTY, &phase)) < 0)
					goto out;
			if (rc < 0) {
				rc = pbad(d, &s, "status");
				goto out;
			}
		}
	}
	if (rc < 0) {
		rc = pbad(d, &r, "");
		goto out;
	}
	out->ns = m.ns;
	out->name = m.name;
	out->uid = m.uid;
	out->resource_version = m.rv;
	m.ns = m.name = m.uid = m.rv = NULL;
	if (!out->ns || !out->name) {
		rc = pfail(d, "metadata.%s is missing", out->ns ? "name" : "namespace");
		goto out;
	}
	snprintf(d->what, sizeof(d->what), "pod %s/%s", out->ns, out->name);
	if (!out->uid) {
		rc = pfail(d, "metadata.uid is missing");
		goto out;
	}
	out->created_ms = m.created_ms;
	out->deleting = m.deleting;
	if ((rc = meta_map_str(d, &m, 11, GS_LABEL_POD_INDEX, &out->label_pod_index)) < 0 ||
	    (rc = meta_map_str(d, &m, 12, GS_ANN_JOB_INDEX, &out->job_index)) < 0 ||
	    (rc = meta_map_str(d, &m, 12, GS_ANN_ASSIGNED, &out->assigned)) < 0 ||
	    (rc = meta_map_str(d, &m, 12, map_annotation, &out->map_text)) < 0 ||
	    (rc = meta_map_str(d, &m, 12, GS_ANN_ALLOW_SHARED, &shared)) < 0 || (rc = owner(d, &m, out)) < 0)
		goto out;
	out->allow_shared = shared && strcmp(shared, "true") == 0;
	if (has_spec && (rc = pod_spec(d, &spec, out)) < 0)
		goto out;
	if (!has_spec)
		out->cuda_state = GS_CUDA_UNSET;
	out->terminal = phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
out:
	meta_free(&m);
	free(shared);
	free(phase);
	return rc;
}

int gs_decode_pod_pb(const void *data, size_t len, const char *map_annotation, struct gs_pod_obj *out, char *err,
		     size_t errlen)
{
	struct pctx d = {.err = err, .errlen = errlen, .what = "pod"};

	memset(out, 0, sizeof(*out));
	int r = decode_pod(&d, data, len, map_annotation, out);
	if (r < 0) {
		gs_pod_obj_free(out);
		memset(out, 0, sizeof(*out));
	}
	return r;
}

/* ---- nodes --------------------------------------------------------------------------------------- */

/* NodeSpec: 4 unschedulable, 5 taints (Taint: 1 key, 2 value, 3 effect). */
static int node_spec(struct pctx *d, const struct gs_pb_field *sf, struct gs_node_obj *out)
{
	struct gs_pb r, t;
	struct gs_pb_field f, g;
	char path[40];
	int n, i = 0, rc;
	uint64_t v = 0;

	if ((rc = want(d, sf, GS_PB_LEN, "", "spec")) < 0)
		return rc;
	if ((n = gs_pb_count(sf->data, sf->len, 5)) < 0)
		return pfail(d, "spec: malformed protobuf");
	if (n > 0 && !(out->taints = calloc((size_t)n, sizeof(*out->taints))))
		return pnomem(d);
	gs_pb_sub(&r, sf);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		if (f.num == 4) {
			if ((rc = uvarint(d, &f, "spec", "unschedulable", &v)) < 0)
				return rc;
			out->unschedulable = v != 0;
		} else if (f.num == 5) {
			struct gs_taint *o = &out->taints[i];
			const char *effect = NULL;
			size_t en = 0;
			snprintf(path, sizeof(path), "spec.taints[%d]", i++);
			out->n_taints = i;
			if ((rc = want(d, &f, GS_PB_LEN, "spec", "taints")) < 0)
				return rc;
			gs_pb_sub(&t, &f);
			while ((rc = gs_pb_next(&t, &g)) > 0) {
				if (g.num == 1)
					rc = sdup(d, &g, path, "key", KEEP_EMPTY, &o->key);
				else if (g.num == 2)
					rc = sdup(d, &g, path, "value", ABSENT_IF_EMPTY, &o->value);
				else if (g.num == 3)
					rc = sref(d, &g, path, "effect", &effect, &en);
				if (rc < 0)
					return rc;
			}
			if (rc < 0)
				return pbad(d, &t, path);
			o->effect = effect_of(effect, en, GS_EFFECT_OTHER);
		}
	}
	return rc < 0 ? pbad(d, &r, "spec") : 0;
}

/* NodeStatus: 2 allocatable, 4 conditions (NodeCondition: 1 type, 2 status). */
static int node_status(struct pctx *d, const struct gs_pb_field *sf, struct gs_node_obj *out)
{
	struct gs_pb r, c;
	struct gs_pb_field f, g;
	char path[64];
	int i = 0, rc;

	if ((rc = want(d, sf, GS_PB_LEN, "", "status")) < 0)
		return rc;
	gs_pb_sub(&r, sf);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		const char *type = NULL, *st = NULL;
		size_t tn = 0, sn = 0;
		if (f.num == 2 && (rc = want(d, &f, GS_PB_LEN, "status", "allocatable")) < 0)
			return rc;
		if (f.num != 4)
			continue;
		snprintf(path, sizeof(path), "status.conditions[%d]", i++);
		if ((rc = want(d, &f, GS_PB_LEN, "status", "conditions")) < 0)
			return rc;
		gs_pb_sub(&c, &f);
		while ((rc = gs_pb_next(&c, &g)) > 0) {
			if (g.num == 1)
				rc = sref(d, &g, path, "type", &type, &tn);
			else if (g.num == 2)
				rc = sref(d, &g, path, "status", &st, &sn);
			if (rc < 0)
				return rc;
		}
		if (rc < 0)
			return pbad(d, &c, path);
		if (eq(type, tn, "Ready"))
			out->ready = eq(st, sn, "True");
	}
	if (rc < 0)
		return pbad(d, &r, "status");
	if ((rc = resources(d, sf->data, sf->len, 2, "status.allocatable", &out->alloc)) < 0)
		return rc;
	for (i = 0; i < out->alloc.n_ext; i++)
		if (strcmp(out->alloc.ext[i].name, GS_RES_GPU) == 0)
			out->gpus = out->alloc.ext[i].value;
	return 0;
}

/* Node: 1 metadata, 2 spec, 3 status. */
static int decode_node(struct pctx *d, const uint8_t *data, size_t len, struct gs_node_obj *out)
{
	struct gs_pb r;
	struct gs_pb_field f, spec = {0}, status = {0};
	struct meta m = {0};
	int has_spec = 0, has_status = 0, rc;

	out->gpus = -1;
	gs_pb_init(&r, data, len);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		if (f.num == 1) {
			meta_free(&m);
			memset(&m, 0, sizeof(m));
			if ((rc = meta_scalars(d, &f, &m)) < 0)
				goto out;
		} else if (f.num == 2) {
			spec = f;
			has_spec = 1;
		} else if (f.num == 3) {
			status = f;
			has_status = 1;
		}
	}
	if (rc < 0) {
		rc = pbad(d, &r, "");
		goto out;
	}
	out->name = m.name;
	out->resource_version = m.rv;
	m.name = m.rv = NULL;
	if (!out->name) {
		rc = pfail(d, "metadata.name is missing");
		goto out;
	}
	snprintf(d->what, sizeof(d->what), "node %s", out->name);
	if ((rc = labels(d, m.data, m.len, 11, "metadata.labels", &out->labels, &out->n_labels)) < 0 ||
	    (has_spec && (rc = node_spec(d, &spec, out)) < 0) || (has_status && (rc = node_status(d, &status, out)) < 0))
		goto out;
out:
	meta_free(&m);
	return rc;
}

int gs_decode_node_pb(const void *data, size_t len, struct gs_node_obj *out, char *err, size_t errlen)
{
	struct pctx d = {.err = err, .errlen = errlen, .what = "node"};

	memset(out, 0, sizeof(*out));
	int r = decode_node(&d, data, len, out);
	if (r < 0) {
		gs_node_obj_free(out);
		memset(out, 0, sizeof(*out));
		out->gpus = -1;
	}
	return r;
}

/* ---- envelope, status, watch events, lists ------------------------------------------------------- */

int gs_decode_is_protobuf(const char *content_type)
{
	static const char pb[] = "application/vnd.kubernetes.protobuf";
	size_t n = sizeof(pb) - 1;
	if (!content_type)
		return 0;
	while (*content_type == ' ')
		content_type++;
	return strncasecmp(content_type, pb, n) == 0 &&
	       (content_type[n] == '\0' || content_type[n] == ';' || content_type[n] == ' ');
}

/*
 * `k8s\0` then runtime.Unknown: 1 typeMeta (TypeMeta: 1 apiVersion, 2 kind), 2 raw, 3 contentEncoding,
 * 4 contentType. *raw and *raw_len: the object's own message; kind copied into kind[kindlen].
 */
static int unwrap(struct pctx *d, const uint8_t *data, size_t len, const uint8_t **raw, size_t *raw_len, char *kind,
		  size_t kindlen)
{
	struct gs_pb r, t;
	struct gs_pb_field f, g;
	const char *s;
	size_t n;
	int rc;

	*raw = (const uint8_t *)"";
	*raw_len = 0;
	kind[0] = '\0';
	if (!data || len < sizeof(pb_magic) || memcmp(data, pb_magic, sizeof(pb_magic)) != 0)
		return pfail(d, "not a Kubernetes protobuf object (no \"k8s\\0\" prefix)");
	gs_pb_init(&r, data + sizeof(pb_magic), len - sizeof(pb_magic));
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		if (f.num == 1) {
			if ((rc = want(d, &f, GS_PB_LEN, "", "typeMeta")) < 0)
				return rc;
			gs_pb_sub(&t, &f);
			while ((rc = gs_pb_next(&t, &g)) > 0)
				if (g.num == 2) {
					if ((rc = sref(d, &g, "typeMeta", "kind", &s, &n)) < 0)
						return rc;
					snprintf(kind, kindlen, "%.*s", (int)n, s);
				}
			if (rc < 0)
				return pbad(d, &t, "typeMeta");
		} else if (f.num == 2) {
			if ((rc = want(d, &f, GS_PB_LEN, "", "raw")) < 0)
				return rc;
			*raw = f.data;
			*raw_len = f.len;
		} else if (f.num == 3) {
			if ((rc = sref(d, &f, "", "contentEncoding", &s, &n)) < 0)
				return rc;
			if (n)
				return pfail(d, "content encoding \"%.*s\" is not supported", (int)(n < 32 ? n : 32), s);
		}
	}
	return rc < 0 ? pbad(d, &r, "envelope") : 0;
}

int gs_decode_unwrap_pb(const void *body, size_t len, const uint8_t **raw, size_t *raw_len, char *kind,
			size_t kindlen, char *err, size_t errlen)
{
	struct pctx d = {.err = err, .errlen = errlen, .what = "object"};
	return unwrap(&d, body, len, raw, raw_len, kind, kindlen);
}

/* metav1.Status: 3 message, 4 reason, 6 code. */
static int status_obj(struct pctx *d, const uint8_t *data, size_t len, int *code, char **reason, char **message)
{
	struct gs_pb r;
	struct gs_pb_field f;
	int64_t c = 0;
	int rc;

	gs_pb_init(&r, data, len);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		if (f.num == 3)
			rc = sdup(d, &f, "", "message", ABSENT_IF_EMPTY, message);
		else if (f.num == 4)
			rc = sdup(d, &f, "", "reason", ABSENT_IF_EMPTY, reason);
		else if (f.num == 6 && (rc = ivarint(d, &f, "", "code", 0, 999, &c)) < 0)
			rc = pfail(d, "status code is not an HTTP code");
		if (rc < 0)
			return rc;
	}
	*code = (int)c;
	return rc < 0 ? pbad(d, &r, "status") : 0;
}

int gs_decode_status_pb(const void *body, size_t len, int *code, char **reason, char **message)
{
	struct pctx d = {0};
	const uint8_t *raw;
	size_t raw_len;
	char kind[64];
	int r;

	*code = 0;
	*reason = NULL;
	*message = NULL;
	r = unwrap(&d, body, len, &raw, &raw_len, kind, sizeof(kind));
	if (r == 0 && strcmp(kind, "Status") != 0)
		r = -EINVAL;
	if (r == 0)
		r = status_obj(&d, raw, raw_len, code, reason, message);
	if (r < 0) {
		free(*reason);
		free(*message);
		*code = 0;
		*reason = NULL;
		*message = NULL;
	}
	return r;
}

static const char *const watch_types[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};

/* WatchEvent: 1 type, 2 object (RawExtension: 1 raw, holding the `k8s\0` envelope). */
static int decode_event(struct pctx *d, const uint8_t *data, size_t len, const char *map_annotation,
			struct gs_watch_event *ev)
{
	struct gs_pb r, x;
	struct gs_pb_field f, g;
	const char *type = NULL;
	size_t tn = 0, t;
	const uint8_t *env = NULL, *raw;
	size_t env_len = 0, raw_len;
	char kind[64];
	int rc;

	gs_pb_init(&r, data, len);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		if (f.num == 1 && (rc = sref(d, &f, "", "type", &type, &tn)) < 0)
			return rc;
		if (f.num == 2) {
			if ((rc = want(d, &f, GS_PB_LEN, "", "object")) < 0)
				return rc;
			gs_pb_sub(&x, &f);
			while ((rc = gs_pb_next(&x, &g)) > 0)
				if (g.num == 1) {
					if ((rc = want(d, &g, GS_PB_LEN, "object", "raw")) < 0)
						return rc;
					env = g.data;
					env_len = g.len;
				}
			if (rc < 0)
				return pbad(d, &x, "object");
		}
	}
	if (rc < 0)
		return pbad(d, &r, "");
	if (!type || tn == 0)
		return pfail(d, "no type");
	for (t = 0; t < sizeof(watch_types) / sizeof(watch_types[0]); t++)
		if (eq(type, tn, watch_types[t]))
			break;
	if (t == sizeof(watch_types) / sizeof(watch_types[0]))
		return pfail(d, "unknown event type \"%.*s\"", (int)(tn < 32 ? tn : 32), type);
	ev->type = (enum gs_watch_type)t;
	if (!env) {
		if (ev->type == GS_WATCH_ERROR)
			return 0;
		return pfail(d, "%s event without an object", watch_types[t]);
	}
	if ((rc = unwrap(d, env, env_len, &raw, &raw_len, kind, sizeof(kind))) < 0)
		return rc;
	if (ev->type == GS_WATCH_ERROR)
		return status_obj(d, raw, raw_len, &ev->status_code, &ev->status_reason, &ev->status_message);
	if (ev->type == GS_WATCH_BOOKMARK) {
		/* Only metadata.resourceVersion. */
		struct meta m = {0};
		gs_pb_init(&r, raw, raw_len);
		while ((rc = gs_pb_next(&r, &f)) > 0)
			if (f.num == 1) {
				meta_free(&m);
				memset(&m, 0, sizeof(m));
				if ((rc = meta_scalars(d, &f, &m)) < 0)
					break;
			}
		if (rc < 0 && r.err)
			rc = pbad(d, &r, "object");
		ev->resource_version = m.rv;
		m.rv = NULL;
		meta_free(&m);
		if (rc < 0)
			return rc;
		if (!ev->resource_version)
			return pfail(d, "BOOKMARK without a resourceVersion");
		return 0;
	}
	if (ev->kind == GS_OBJ_POD) {
		rc = gs_decode_pod_pb(raw, raw_len, map_annotation, &ev->pod, d->err, d->errlen);
		if (rc == 0 && ev->pod.resource_version && !(ev->resource_version = strdup(ev->pod.resource_version)))
			rc = pnomem(d);
	} else {
		rc = gs_decode_node_pb(raw, raw_len, &ev->node, d->err, d->errlen);
		if (rc == 0 && ev->node.resource_version && !(ev->resource_version = strdup(ev->node.resource_version)))
			rc = pnomem(d);
	}
	return rc;
}

int gs_decode_watch_event_pb(const void *frame, size_t len, enum gs_obj_kind kind, const char *map_annotation,
			     struct gs_watch_event *ev, char *err, size_t errlen)
{
	struct pctx d = {.err = err, .errlen = errlen, .what = "watch event"};
	int r;

	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->node.gpus = -1;
	r = decode_event(&d, frame, len, map_annotation, ev);
	if (r < 0) {
		gs_watch_event_free(ev);
		ev->kind = kind;
	}
	return r;
}

/* ListMeta: 2 resourceVersion, 3 continue. */
static int list_meta(struct pctx *d, const uint8_t *data, size_t len, char **rv, char **cont)
{
	struct gs_pb r;
	struct gs_pb_field f;
	int rc;

	gs_pb_init(&r, data, len);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		if (f.num == 2)
			rc = sdup(d, &f, "metadata", "resourceVersion", ABSENT_IF_EMPTY, rv);
		else if (f.num == 3 && cont)
			rc = sdup(d, &f, "metadata", "continue", ABSENT_IF_EMPTY, cont);
		if (rc < 0)
			return rc;
	}
	return rc < 0 ? pbad(d, &r, "metadata") : 0;
}

int gs_decode_list_meta_pb(const void *data, size_t len, char **resource_version, char *err, size_t errlen)
{
	struct pctx d = {.err = err, .errlen = errlen, .what = "list metadata"};
	*resource_version = NULL;
	int r = list_meta(&d, data, len, resource_version, NULL);
	if (r < 0) {
		free(*resource_version);
		*resource_version = NULL;
	}
	return r;
}

/* One item into its record and to cb: cb's result, -ENOMEM, or 1 when it does not decode. */
static int decode_item(const uint8_t *it, size_t len, enum gs_obj_kind kind, const char *map_annotation,
		       gs_decode_item_cb cb, void *ud, char *ierr, size_t ierrlen)
{
	struct gs_pod_obj pod;
	struct gs_node_obj node;
	int r = kind == GS_OBJ_POD ? gs_decode_pod_pb(it, len, map_annotation, &pod, ierr, ierrlen)
				   : gs_decode_node_pb(it, len, &node, ierr, ierrlen);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return 1;
	r = cb(kind, kind == GS_OBJ_POD ? (const void *)&pod : (const void *)&node, ud);
	if (kind == GS_OBJ_POD)
		gs_pod_obj_free(&pod);
	else
		gs_node_obj_free(&node);
	return r;
}

int gs_decode_list_item_pb(const void *data, size_t len, enum gs_obj_kind kind, const char *map_annotation,
			   gs_decode_item_cb cb, void *ud, unsigned *skipped)
{
	char ierr[512];
	int r = decode_item(data, len, kind, map_annotation, cb, ud, ierr, sizeof(ierr));
	if (r > 0) {
		gs_log_warn("%s list item skipped: %s", kind == GS_OBJ_POD ? "pod" : "node", ierr);
		(*skipped)++;
		return 0;
	}
	return r;
}

int gs_decode_list_pb_ex(const void *body, size_t len, enum gs_obj_kind kind, const char *map_annotation,
			 gs_decode_item_cb cb, void *ud, char **resource_version, char **continue_token,
			 unsigned *skipped, char *err, size_t errlen)
{
	struct pctx d = {.err = err, .errlen = errlen};
	const char *want_kind = kind == GS_OBJ_POD ? "PodList" : "NodeList";
	struct gs_pb r;
	struct gs_pb_field f;
	const uint8_t *raw;
	size_t raw_len;
	char *rv = NULL, *cont = NULL, ierr[512], tkind[64];
	unsigned nskip = 0;
	int i = 0, rc;

	snprintf(d.what, sizeof(d.what), "%s list", kind == GS_OBJ_POD ? "pod" : "node");
	*resource_version = NULL;
	*continue_token = NULL;
	if (skipped)
		*skipped = 0;
	if ((rc = unwrap(&d, body, len, &raw, &raw_len, tkind, sizeof(tkind))) < 0)
		return rc;
	if (strcmp(tkind, want_kind) != 0)
		return pfail(&d, "a %.32s, not a %s", tkind[0] ? tkind : "message without a kind", want_kind);
	/* The whole message is checked before any callback, as the JSON list is parsed first. */
	gs_pb_init(&r, raw, raw_len);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		if (f.num == 1 && ((rc = want(&d, &f, GS_PB_LEN, "", "metadata")) < 0 ||
				   (rc = list_meta(&d, f.data, f.len, &rv, &cont)) < 0))
			goto out;
		if (f.num == 2 && (rc = want(&d, &f, GS_PB_LEN, "", "items")) < 0)
			goto out;
	}
	if (rc < 0) {
		rc = pbad(&d, &r, "");
		goto out;
	}
	gs_pb_init(&r, raw, raw_len);
	while (gs_pb_next(&r, &f) > 0) {
		if (f.num != 2)
			continue;
		rc = decode_item(f.data, f.len, kind, map_annotation, cb, ud, ierr, sizeof(ierr));
		i++;
		if (rc == -ENOMEM) {
			rc = pnomem(&d);
			goto out;
		}
		if (rc > 0) {
			nskip++;
			gs_log_warn("%s: item %d skipped: %s", d.what, i - 1, ierr);
			continue;
		}
		if (rc < 0) {
			if (err && errlen)
				snprintf(err, errlen, "%s: item %d: stopped by the caller (%d)", d.what, i - 1, rc);
			goto out;
		}
	}
	rc = 0;
	*resource_version = rv;
	*continue_token = cont;
	rv = cont = NULL;
	if (skipped)
		*skipped = nskip;
out:
	free(rv);
	free(cont);
	return rc;
}
