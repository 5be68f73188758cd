/*
 * decode_pb.c: the protobuf half of decode.h (application/vnd.kubernetes.protobuf), filling the same
 * records as the JSON half in decode.c: Pod and Node messages (their envelopes, lists and watch events:
 * decode_pb_wire.c). See docs/k8s-decode.md, "Protobuf".
 *
 * Field numbers are those of the generated.proto files of Kubernetes (k8s.io/api/core/v1,
 * k8s.io/apimachinery/pkg/apis/meta/v1, .../pkg/runtime); each message read below names its fields.
 * Those of 1.20 come from the 1.20.2 tree; those newer than 1.20 ("NEWER" below) from
 * staging/src/k8s.io/api/core/v1/generated.proto as of Kubernetes 1.34 (read in a later tree, kubernetes
 * commit 0032f46b: a field's number never changes once released).
 * The rules are decode.c's, with two translations:
 *   - Go's protobuf code writes every non-pointer string, empty or not, where JSON leaves an empty
 *     omitempty string out. A string field whose JSON tag has omitempty therefore reads "" as absent
 *     (ABSENT_IF_EMPTY below); the few without omitempty (taint key, owner reference kind/name/uid,
 *     requirement key, gate name) keep "" as JSON shows it.
 *   - metav1.Time is {seconds, nanos} where JSON has RFC 3339 to the second. The zero time, which JSON
 *     writes as null, comes as an empty message from Go (0) or as year 1 from other writers: both 0.
 * A field with the wrong wire type fails the object with a message naming the field, as a JSON field of
 * the wrong type does; unknown fields are skipped.
 */
#include "k8s/decode_pb.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/pb.h"
#include "k8s/decode.h"
#include "k8s/decode_items.h"
#include "k8s/decode_pb_int.h"
#include "sched/gang.h"
#include "sched/gpm.h"
#include "sched/inuse.h"

int gs_decode__pb_pfail(struct gs_decode__pctx *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int r = gs_decode__vfail(d->err, d->errlen, d->what, fmt, ap);
	va_end(ap);
	return r;
}

int gs_decode__pb_pnomem(struct gs_decode__pctx *d)
{
	return gs_decode__nomem(d->err, d->errlen, d->what);
}

/* A reader's failure, naming the message it was reading. */
int gs_decode__pb_pbad(struct gs_decode__pctx *d, const struct gs_pb *r, const char *path)
{
	return gs_decode__pb_pfail(d, "%s: malformed protobuf at byte %zu: %s", path[0] ? path : "object",
				   gs_pb_offset(r), r->err ? r->err : "?");
}

/*
 * a, then b, then "[idx]" when idx >= 0, into buf (cut to fit): the path of an element, built for
 * every element before we know whether it has an error, so without printf (it was a tenth of the
 * decoder's instructions with snprintf).
 */
static void mkpath(char *buf, size_t n, const char *a, const char *b, int idx)
{
	size_t at = 0;
	char num[16];
	int k = 0;

	for (const char *s = a; *s && at + 1 < n; s++)
		buf[at++] = *s;
	for (const char *s = b; *s && at + 1 < n; s++)
		buf[at++] = *s;
	if (idx >= 0) {
		do
			num[k++] = (char)('0' + idx % 10);
		while ((idx /= 10) > 0);
		if (at + 1 < n)
			buf[at++] = '[';
		while (k > 0 && at + 1 < n)
			buf[at++] = num[--k];
		if (at + 1 < n)
			buf[at++] = ']';
	}
	buf[at] = '\0';
}

/* ---- fields ------------------------------------------------------------------------------------- */

#define DOT(path) ((path)[0] ? "." : "")

int gs_decode__pb_want(struct gs_decode__pctx *d, const struct gs_pb_field *f, enum gs_pb_wire wire, const char *path,
		       const char *key)
{
	if (f->wire == wire)
		return 0;
	return gs_decode__pb_pfail(d, "%s%s%s has wire type %s, not %s", path, DOT(path), key, gs_pb_wire_name(f->wire),
				   gs_pb_wire_name(wire));
}

/* A string field borrowed as (s, n); it must be length-delimited and hold no NUL byte (our records are C
 * strings; JSON cannot carry one either, as cJSON ends the string there). */
int gs_decode__pb_sref(struct gs_decode__pctx *d, const struct gs_pb_field *f, const char *path, const char *key,
		       const char **s, size_t *n)
{
	int r = gs_decode__pb_want(d, f, GS_PB_LEN, path, key);
	if (r < 0)
		return r;
	if (memchr(f->data, 0, f->len))
		return gs_decode__pb_pfail(d, "%s%s%s holds a NUL byte", path, DOT(path), key);
	*s = (const char *)f->data;
	*n = f->len;
	return 0;
}

/* A string field copied into *out (a repeated scalar field: the last one wins, as in protobuf). */
int gs_decode__pb_sdup(struct gs_decode__pctx *d, const struct gs_pb_field *f, const char *path, const char *key,
		       int empty, char **out)
{
	const char *s;
	size_t n;
	int r = gs_decode__pb_sref(d, f, path, key, &s, &n);
	if (r < 0)
		return r;
	free(*out);
	*out = NULL;
	if (n == 0 && empty == ABSENT_IF_EMPTY)
		return 0;
	if (!(*out = strndup(s, n)))
		return gs_decode__pb_pnomem(d);
	return 0;
}

int gs_decode__pb_eq(const char *s, size_t n, const char *lit)
{
	return s && strlen(lit) == n && memcmp(s, lit, n) == 0;
}

static int uvarint(struct gs_decode__pctx *d, const struct gs_pb_field *f, const char *path, const char *key,
		   uint64_t *v)
{
	int r = gs_decode__pb_want(d, f, GS_PB_VARINT, path, key);
	if (r == 0)
		*v = f->v;
	return r;
}

/* An int32/int64 varint in [lo, hi] (negative int32s come sign-extended to 64 bits). */
int gs_decode__pb_ivarint(struct gs_decode__pctx *d, const struct gs_pb_field *f, const char *path, const char *key,
			  int64_t lo, int64_t hi, int64_t *out)
{
	uint64_t v = 0;
	int r = uvarint(d, f, path, key, &v);
	if (r < 0)
		return r;
	if ((int64_t)v < lo || (int64_t)v > hi)
		return gs_decode__pb_pfail(d, "%s%s%s %lld is out of range", path, DOT(path), key,
					   (long long)(int64_t)v);
	*out = (int64_t)v;
	return 0;
}

/* A map<string, V> entry: {1: key, 2: value}; value is returned as a field (may be absent: wire -1). */
static int map_entry(struct gs_decode__pctx *d, const struct gs_pb_field *f, const char *path, const char **k,
		     size_t *kn, struct gs_pb_field *val)
{
	struct gs_pb r;
	struct gs_pb_field g;
	int rc;

	*k = "";
	*kn = 0;
	memset(val, 0, sizeof(*val));
	val->wire = (enum gs_pb_wire) - 1;
	if ((rc = gs_decode__pb_want(d, f, GS_PB_LEN, path, "")) < 0)
		return rc;
	gs_pb_sub(&r, f);
	while ((rc = gs_pb_next(&r, &g)) > 0) {
		if (g.num == 1 && (rc = gs_decode__pb_sref(d, &g, path, "key", k, kn)) < 0)
			return rc;
		if (g.num == 2)
			*val = g;
	}
	return rc < 0 ? gs_decode__pb_pbad(d, &r, path) : 0;
}

/* A map<string,string> value (absent: ""). */
static int map_sval(struct gs_decode__pctx *d, const struct gs_pb_field *val, const char *path, const char *k,
		    size_t kn, const char **s, size_t *n)
{
	char key[96];
	*s = "";
	*n = 0;
	if ((int)val->wire == -1)
		return 0;
	snprintf(key, sizeof(key), "[\"%.*s\"]", (int)(kn < 64 ? kn : 64), k);
	return gs_decode__pb_sref(d, val, path, key, s, n);
}

/* ---- resource lists ------------------------------------------------------------------------------ */

/* As decode.c's set_ext: a name given twice keeps its first place and its last value. */
static int set_ext(struct gs_decode__pctx *d, struct gs_resources *out, const char *name, size_t n, int64_t v)
{
	for (int i = 0; i < out->n_ext; i++) {
		if (gs_decode__pb_eq(name, n, out->ext[i].name)) {
			out->ext[i].value = v;
			return 0;
		}
	}
	if (!(out->ext[out->n_ext].name = strndup(name, n)))
		return gs_decode__pb_pnomem(d);
	out->ext[out->n_ext++].value = v;
	return 0;
}

/* A map<string, resource.Quantity> (Quantity is {1: string}) into *out (zeroed). */
static int resources(struct gs_decode__pctx *d, const uint8_t *data, size_t len, uint32_t num, const char *path,
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
		n += gs_decode_res_kind(k, kn) == GS_RES_EXT;
	}
	if (rc < 0)
		return gs_decode__pb_pbad(d, &r, path);
	if (n && !(out->ext = calloc((size_t)n, sizeof(*out->ext))))
		return gs_decode__pb_pnomem(d);
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
			if ((rc = gs_decode__pb_want(d, &val, GS_PB_LEN, path, key)) < 0)
				return rc;
			gs_pb_sub(&qr, &val);
			while ((rc = gs_pb_next(&qr, &q)) > 0)
				if (q.num == 1 && (rc = gs_decode__pb_sref(d, &q, path, key, &s, &sn)) < 0)
					return rc;
			if (rc < 0)
				return gs_decode__pb_pbad(d, &qr, path);
		}
		enum gs_res_kind kind = gs_decode_res_kind(k, kn);
		snprintf(qs, sizeof(qs), "%.*s", (int)sn, s);
		rc = sn >= sizeof(qs) ? -ERANGE : gs_decode_res_set(out, kind, qs, &v);
		if (rc < 0)
			return gs_decode__pb_pfail(d, "%s[\"%.*s\"] \"%.40s\" is %s", path, (int)(kn < 64 ? kn : 64), k,
						   qs, rc == -ERANGE ? "out of range" : "not a quantity");
		if (kind == GS_RES_EXT && (rc = set_ext(d, out, k, kn, v)) < 0)
			return rc;
	}
	return 0;
}

/* A map<string,string> (labels, nodeSelector) field num of data into an array, in order. */
static int labels(struct gs_decode__pctx *d, const uint8_t *data, size_t len, uint32_t num, const char *path,
		  struct gs_label **out, int *n_out)
{
	struct gs_pb r;
	struct gs_pb_field f, val;
	int n = gs_pb_count(data, len, num), rc;

	if (n <= 0)
		return 0; /* a malformed message was reported by the caller's own pass */
	if (!(*out = calloc((size_t)n, sizeof(**out))))
		return gs_decode__pb_pnomem(d);
	gs_pb_init(&r, data, len);
	while (gs_pb_next(&r, &f) > 0) {
		const char *k, *s;
		size_t kn, sn;
		struct gs_label *l = &(*out)[*n_out];
		if (f.num != num)
			continue;
		if ((rc = map_entry(d, &f, path, &k, &kn, &val)) < 0 ||
		    (rc = map_sval(d, &val, path, k, kn, &s, &sn)) < 0)
			return rc;
		if (memchr(k, 0, kn))
			return gs_decode__pb_pfail(d, "%s key holds a NUL byte", path);
		if (!(l->key = strndup(k, kn)))
			return gs_decode__pb_pnomem(d);
		(*n_out)++;
		if (!(l->value = strndup(s, sn)))
			return gs_decode__pb_pnomem(d);
	}
	return 0;
}

/* ---- metadata ------------------------------------------------------------------------------------ */

/* metav1.Time {1: seconds, 2: nanos} -> ms; year 1 (the zero time as seconds) is "absent" (*present 0, ms 0);
 * Go sends the zero time as an empty message, which is 0 ms anyway. */
static int time_ms(struct gs_decode__pctx *d, const struct gs_pb_field *f, const char *path, int64_t *ms, int *present)
{
	struct gs_pb r;
	struct gs_pb_field g;
	int64_t secs = 0, nanos = 0;
	int rc;

	if ((rc = gs_decode__pb_want(d, f, GS_PB_LEN, "metadata", path)) < 0)
		return rc;
	gs_pb_sub(&r, f);
	while ((rc = gs_pb_next(&r, &g)) > 0) {
		if (g.num == 1 &&
		    (rc = gs_decode__pb_ivarint(d, &g, path, "seconds", -62135596800LL, 253402300799LL, &secs)) < 0)
			return rc;
		if (g.num == 2 && (rc = gs_decode__pb_ivarint(d, &g, path, "nanos", 0, 999999999, &nanos)) < 0)
			return rc;
	}
	if (rc < 0)
		return gs_decode__pb_pbad(d, &r, path);
	*present = !(secs == -62135596800LL && nanos == 0);
	*ms = *present ? secs * 1000 + nanos / 1000000 : 0;
	return 0;
}

void gs_decode__pb_meta_free(struct gs_decode__pb_meta *m)
{
	free(m->name);
	free(m->ns);
	free(m->uid);
	free(m->rv);
}

/* ObjectMeta: 1 name, 3 namespace, 5 uid, 6 resourceVersion, 8 creationTimestamp, 9 deletionTimestamp,
 * 11 labels, 12 annotations, 13 ownerReferences. */
int gs_decode__pb_meta_scalars(struct gs_decode__pctx *d, const struct gs_pb_field *mf, struct gs_decode__pb_meta *m)
{
	struct gs_pb r;
	struct gs_pb_field f;
	int rc, present;
	int64_t ms;

	if ((rc = gs_decode__pb_want(d, mf, GS_PB_LEN, "", "metadata")) < 0)
		return rc;
	m->data = mf->data;
	m->len = mf->len;
	gs_pb_sub(&r, mf);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		switch (f.num) {
		case 1:
			rc = gs_decode__pb_sdup(d, &f, "metadata", "name", ABSENT_IF_EMPTY, &m->name);
			break;
		case 3:
			rc = gs_decode__pb_sdup(d, &f, "metadata", "namespace", ABSENT_IF_EMPTY, &m->ns);
			break;
		case 5:
			rc = gs_decode__pb_sdup(d, &f, "metadata", "uid", ABSENT_IF_EMPTY, &m->uid);
			break;
		case 6:
			rc = gs_decode__pb_sdup(d, &f, "metadata", "resourceVersion", ABSENT_IF_EMPTY, &m->rv);
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
			rc = gs_decode__pb_want(d, &f, GS_PB_LEN, "metadata",
						f.num == 11   ? "labels"
						: f.num == 12 ? "annotations"
							      : "ownerReferences");
			break;
		default:
			rc = 0;
		}
		if (rc < 0)
			return rc;
	}
	return rc < 0 ? gs_decode__pb_pbad(d, &r, "metadata") : 0;
}

/* The label and annotations a pod record keeps, in one pass over the metadata: labels (11) and
 * annotations (12) are map entries {1 key, 2 value}; a key given twice keeps its last value. */
struct wanted {
	uint32_t num;     /* 11 labels, 12 annotations */
	const char *key;  /* NULL: not wanted */
	char **out;       /* a copy, or with out NULL: */
	const char **ref; /* the value borrowed from the message, ref_len bytes (no copy) */
	size_t *ref_len;
};

static int meta_maps(struct gs_decode__pctx *d, const struct gs_decode__pb_meta *m, const struct wanted *w, int nw)
{
	struct gs_pb r;
	struct gs_pb_field f, val;
	int rc;

	gs_pb_init(&r, m->data, m->len);
	while (gs_pb_next(&r, &f) > 0) {
		const char *mapname = f.num == 11 ? "metadata.labels" : "metadata.annotations", *k, *s;
		size_t kn, sn;
		if (f.num != 11 && f.num != 12)
			continue;
		if ((rc = map_entry(d, &f, mapname, &k, &kn, &val)) < 0)
			return rc;
		for (int i = 0; i < nw; i++) {
			if (!w[i].key || w[i].num != f.num || !gs_decode__pb_eq(k, kn, w[i].key))
				continue;
			if ((rc = map_sval(d, &val, mapname, k, kn, &s, &sn)) < 0)
				return rc;
			if (!w[i].out) {
				*w[i].ref = s ? s : "";
				*w[i].ref_len = s ? sn : 0;
				continue;
			}
			free(*w[i].out);
			if (!(*w[i].out = strndup(s, sn)))
				return gs_decode__pb_pnomem(d);
		}
	}
	return 0;
}

/* OwnerReference: 1 kind, 3 name, 4 uid, 6 controller; the first controller counts. */
static int owner(struct gs_decode__pctx *d, const struct gs_decode__pb_meta *m, struct gs_pod_obj *out)
{
	struct gs_pb r, o;
	struct gs_pb_field f, g;
	char path[64];
	int i = 0, rc, taken = 0;

	gs_pb_init(&r, m->data, m->len);
	while (gs_pb_next(&r, &f) > 0) {
		char *kind = NULL, *name = NULL, *uid = NULL;
		uint64_t controller = 0;
		if (f.num != 13)
			continue;
		mkpath(path, sizeof(path), "metadata.ownerReferences", "", i++);
		gs_pb_sub(&o, &f);
		while ((rc = gs_pb_next(&o, &g)) > 0) {
			if (g.num == 1)
				rc = gs_decode__pb_sdup(d, &g, path, "kind", KEEP_EMPTY, &kind);
			else if (g.num == 3)
				rc = gs_decode__pb_sdup(d, &g, path, "name", KEEP_EMPTY, &name);
			else if (g.num == 4)
				rc = gs_decode__pb_sdup(d, &g, path, "uid", KEEP_EMPTY, &uid);
			else if (g.num == 6)
				rc = uvarint(d, &g, path, "controller", &controller);
			if (rc < 0)
				break;
		}
		if (rc < 0 && o.err)
			rc = gs_decode__pb_pbad(d, &o, path);
		if (rc == 0 && controller && !taken) { /* the first controller, even without a kind */
			taken = 1;
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

/* EnvVar: 1 name, 2 value, 3 valueFrom. A later duplicate wins, as in the kubelet. */
static int fold_env(struct gs_decode__pctx *d, const uint8_t *data, size_t len, const char *cpath,
		    struct gs_decode__cuda_fold *fo)
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
		mkpath(path, sizeof(path), cpath, ".env", j++);
		if ((rc = gs_decode__pb_want(d, &f, GS_PB_LEN, cpath, "env")) < 0)
			return rc;
		gs_pb_sub(&e, &f);
		while ((rc = gs_pb_next(&e, &g)) > 0) {
			if (g.num == 1)
				rc = gs_decode__pb_sref(d, &g, path, "name", &name, &nn);
			else if (g.num == 2)
				rc = gs_decode__pb_sref(d, &g, path, "value", &v, &vn);
			else if (g.num == 3)
				rc = gs_decode__pb_want(d, &g, GS_PB_LEN, path, "valueFrom"), from = 1;
			if (rc < 0)
				return rc;
		}
		if (rc < 0)
			return gs_decode__pb_pbad(d, &e, path);
		if (!gs_decode__pb_eq(name, nn, "CUDA_VISIBLE_DEVICES"))
			continue;
		state = from ? 2 : 1; /* a later duplicate wins, as in decode.c */
		val = from ? NULL : v ? v : "";
		val_len = from || !v ? 0 : vn;
	}
	gs_decode__cuda_add(fo, state, val, val_len);
	return 0;
}

/* ContainerPort: 2 hostPort, 4 protocol, 5 hostIP. */
static int port(struct gs_decode__pctx *d, const struct gs_pb_field *pf, const char *path, struct gs_pod_obj *out,
		int cap)
{
	struct gs_pb r;
	struct gs_pb_field g;
	const char *proto = NULL, *ip = NULL;
	size_t pn = 0, ipn = 0;
	int64_t hp = 0;
	int rc;

	if ((rc = gs_decode__pb_want(d, pf, GS_PB_LEN, path, "")) < 0)
		return rc;
	gs_pb_sub(&r, pf);
	while ((rc = gs_pb_next(&r, &g)) > 0) {
		if (g.num == 2)
			rc = gs_decode__pb_ivarint(d, &g, path, "hostPort", 0, 65535, &hp);
		else if (g.num == 4)
			rc = gs_decode__pb_sref(d, &g, path, "protocol", &proto, &pn);
		else if (g.num == 5)
			rc = gs_decode__pb_sref(d, &g, path, "hostIP", &ip, &ipn);
		if (rc < 0)
			return rc;
	}
	if (rc < 0)
		return gs_decode__pb_pbad(d, &r, path);
	if (hp == 0)
		return 0;
	if (out->n_host_ports >= cap)
		return gs_decode__pb_pfail(d, "%s: more host ports than counted", path);
	struct gs_host_port *h = &out->host_ports[out->n_host_ports];
	h->port = (int)hp;
	if (pn == 0 || gs_decode__pb_eq(proto, pn, "TCP"))
		h->proto = 'T';
	else if (gs_decode__pb_eq(proto, pn, "UDP"))
		h->proto = 'U';
	else if (gs_decode__pb_eq(proto, pn, "SCTP"))
		h->proto = 'S';
	else
		return gs_decode__pb_pfail(d, "%s.protocol \"%.*s\" is not TCP, UDP or SCTP", path,
					   (int)(pn < 16 ? pn : 16), proto);
	if (ipn && !gs_decode__pb_eq(ip, ipn, "0.0.0.0") && !(h->host_ip = strndup(ip, ipn)))
		return gs_decode__pb_pnomem(d);
	out->n_host_ports++;
	return 0;
}

/* A container's name, borrowed from the message (pod_status matches statuses to containers by it). */
struct name {
	const char *s;
	size_t n;
};

/*
 * Container: 1 name, 6 ports, 7 env, 8 resources (ResourceRequirements: 2 requests), 24 restartPolicy
 * (1.28+, NEWER). A partial record (full 0) skips the ports and env. *sidecar: restartPolicy is Always.
 */
static int container(struct gs_decode__pctx *d, const struct gs_pb_field *cf, const char *cpath, int regular, int full,
		     struct gs_resources *req, struct gs_pod_obj *out, int cap, struct gs_decode__cuda_fold *fo,
		     struct name *name, int *sidecar)
{
	struct gs_pb r;
	struct gs_pb_field f;
	char path[96];
	const char *policy = NULL;
	size_t pn = 0;
	int i = 0, rc;

	if ((rc = gs_decode__pb_want(d, cf, GS_PB_LEN, cpath, "")) < 0)
		return rc;
	gs_pb_sub(&r, cf);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		if (f.num == 8) {
			mkpath(path, sizeof(path), cpath, ".resources", -1);
			if ((rc = gs_decode__pb_want(d, &f, GS_PB_LEN, cpath, "resources")) < 0)
				return rc;
			gs_resources_free(req);
			if ((rc = resources(d, f.data, f.len, 2, strcat(path, ".requests"), req)) <
			    0) /* fits: 96 bytes */
				return rc;
		} else if (f.num == 6) {
			mkpath(path, sizeof(path), cpath, ".ports", i++);
			if (regular && full && (rc = port(d, &f, path, out, cap)) < 0)
				return rc;
		} else if (f.num == 1) {
			if ((rc = gs_decode__pb_sref(d, &f, cpath, "name", &name->s, &name->n)) < 0)
				return rc;
		} else if (f.num == 24) {
			if ((rc = gs_decode__pb_sref(d, &f, cpath, "restartPolicy", &policy, &pn)) < 0)
				return rc;
		}
	}
	if (rc < 0)
		return gs_decode__pb_pbad(d, &r, cpath);
	*sidecar = gs_decode__pb_eq(policy, pn, "Always");
	return full ? fold_env(d, cf->data, cf->len, cpath, fo) : 0;
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

/* Where a repeated field of the spec first appears, and how often (the spec's first pass finds out, so
 * that each later pass starts there instead of at the spec's first byte). */
struct at {
	size_t off;
	int n;
};

/* PodSpec 20 initContainers, 2 containers. JSON reads init containers first; the fold does not depend
 * on the order, and each list keeps its own. at[0] is field 20's, at[1] field 2's. names: room for the
 * regular containers' names (at[1].n). */
static int containers(struct gs_decode__pctx *d, const uint8_t *spec, size_t len, const struct at *at, int full,
		      struct name *names, struct gs_pod_obj *out)
{
	struct gs_decode__cuda_fold fo = {0};
	char cpath[64];
	int rc;

	for (int l = 0; l < 2; l++) {
		uint32_t num = l ? 2 : 20;
		struct gs_resources **req = l ? &out->ctr_req : &out->init_req;
		int *n_req = l ? &out->n_ctr : &out->n_init;
		int n = at[l].n, i = 0, cap = 0;
		const uint8_t *from = spec + at[l].off;
		size_t left = len - at[l].off;
		struct gs_pb r;
		struct gs_pb_field f;

		if (n <= 0)
			continue;
		if (!(*req = calloc((size_t)n, sizeof(**req))))
			return gs_decode__pb_pnomem(d);
		*n_req = n;
		if (l == 1 && full && (cap = count_host_ports(from, left)) > 0 &&
		    !(out->host_ports = calloc((size_t)cap, sizeof(*out->host_ports))))
			return gs_decode__pb_pnomem(d);
		gs_pb_init(&r, from, left);
		while (gs_pb_next(&r, &f) > 0) {
			struct name init_name = {NULL, 0};
			int sidecar = 0;
			if (f.num != num)
				continue;
			mkpath(cpath, sizeof(cpath), "spec.", l ? "containers" : "initContainers", i);
			if ((rc = container(d, &f, cpath, l, full, &(*req)[i], out, cap, &fo,
					    l ? &names[i] : &init_name, &sidecar)) < 0)
				return rc;
			if (!l && sidecar && gs_decode__sidecar(out, i) < 0)
				return gs_decode__pb_pnomem(d);
			i++;
		}
	}
	if (!full)
		return 0; /* no CUDA_VISIBLE_DEVICES fold: n_containers and cuda_state stay 0 */
	if (gs_decode__containers_done(out, &fo) < 0)
		return gs_decode__pb_pnomem(d);
	return 0;
}

static const char *const sel_ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};

/* NodeSelectorRequirement: 1 key, 2 operator, 3 values. */
static int sel_req(struct gs_decode__pctx *d, const struct gs_pb_field *qf, const char *path, int field,
		   struct gs_sel_req *out)
{
	struct gs_pb r;
	struct gs_pb_field g;
	const char *op = NULL;
	size_t opn = 0;
	int n, i = 0, rc;

	if ((rc = gs_decode__pb_want(d, qf, GS_PB_LEN, path, "")) < 0)
		return rc;
	if ((n = gs_pb_count(qf->data, qf->len, 3)) < 0) {
		gs_pb_sub(&r, qf);
		while (gs_pb_next(&r, &g) > 0)
			;
		return gs_decode__pb_pbad(d, &r, path);
	}
	if (n > 0 && !(out->values = calloc((size_t)n, sizeof(*out->values))))
		return gs_decode__pb_pnomem(d);
	gs_pb_sub(&r, qf);
	while ((rc = gs_pb_next(&r, &g)) > 0) {
		if (g.num == 1) {
			rc = gs_decode__pb_sdup(d, &g, path, "key", KEEP_EMPTY, &out->key);
		} else if (g.num == 2) {
			rc = gs_decode__pb_sref(d, &g, path, "operator", &op, &opn);
		} else if (g.num == 3) {
			char vkey[24];
			mkpath(vkey, sizeof(vkey), "values", "", i);
			rc = gs_decode__pb_sdup(d, &g, path, vkey, KEEP_EMPTY, &out->values[i]);
			out->n_values = ++i;
		}
		if (rc < 0)
			return rc;
	}
	if (rc < 0)
		return gs_decode__pb_pbad(d, &r, path);
	if (!out->key)
		return gs_decode__pb_pfail(d, "%s.key is missing", path);
	out->field = field;
	out->op = GS_SEL_INVALID;
	for (size_t k = 0; k < sizeof(sel_ops) / sizeof(sel_ops[0]); k++)
		if (gs_decode__pb_eq(op, opn, sel_ops[k]))
			out->op = (enum gs_sel_op)k;
	return 0;
}

/* NodeSelectorTerm: 1 matchExpressions, 2 matchFields; expressions first, as decode.c orders them. */
static int term(struct gs_decode__pctx *d, const struct gs_pb_field *tf, const char *path, struct gs_sel_term *out)
{
	struct gs_pb r;
	struct gs_pb_field f;
	char qpath[224];
	int n, j = 0, rc;

	if ((rc = gs_decode__pb_want(d, tf, GS_PB_LEN, path, "")) < 0)
		return rc;
	if ((n = gs_pb_count(tf->data, tf->len, 1)) < 0)
		return gs_decode__pb_pfail(d, "%s: malformed protobuf", path);
	n += gs_pb_count(tf->data, tf->len, 2);
	if (n == 0)
		return 0;
	if (gs_decode__term_reqs(out, n) < 0)
		return gs_decode__pb_pnomem(d);
	for (int l = 0; l < 2; l++) {
		int i = 0;
		gs_pb_init(&r, tf->data, tf->len);
		while (gs_pb_next(&r, &f) > 0) {
			if (f.num != (uint32_t)l + 1)
				continue;
			mkpath(qpath, sizeof(qpath), path, l ? ".matchFields" : ".matchExpressions", i++);
			if ((rc = sel_req(d, &f, qpath, l, &out->reqs[j++])) < 0)
				return rc;
		}
	}
	return 0;
}

#define REQUIRED_AFFINITY "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"

/* Affinity 1 nodeAffinity; NodeAffinity 1 required; NodeSelector 1 nodeSelectorTerms. */
static int affinity(struct gs_decode__pctx *d, const struct gs_pb_field *af, struct gs_pod_obj *out)
{
	static const char *const paths[] = {"spec.affinity", "spec.affinity.nodeAffinity", REQUIRED_AFFINITY};
	struct gs_pb r;
	struct gs_pb_field f = *af, g, req = {0};
	char path[160];
	int i = 0, n, rc;

	/* Down the chain of field 1s; the last of each wins (protobuf would merge them: none repeats). */
	for (int level = 0; level < 2; level++) {
		int found = 0;
		if ((rc = gs_decode__pb_want(d, &f, GS_PB_LEN, level ? "spec.affinity" : "spec",
					     level ? "nodeAffinity" : "affinity")) < 0)
			return rc;
		gs_pb_sub(&r, &f);
		while ((rc = gs_pb_next(&r, &g)) > 0)
			if (g.num == 1)
				req = g, found = 1;
		if (rc < 0)
			return gs_decode__pb_pbad(d, &r, paths[level]);
		if (!found)
			return 0;
		f = req;
	}
	if ((rc = gs_decode__pb_want(d, &req, GS_PB_LEN, "spec.affinity.nodeAffinity",
				     "requiredDuringSchedulingIgnoredDuringExecution")) < 0)
		return rc;
	out->has_affinity = 1;
	if ((n = gs_pb_count(req.data, req.len, 1)) < 0)
		return gs_decode__pb_pfail(d, "%s: malformed protobuf", REQUIRED_AFFINITY);
	if (n == 0)
		return 0;
	if (!(out->terms = calloc((size_t)n, sizeof(*out->terms))))
		return gs_decode__pb_pnomem(d);
	out->n_terms = n;
	gs_pb_sub(&r, &req);
	while (gs_pb_next(&r, &g) > 0) {
		if (g.num != 1)
			continue;
		mkpath(path, sizeof(path), REQUIRED_AFFINITY, ".nodeSelectorTerms", i);
		if ((rc = term(d, &g, path, &out->terms[i++])) < 0)
			return rc;
	}
	return 0;
}

static enum gs_taint_effect effect_of(const char *s, size_t n, enum gs_taint_effect if_empty)
{
	if (!s || n == 0)
		return if_empty;
	if (gs_decode__pb_eq(s, n, "NoSchedule"))
		return GS_EFFECT_NO_SCHEDULE;
	if (gs_decode__pb_eq(s, n, "PreferNoSchedule"))
		return GS_EFFECT_PREFER_NO_SCHEDULE;
	if (gs_decode__pb_eq(s, n, "NoExecute"))
		return GS_EFFECT_NO_EXECUTE;
	return GS_EFFECT_OTHER;
}

/* Toleration: 1 key, 2 operator, 3 value, 4 effect, 5 tolerationSeconds (see decode.c for the rules). */
static int tolerations(struct gs_decode__pctx *d, const uint8_t *spec, size_t len, struct gs_pod_obj *out)
{
	struct gs_pb r, t;
	struct gs_pb_field f, g;
	char path[48];
	int n = gs_pb_count(spec, len, 22), i = 0, rc;

	if (n <= 0)
		return 0;
	if (!(out->tolerations = calloc((size_t)n, sizeof(*out->tolerations))))
		return gs_decode__pb_pnomem(d);
	gs_pb_init(&r, spec, len);
	while (gs_pb_next(&r, &f) > 0) {
		struct gs_toleration *o = &out->tolerations[out->n_tolerations];
		const char *key = NULL, *op = NULL, *value = NULL, *effect = NULL;
		size_t kn = 0, on = 0, vn = 0, en = 0;
		int64_t secs = 0;
		int has_secs = 0;
		if (f.num != 22)
			continue;
		mkpath(path, sizeof(path), "spec.tolerations", "", i++);
		if ((rc = gs_decode__pb_want(d, &f, GS_PB_LEN, "spec", "tolerations")) < 0)
			return rc;
		gs_pb_sub(&t, &f);
		while ((rc = gs_pb_next(&t, &g)) > 0) {
			if (g.num == 1)
				rc = gs_decode__pb_sref(d, &g, path, "key", &key, &kn);
			else if (g.num == 2)
				rc = gs_decode__pb_sref(d, &g, path, "operator", &op, &on);
			else if (g.num == 3)
				rc = gs_decode__pb_sref(d, &g, path, "value", &value, &vn);
			else if (g.num == 4)
				rc = gs_decode__pb_sref(d, &g, path, "effect", &effect, &en);
			else if (g.num == 5)
				rc = gs_decode__pb_ivarint(d, &g, path, "tolerationSeconds", INT64_MIN, INT64_MAX,
							   &secs),
				has_secs = 1;
			if (rc < 0)
				return rc;
		}
		if (rc < 0)
			return gs_decode__pb_pbad(d, &t, path);
		if (on && !gs_decode__pb_eq(op, on, "Equal") && !gs_decode__pb_eq(op, on, "Exists"))
			continue;
		o->exists = gs_decode__pb_eq(op, on, "Exists");
		o->effect = effect_of(effect, en, GS_EFFECT_ALL);
		o->seconds = !has_secs ? -1 : secs < 0 ? 0 : secs;
		out->n_tolerations++;
		/* value is omitempty in JSON: "" reads as absent there, so here too. */
		if ((kn && !(o->key = strndup(key, kn))) || (vn && !(o->value = strndup(value, vn))))
			return gs_decode__pb_pnomem(d);
	}
	if (out->n_tolerations == 0) {
		free(out->tolerations);
		out->tolerations = NULL;
	}
	return 0;
}

/* PodSpec 38 schedulingGates (Kubernetes 1.26+), PodSchedulingGate 1 name. */
static int gates(struct gs_decode__pctx *d, const uint8_t *spec, size_t len, struct gs_pod_obj *out)
{
	struct gs_pb r, g;
	struct gs_pb_field f, h;
	char path[48];
	int i = 0, rc;

	gs_pb_init(&r, spec, len);
	while (gs_pb_next(&r, &f) > 0) {
		if (f.num != 38)
			continue;
		mkpath(path, sizeof(path), "spec.schedulingGates", "", i);
		if ((rc = gs_decode__pb_want(d, &f, GS_PB_LEN, "spec", "schedulingGates")) < 0)
			return rc;
		gs_pb_sub(&g, &f);
		while ((rc = gs_pb_next(&g, &h)) > 0)
			if (h.num == 1 && i == 0 &&
			    (rc = gs_decode__pb_sdup(d, &h, path, "name", KEEP_EMPTY, &out->first_gate)) < 0)
				return rc;
		if (rc < 0)
			return gs_decode__pb_pbad(d, &g, path);
		i++;
	}
	out->n_gates = i;
	return 0;
}

/* PodOS (1.25+): 1 name (NEWER). */
static int pod_os(struct gs_decode__pctx *d, const struct gs_pb_field *of, struct gs_pod_obj *out)
{
	struct gs_pb r;
	struct gs_pb_field g;
	int rc;

	if ((rc = gs_decode__pb_want(d, of, GS_PB_LEN, "spec", "os")) < 0)
		return rc;
	/* PodOS.Name has no omitempty: "" is kept, as JSON shows it. */
	gs_pb_sub(&r, of);
	while ((rc = gs_pb_next(&r, &g)) > 0)
		if (g.num == 1 && (rc = gs_decode__pb_sdup(d, &g, "spec.os", "name", KEEP_EMPTY, &out->os_name)) < 0)
			return rc;
	return rc < 0 ? gs_decode__pb_pbad(d, &r, "spec.os") : 0;
}

/* PodSpec 40 resources (pod-level, 1.32+, NEWER): ResourceRequirements 2 requests. */
static int pod_resources(struct gs_decode__pctx *d, const struct gs_pb_field *rf, struct gs_pod_obj *out)
{
	int rc, n;

	if ((rc = gs_decode__pb_want(d, rf, GS_PB_LEN, "spec", "resources")) < 0)
		return rc;
	if ((n = gs_pb_count(rf->data, rf->len, 2)) < 0)
		return gs_decode__pb_pfail(d, "spec.resources: malformed protobuf");
	gs_resources_free(&out->pod_req);
	out->has_pod_req = n > 0;
	return resources(d, rf->data, rf->len, 2, "spec.resources.requests", &out->pod_req);
}

/*
 * PodSpec: scalars and the affinity in one pass, the repeated parts in their own passes. A partial record
 * (full 0) reads what gs_checks_pod_requests needs: the containers' requests and sidecar flags, overhead, the
 * pod-level resources. names: room for the regular containers' names, *n_names of them.
 */
static int pod_spec(struct gs_decode__pctx *d, const struct gs_pb_field *sf, int full, struct name **names,
		    struct gs_pod_obj *out)
{
	/* The repeated parts: 20 initContainers, 2 containers, 38 schedulingGates, 32 overhead,
	 * 7 nodeSelector, 22 tolerations. */
	static const uint32_t nums[] = {20, 2, 38, 32, 7, 22};
	struct at at[6] = {{0, 0}};
	struct gs_pb r;
	struct gs_pb_field f, aff = {0}, res = {0}, os = {0};
	const uint8_t *before;
	int has_aff = 0, has_res = 0, has_os = 0, rc;

	if ((rc = gs_decode__pb_want(d, sf, GS_PB_LEN, "", "spec")) < 0)
		return rc;
	gs_pb_sub(&r, sf);
	while (before = r.p, (rc = gs_pb_next(&r, &f)) > 0) {
		for (int k = 0; k < 6; k++)
			if (f.num == nums[k] && at[k].n++ == 0)
				at[k].off = (size_t)(before - sf->data);
		switch (f.num) {
		case 10:
			rc = gs_decode__pb_sdup(d, &f, "spec", "nodeName", ABSENT_IF_EMPTY, &out->node_name);
			break;
		case 19:
			rc = gs_decode__pb_sdup(d, &f, "spec", "schedulerName", ABSENT_IF_EMPTY, &out->scheduler_name);
			break;
		case 25:
			if (full)
				rc = gs_decode__pb_ivarint(d, &f, "spec", "priority", INT32_MIN, INT32_MAX,
							   &out->priority);
			break;
		case 31: /* preemptionPolicy */
			if (full && (rc = gs_decode__pb_want(d, &f, GS_PB_LEN, "spec", "preemptionPolicy")) == 0)
				out->preempt_never = f.len == 5 && memcmp(f.data, "Never", 5) == 0;
			break;
		case 18:
			aff = f;
			has_aff = full;
			break;
		case 36:
			os = f;
			has_os = full;
			break;
		case 40:
			res = f;
			has_res = 1;
			break;
		case 7:
			if (full)
				rc = gs_decode__pb_want(d, &f, GS_PB_LEN, "spec", "nodeSelector");
			break;
		case 32:
			rc = gs_decode__pb_want(d, &f, GS_PB_LEN, "spec", "overhead");
			break;
		case 2:
		case 20:
			rc = gs_decode__pb_want(d, &f, GS_PB_LEN, "spec", f.num == 2 ? "containers" : "initContainers");
			break;
		}
		if (rc < 0)
			return rc;
	}
	if (rc < 0)
		return gs_decode__pb_pbad(d, &r, "spec");
	if (at[1].n && !(*names = calloc((size_t)at[1].n, sizeof(**names))))
		return gs_decode__pb_pnomem(d);
#define FROM(k) sf->data + at[k].off, sf->len - at[k].off
	if ((rc = containers(d, sf->data, sf->len, at, full, *names, out)) < 0 ||
	    (at[3].n && (rc = resources(d, FROM(3), 32, "spec.overhead", &out->overhead)) < 0) ||
	    (has_res && (rc = pod_resources(d, &res, out)) < 0) || !full)
		return rc;
	if ((at[2].n && (rc = gates(d, FROM(2), out)) < 0) ||
	    (at[4].n &&
	     (rc = labels(d, FROM(4), 7, "spec.nodeSelector", &out->node_selector, &out->n_node_selector)) < 0) ||
	    (has_aff && (rc = affinity(d, &aff, out)) < 0) || (at[5].n && (rc = tolerations(d, FROM(5), out)) < 0) ||
	    (has_os && (rc = pod_os(d, &os, out)) < 0))
		return rc;
#undef FROM
	return 0;
}

/* ---- pod status ---------------------------------------------------------------------------------- */

/* ContainerState: 1 waiting, 2 running, 3 terminated; *stopped when waiting or terminated is there. */
static int ctr_state(struct gs_decode__pctx *d, const struct gs_pb_field *sf, const char *path, int *stopped)
{
	struct gs_pb r;
	struct gs_pb_field g;
	int rc;

	*stopped = 0;
	if ((rc = gs_decode__pb_want(d, sf, GS_PB_LEN, path, "state")) < 0)
		return rc;
	gs_pb_sub(&r, sf);
	while ((rc = gs_pb_next(&r, &g)) > 0) {
		if (g.num != 1 && g.num != 3)
			continue;
		if ((rc = gs_decode__pb_want(d, &g, GS_PB_LEN, path,
					     g.num == 1 ? "state.waiting" : "state.terminated")) < 0)
			return rc;
		*stopped = 1;
	}
	return rc < 0 ? gs_decode__pb_pbad(d, &r, path) : 0;
}

/* The regular container called name[0..n) whose status is not yet set, or -1 (as decode.c's ctr_by_name). */
static int ctr_by_name(const struct name *names, const char *name, size_t n, const struct gs_pod_obj *out)
{
	for (int i = 0; names && name && i < out->n_ctr; i++)
		if (names[i].s && names[i].n == n && memcmp(names[i].s, name, n) == 0)
			return out->ctr_status_set && out->ctr_status_set[i] ? -1 : i;
	return -1;
}

/*
 * ContainerStatus: 1 name, 2 state, 10 allocatedResources, 11 resources (ResourceRequirements 2 requests)
 * (1.27+, NEWER). As decode.c's decode_ctr_status.
 */
static int ctr_status(struct gs_decode__pctx *d, const struct gs_pb_field *cf, const char *path,
		      const struct name *names, struct gs_pod_obj *out)
{
	struct gs_pb r;
	struct gs_pb_field g, res = {0};
	const char *name = NULL;
	size_t nn = 0;
	int has_state = 0, stopped = 0, n_req = 0, n_alloc, k, rc;
	char rpath[96];

	if ((rc = gs_decode__pb_want(d, cf, GS_PB_LEN, path, "")) < 0)
		return rc;
	if ((n_alloc = gs_pb_count(cf->data, cf->len, 10)) < 0)
		return gs_decode__pb_pfail(d, "%s: malformed protobuf", path);
	gs_pb_sub(&r, cf);
	while ((rc = gs_pb_next(&r, &g)) > 0) {
		if (g.num == 1)
			rc = gs_decode__pb_sref(d, &g, path, "name", &name, &nn);
		else if (g.num == 2)
			rc = ctr_state(d, &g, path, &stopped), has_state = 1;
		else if (g.num == 10)
			rc = gs_decode__pb_want(d, &g, GS_PB_LEN, path, "allocatedResources");
		else if (g.num == 11 && (rc = gs_decode__pb_want(d, &g, GS_PB_LEN, path, "resources")) == 0)
			res = g;
		if (rc < 0)
			return rc;
	}
	if (rc < 0)
		return gs_decode__pb_pbad(d, &r, path);
	if (!has_state || !stopped)
		out->stopped = 0;
	if (res.data && (n_req = gs_pb_count(res.data, res.len, 2)) < 0)
		return gs_decode__pb_pfail(d, "%s.resources: malformed protobuf", path);
	if ((k = ctr_by_name(names, name, nn, out)) < 0 || (n_req == 0 && n_alloc == 0))
		return 0;
	struct gs_resources *slot = gs_decode__status_slot(out, k);
	if (!slot)
		return gs_decode__pb_pnomem(d);
	mkpath(rpath, sizeof(rpath), path, n_req ? ".resources.requests" : ".allocatedResources", -1);
	rc = n_req ? resources(d, res.data, res.len, 2, rpath, slot) : resources(d, cf->data, cf->len, 10, rpath, slot);
	if (rc == 0)
		out->ctr_status_set[k] = 1;
	return rc;
}

/* A PodCondition or NodeCondition: 1 type and the string field num (key), both borrowed (NULL, 0 when absent). */
static int condition(struct gs_decode__pctx *d, const struct gs_pb_field *cf, const char *path, uint32_t num,
		     const char *key, const char **type, size_t *tn, const char **val, size_t *vn)
{
	struct gs_pb r;
	struct gs_pb_field g;
	int rc;

	*type = *val = NULL;
	*tn = *vn = 0;
	if ((rc = gs_decode__pb_want(d, cf, GS_PB_LEN, "status", "conditions")) < 0)
		return rc;
	gs_pb_sub(&r, cf);
	while ((rc = gs_pb_next(&r, &g)) > 0) {
		if (g.num == 1)
			rc = gs_decode__pb_sref(d, &g, path, "type", type, tn);
		else if (g.num == num)
			rc = gs_decode__pb_sref(d, &g, path, key, val, vn);
		if (rc < 0)
			return rc;
	}
	return rc < 0 ? gs_decode__pb_pbad(d, &r, path) : 0;
}

/* PodStatus: 1 phase, 2 conditions, 8 containerStatuses, 11 nominatedNodeName, 14 resize (1.27+, NEWER).
 * names: the regular containers' names (NULL without a spec). */
static int pod_status(struct gs_decode__pctx *d, const struct gs_pb_field *sf, const struct name *names, char **phase,
		      struct gs_pod_obj *out)
{
	struct gs_pb r;
	struct gs_pb_field g;
	char path[64];
	const char *resize, *type, *reason;
	size_t rsn, tn, rn;
	int i = 0, j = 0, rc;

	if ((rc = gs_decode__pb_want(d, sf, GS_PB_LEN, "", "status")) < 0)
		return rc;
	gs_pb_sub(&r, sf);
	while ((rc = gs_pb_next(&r, &g)) > 0) {
		if (g.num == 1) {
			rc = gs_decode__pb_sdup(d, &g, "status", "phase", ABSENT_IF_EMPTY, phase);
		} else if (g.num == 11) {
			rc = gs_decode__pb_sdup(d, &g, "status", "nominatedNodeName", ABSENT_IF_EMPTY,
						&out->nominated_node);
		} else if (g.num == 14) {
			if ((rc = gs_decode__pb_sref(d, &g, "status", "resize", &resize, &rsn)) == 0)
				out->resize_infeasible |= gs_decode__pb_eq(resize, rsn, "Infeasible");
		} else if (g.num == 2) {
			/* PodCondition 5 reason: PodResizePending with reason Infeasible (1.33+). */
			mkpath(path, sizeof(path), "status.conditions", "", i++);
			if ((rc = condition(d, &g, path, 5, "reason", &type, &tn, &reason, &rn)) == 0 &&
			    gs_decode__pb_eq(type, tn, "PodResizePending") &&
			    gs_decode__pb_eq(reason, rn, "Infeasible"))
				out->resize_infeasible = 1;
		} else if (g.num == 8) {
			mkpath(path, sizeof(path), "status.containerStatuses", "", j++);
			rc = ctr_status(d, &g, path, names, out);
		}
		if (rc < 0)
			return rc;
	}
	return rc < 0 ? gs_decode__pb_pbad(d, &r, "status") : 0;
}

/* ---- pods ---------------------------------------------------------------------------------------- */

/* PodSpec 10 nodeName and 19 schedulerName alone, borrowed (n 0: absent or empty, as ABSENT_IF_EMPTY). */
static int spec_binding(struct gs_decode__pctx *d, const struct gs_pb_field *sf, const char **node, size_t *nn,
			const char **sched, size_t *sn)
{
	struct gs_pb r;
	struct gs_pb_field f;
	int rc;

	*nn = *sn = 0;
	if ((rc = gs_decode__pb_want(d, sf, GS_PB_LEN, "", "spec")) < 0)
		return rc;
	gs_pb_sub(&r, sf);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		if (f.num == 10)
			rc = gs_decode__pb_sref(d, &f, "spec", "nodeName", node, nn);
		else if (f.num == 19)
			rc = gs_decode__pb_sref(d, &f, "spec", "schedulerName", sched, sn);
		if (rc < 0)
			return rc;
	}
	return rc < 0 ? gs_decode__pb_pbad(d, &r, "spec") : 0;
}

/* With a hint: 1 when the pod is held bound to its spec.nodeName (read only what can change), else 0. */
static int held_bound(struct gs_decode__pctx *d, const struct gs_decode_hint *hint, const struct gs_pb_field *spec,
		      const char *uid, int *held)
{
	const char *node = NULL, *sched = NULL;
	size_t nn = 0, sn = 0;
	int rc = spec_binding(d, spec, &node, &nn, &sched, &sn);

	*held = rc == 0 && nn > 0 && hint->bound(uid, node, nn, hint->ud) == 1;
	return rc;
}

/* The top level of a Pod or a Node: 1 metadata (its scalars into m), 2 spec, 3 status. A later
 * field replaces an earlier one of its number; a field absent stays zero-length and unflagged. */
struct top {
	struct gs_pb_field spec, status;
	int has_spec, has_status;
};

static int top_fields(struct gs_decode__pctx *d, const uint8_t *data, size_t len, struct gs_decode__pb_meta *m,
		      struct top *t)
{
	struct gs_pb r;
	struct gs_pb_field f;
	int rc;

	gs_pb_init(&r, data, len);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		if (f.num == 1) {
			gs_decode__pb_meta_free(m);
			memset(m, 0, sizeof(*m));
			if ((rc = gs_decode__pb_meta_scalars(d, &f, m)) < 0)
				return rc;
		} else if (f.num == 2) {
			t->spec = f;
			t->has_spec = 1;
		} else if (f.num == 3) {
			t->status = f;
			t->has_status = 1;
		}
	}
	return rc < 0 ? gs_decode__pb_pbad(d, &r, "") : 0;
}

/* Pod: 1 metadata, 2 spec, 3 status. */
static int decode_pod(struct gs_decode__pctx *d, const uint8_t *data, size_t len, const char *map_annotation,
		      enum gs_decode__pb_pod_mode mode, const struct gs_decode_hint *hint, struct gs_pod_obj *out)
{
	struct gs_decode__pb_meta m = {0};
	struct top t = {0};
	struct name *names = NULL;
	char *shared = NULL, *phase = NULL;
	int held = 0, rc;

	if ((rc = top_fields(d, data, len, &m, &t)) < 0)
		goto out;
	out->ns = m.ns;
	out->name = m.name;
	out->uid = m.uid;
	out->resource_version = m.rv;
	m.ns = m.name = m.uid = m.rv = NULL;
	if (!out->ns || !out->name) {
		rc = gs_decode__pb_pfail(d, "metadata.%s is missing", out->ns ? "name" : "namespace");
		goto out;
	}
	snprintf(d->what, sizeof(d->what), "pod %s/%s", out->ns, out->name);
	if (!out->uid) {
		rc = gs_decode__pb_pfail(d, "metadata.uid is missing");
		goto out;
	}
	out->created_ms = m.created_ms;
	out->deleting = m.deleting;
	if (mode == GS_DECODE__POD_HINT && hint && hint->bound && t.has_spec &&
	    (rc = held_bound(d, hint, &t.spec, out->uid, &held)) < 0)
		goto out;
	/* A partial record (objects.h): the labels, the sharing annotation and the owner, what gs_checks_pod_requests
	 * reads. */
	out->partial = mode == GS_DECODE__POD_META || held;
	const char *full_only = out->partial ? NULL : "";
	const struct wanted want[] = {
		{11, full_only ? GS_LABEL_POD_INDEX : NULL, &out->label_pod_index, NULL, NULL},
		{12, full_only ? GS_ANN_JOB_INDEX : NULL, &out->job_index, NULL, NULL},
		{12, full_only ? GS_ANN_ASSIGNED : NULL, &out->assigned, NULL, NULL},
		{12, full_only ? GS_GANG_PLACEMENT : NULL, &out->placement, NULL, NULL},
		{12, full_only ? GS_GANG_TIMEOUT : NULL, &out->gang_timeout, NULL, NULL},
		{12, full_only ? GS_GANG_SIZE : NULL, &out->gang_size, NULL, NULL},
		{12, full_only ? GS_GANG_PLACEHOLDER_FOR : NULL, &out->placeholder_for, NULL, NULL},
		{12, full_only ? GS_MAP_REF_ANNOTATION : NULL, &out->map_ref, NULL, NULL},
		{12, full_only ? GS_MAP_REF_GENERATION : NULL, &out->map_ref_generation, NULL, NULL},
		{12, full_only ? map_annotation : NULL, NULL, &out->map_text,
		 &out->map_len}, /* borrowed: see objects.h */
		{12, GS_ANN_ALLOW_SHARED, &shared, NULL, NULL},
	};
	if ((rc = meta_maps(d, &m, want, (int)(sizeof(want) / sizeof(want[0])))) < 0 || (rc = owner(d, &m, out)) < 0 ||
	    (rc = labels(d, m.data, m.len, 11, "metadata.labels", &out->labels, &out->n_labels)) < 0)
		goto out;
	out->allow_shared = shared && strcmp(shared, "true") == 0;
	if (t.has_spec && (rc = pod_spec(d, &t.spec, !out->partial, &names, out)) < 0)
		goto out;
	if (!t.has_spec)
		out->cuda_state = GS_CUDA_UNSET;
	out->stopped = 1;
	if (t.has_status && (rc = pod_status(d, &t.status, names, &phase, out)) < 0)
		goto out;
	out->terminal = phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
	out->running = phase && strcmp(phase, "Running") == 0;
out:
	gs_decode__pb_meta_free(&m);
	free(names);
	free(shared);
	free(phase);
	return rc;
}

int gs_decode__pb_pod(const void *data, size_t len, const char *map_annotation, enum gs_decode__pb_pod_mode mode,
		      const struct gs_decode_hint *hint, struct gs_pod_obj *out, char *err, size_t errlen)
{
	struct gs_decode__pctx d = {.err = err, .errlen = errlen, .what = "pod"};

	memset(out, 0, sizeof(*out));
	int r = decode_pod(&d, data, len, map_annotation, mode, hint, out);
	if (r < 0) {
		gs_pod_obj_free(out);
		memset(out, 0, sizeof(*out));
	}
	return r;
}

int gs_decode_pod_pb(const void *data, size_t len, const char *map_annotation, struct gs_pod_obj *out, char *err,
		     size_t errlen)
{
	return gs_decode__pb_pod(data, len, map_annotation, GS_DECODE__POD_FULL, NULL, out, err, errlen);
}

/* ---- nodes --------------------------------------------------------------------------------------- */

/* NodeSpec: 4 unschedulable, 5 taints (Taint: 1 key, 2 value, 3 effect). */
static int node_spec(struct gs_decode__pctx *d, const struct gs_pb_field *sf, struct gs_node_obj *out)
{
	struct gs_pb r, t;
	struct gs_pb_field f, g;
	char path[40];
	int n, i = 0, rc;
	uint64_t v = 0;

	if ((rc = gs_decode__pb_want(d, sf, GS_PB_LEN, "", "spec")) < 0)
		return rc;
	if ((n = gs_pb_count(sf->data, sf->len, 5)) < 0)
		return gs_decode__pb_pfail(d, "spec: malformed protobuf");
	if (n > 0 && !(out->taints = calloc((size_t)n, sizeof(*out->taints))))
		return gs_decode__pb_pnomem(d);
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
			mkpath(path, sizeof(path), "spec.taints", "", i++);
			out->n_taints = i;
			if ((rc = gs_decode__pb_want(d, &f, GS_PB_LEN, "spec", "taints")) < 0)
				return rc;
			gs_pb_sub(&t, &f);
			while ((rc = gs_pb_next(&t, &g)) > 0) {
				if (g.num == 1)
					rc = gs_decode__pb_sdup(d, &g, path, "key", KEEP_EMPTY, &o->key);
				else if (g.num == 2)
					rc = gs_decode__pb_sdup(d, &g, path, "value", ABSENT_IF_EMPTY, &o->value);
				else if (g.num == 3)
					rc = gs_decode__pb_sref(d, &g, path, "effect", &effect, &en);
				if (rc < 0)
					return rc;
			}
			if (rc < 0)
				return gs_decode__pb_pbad(d, &t, path);
			o->effect = effect_of(effect, en, GS_EFFECT_OTHER);
		}
	}
	return rc < 0 ? gs_decode__pb_pbad(d, &r, "spec") : 0;
}

/* NodeStatus 1 capacity["nvidia.com/gpu"] (the rest of the capacity is not kept): -1 when absent. */
static int gpu_capacity(struct gs_decode__pctx *d, const struct gs_pb_field *sf, struct gs_node_obj *out)
{
	struct gs_resources cap = {0};
	int rc = resources(d, sf->data, sf->len, 1, "status.capacity", &cap);

	for (int i = 0; rc == 0 && i < cap.n_ext; i++)
		if (strcmp(cap.ext[i].name, GS_RES_GPU) == 0)
			out->gpu_capacity = cap.ext[i].value;
	gs_resources_free(&cap);
	return rc;
}

/* NodeStatus 7 nodeInfo: NodeSystemInfo 3 bootID ("" as absent). */
static int node_info(struct gs_decode__pctx *d, const struct gs_pb_field *nf, struct gs_node_obj *out)
{
	struct gs_pb r;
	struct gs_pb_field g;
	int rc;

	if ((rc = gs_decode__pb_want(d, nf, GS_PB_LEN, "status", "nodeInfo")) < 0)
		return rc;
	gs_pb_sub(&r, nf);
	while ((rc = gs_pb_next(&r, &g)) > 0) {
		if (g.num != 3)
			continue;
		free(out->boot_id);
		out->boot_id = NULL;
		if ((rc = gs_decode__pb_sdup(d, &g, "status.nodeInfo", "bootID", ABSENT_IF_EMPTY, &out->boot_id)) < 0)
			return rc;
	}
	return rc < 0 ? gs_decode__pb_pbad(d, &r, "status.nodeInfo") : 0;
}

/* NodeStatus: 1 capacity, 2 allocatable, 4 conditions (NodeCondition: 1 type, 2 status), 7 nodeInfo. */
static int node_status(struct gs_decode__pctx *d, const struct gs_pb_field *sf, struct gs_node_obj *out)
{
	struct gs_pb r;
	struct gs_pb_field f;
	char path[64];
	int i = 0, rc;

	if ((rc = gs_decode__pb_want(d, sf, GS_PB_LEN, "", "status")) < 0)
		return rc;
	gs_pb_sub(&r, sf);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		const char *type = NULL, *st = NULL;
		size_t tn = 0, sn = 0;
		if ((f.num == 1 || f.num == 2) &&
		    (rc = gs_decode__pb_want(d, &f, GS_PB_LEN, "status", f.num == 1 ? "capacity" : "allocatable")) < 0)
			return rc;
		if (f.num == 7 && (rc = node_info(d, &f, out)) < 0)
			return rc;
		if (f.num != 4)
			continue;
		mkpath(path, sizeof(path), "status.conditions", "", i++);
		if ((rc = condition(d, &f, path, 2, "status", &type, &tn, &st, &sn)) < 0)
			return rc;
		if (gs_decode__pb_eq(type, tn, "Ready"))
			out->ready = gs_decode__pb_eq(st, sn, "True");
	}
	if (rc < 0)
		return gs_decode__pb_pbad(d, &r, "status");
	if ((rc = resources(d, sf->data, sf->len, 2, "status.allocatable", &out->alloc)) < 0)
		return rc;
	for (i = 0; i < out->alloc.n_ext; i++)
		if (strcmp(out->alloc.ext[i].name, GS_RES_GPU) == 0)
			out->gpus = out->alloc.ext[i].value;
	return gpu_capacity(d, sf, out);
}

/* Node: 1 metadata, 2 spec, 3 status. */
static int decode_node(struct gs_decode__pctx *d, const uint8_t *data, size_t len, struct gs_node_obj *out)
{
	struct gs_decode__pb_meta m = {0};
	struct top t = {0};
	int rc;

	out->gpus = -1;
	out->gpu_capacity = -1;
	if ((rc = top_fields(d, data, len, &m, &t)) < 0)
		goto out;
	out->name = m.name;
	out->resource_version = m.rv;
	m.name = m.rv = NULL;
	if (!out->name) {
		rc = gs_decode__pb_pfail(d, "metadata.name is missing");
		goto out;
	}
	snprintf(d->what, sizeof(d->what), "node %s", out->name);
	const struct wanted want[] = {{12, GS_ANN_ALLOWED_NS, &out->allowed_ns, NULL, NULL},
				      {12, GS_INUSE_ANNOTATION, &out->inuse, NULL, NULL}};
	if ((rc = labels(d, m.data, m.len, 11, "metadata.labels", &out->labels, &out->n_labels)) < 0 ||
	    (rc = meta_maps(d, &m, want, (int)(sizeof(want) / sizeof(want[0])))) < 0 ||
	    (t.has_spec && (rc = node_spec(d, &t.spec, out)) < 0) ||
	    (t.has_status && (rc = node_status(d, &t.status, out)) < 0))
		goto out;
out:
	gs_decode__pb_meta_free(&m);
	return rc;
}

int gs_decode_node_pb(const void *data, size_t len, struct gs_node_obj *out, char *err, size_t errlen)
{
	struct gs_decode__pctx d = {.err = err, .errlen = errlen, .what = "node"};

	memset(out, 0, sizeof(*out));
	int r = decode_node(&d, data, len, out);
	if (r < 0)
		gs_decode__node_failed(out);
	return r;
}
