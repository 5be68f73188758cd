/*
 * decode_pb_wire.c: the protobuf envelopes around the objects of decode_pb.c: the "k8s\0" +
 * runtime.Unknown body of an object, a list or a Status, and the WatchEvent of a watch frame. See
 * decode.h and docs/k8s-decode.md, "Protobuf".
 */
#include "k8s/decode_pb_wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/log.h"
#include "core/pb.h"
#include "k8s/decode.h"
#include "k8s/decode_items.h"
#include "k8s/decode_pb_int.h"

static const uint8_t pb_magic[4] = {'k', '8', 's', 0};

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
static int unwrap(struct gs_decode__pctx *d, const uint8_t *data, size_t len, const uint8_t **raw, size_t *raw_len,
		  char *kind, size_t kindlen)
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
		return gs_decode__pb_pfail(d, "not a Kubernetes protobuf object (no \"k8s\\0\" prefix)");
	gs_pb_init(&r, data + sizeof(pb_magic), len - sizeof(pb_magic));
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		if (f.num == 1) {
			if ((rc = gs_decode__pb_want(d, &f, GS_PB_LEN, "", "typeMeta")) < 0)
				return rc;
			gs_pb_sub(&t, &f);
			while ((rc = gs_pb_next(&t, &g)) > 0)
				if (g.num == 2) {
					if ((rc = gs_decode__pb_sref(d, &g, "typeMeta", "kind", &s, &n)) < 0)
						return rc;
					snprintf(kind, kindlen, "%.*s", (int)n, s);
				}
			if (rc < 0)
				return gs_decode__pb_pbad(d, &t, "typeMeta");
		} else if (f.num == 2) {
			if ((rc = gs_decode__pb_want(d, &f, GS_PB_LEN, "", "raw")) < 0)
				return rc;
			*raw = f.data;
			*raw_len = f.len;
		} else if (f.num == 3) {
			if ((rc = gs_decode__pb_sref(d, &f, "", "contentEncoding", &s, &n)) < 0)
				return rc;
			if (n)
				return gs_decode__pb_pfail(d, "content encoding \"%.*s\" is not supported",
							   (int)(n < 32 ? n : 32), s);
		}
	}
	return rc < 0 ? gs_decode__pb_pbad(d, &r, "envelope") : 0;
}

int gs_decode_unwrap_pb(const void *body, size_t len, const uint8_t **raw, size_t *raw_len, char *kind, size_t kindlen,
			char *err, size_t errlen)
{
	struct gs_decode__pctx d = {.err = err, .errlen = errlen, .what = "object"};
	return unwrap(&d, body, len, raw, raw_len, kind, kindlen);
}

/* metav1.Status: 3 message, 4 reason, 6 code. */
static int status_obj(struct gs_decode__pctx *d, const uint8_t *data, size_t len, int *code, char **reason,
		      char **message)
{
	struct gs_pb r;
	struct gs_pb_field f;
	int64_t c = 0;
	int rc;

	gs_pb_init(&r, data, len);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		if (f.num == 3)
			rc = gs_decode__pb_sdup(d, &f, "", "message", ABSENT_IF_EMPTY, message);
		else if (f.num == 4)
			rc = gs_decode__pb_sdup(d, &f, "", "reason", ABSENT_IF_EMPTY, reason);
		else if (f.num == 6 && (rc = gs_decode__pb_ivarint(d, &f, "", "code", 0, 999, &c)) < 0)
			rc = gs_decode__pb_pfail(d, "status code is not an HTTP code");
		if (rc < 0)
			return rc;
	}
	*code = (int)c;
	return rc < 0 ? gs_decode__pb_pbad(d, &r, "status") : 0;
}

int gs_decode_status_pb(const void *body, size_t len, int *code, char **reason, char **message)
{
	struct gs_decode__pctx d = {0};
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
/* The WatchEvent's fields: its type (*type, *tn bytes) and its object's RawExtension bytes (*env, NULL
 * when absent). 0, or <0 with the message in d. */
static int event_fields(struct gs_decode__pctx *d, const uint8_t *data, size_t len, const char **type, size_t *tn,
			const uint8_t **env, size_t *env_len)
{
	struct gs_pb r, x;
	struct gs_pb_field f, g;
	int rc;

	gs_pb_init(&r, data, len);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		if (f.num == 1 && (rc = gs_decode__pb_sref(d, &f, "", "type", type, tn)) < 0)
			return rc;
		if (f.num != 2)
			continue;
		if ((rc = gs_decode__pb_want(d, &f, GS_PB_LEN, "", "object")) < 0)
			return rc;
		gs_pb_sub(&x, &f);
		while ((rc = gs_pb_next(&x, &g)) > 0) {
			if (g.num != 1)
				continue;
			if ((rc = gs_decode__pb_want(d, &g, GS_PB_LEN, "object", "raw")) < 0)
				return rc;
			*env = g.data;
			*env_len = g.len;
		}
		if (rc < 0)
			return gs_decode__pb_pbad(d, &x, "object");
	}
	if (rc < 0)
		return gs_decode__pb_pbad(d, &r, "");
	return 0;
}

/* A BOOKMARK's object: only its metadata.resourceVersion, into ev. */
static int event_bookmark(struct gs_decode__pctx *d, const uint8_t *raw, size_t raw_len, struct gs_decode_event *ev)
{
	struct gs_decode__pb_meta m = {0};
	struct gs_pb r;
	struct gs_pb_field f;
	int rc;

	gs_pb_init(&r, raw, raw_len);
	while ((rc = gs_pb_next(&r, &f)) > 0)
		if (f.num == 1) {
			gs_decode__pb_meta_free(&m);
			memset(&m, 0, sizeof(m));
			if ((rc = gs_decode__pb_meta_scalars(d, &f, &m)) < 0)
				break;
		}
	if (rc < 0 && r.err)
		rc = gs_decode__pb_pbad(d, &r, "object");
	ev->resource_version = m.rv;
	m.rv = NULL;
	gs_decode__pb_meta_free(&m);
	if (rc < 0)
		return rc;
	if (!ev->resource_version)
		return gs_decode__pb_pfail(d, "BOOKMARK without a resourceVersion");
	return 0;
}

/* An ADDED, MODIFIED or DELETED event's pod or node (a DELETED pod's metadata only), into ev. */
static int event_object(struct gs_decode__pctx *d, const uint8_t *raw, size_t raw_len, const char *map_annotation,
			const struct gs_decode_hint *hint, struct gs_decode_event *ev)
{
	const char *rv;
	int rc;
	if (ev->kind == GS_OBJ_POD) {
		rc = gs_decode__pb_pod(raw, raw_len, map_annotation,
				       ev->type == GS_DECODE_EV_DELETED ? GS_DECODE__POD_META : GS_DECODE__POD_HINT,
				       hint, &ev->pod, d->err, d->errlen);
		rv = ev->pod.resource_version;
	} else {
		rc = gs_decode_node_pb(raw, raw_len, &ev->node, d->err, d->errlen);
		rv = ev->node.resource_version;
	}
	if (rc == 0 && rv && !(ev->resource_version = strdup(rv)))
		rc = gs_decode__pb_pnomem(d);
	return rc;
}

static int decode_event(struct gs_decode__pctx *d, const uint8_t *data, size_t len, const char *map_annotation,
			const struct gs_decode_hint *hint, struct gs_decode_event *ev)
{
	const char *type = NULL;
	size_t tn = 0, t;
	const uint8_t *env = NULL, *raw;
	size_t env_len = 0, raw_len;
	char kind[64];
	int rc;

	if ((rc = event_fields(d, data, len, &type, &tn, &env, &env_len)) < 0)
		return rc;
	if (!type || tn == 0)
		return gs_decode__pb_pfail(d, "no type");
	for (t = 0; t < sizeof(watch_types) / sizeof(watch_types[0]); t++)
		if (gs_decode__pb_eq(type, tn, watch_types[t]))
			break;
	if (t == sizeof(watch_types) / sizeof(watch_types[0]))
		return gs_decode__pb_pfail(d, "unknown event type \"%.*s\"", (int)(tn < 32 ? tn : 32), type);
	ev->type = (enum gs_decode_event_type)t;
	if (!env) {
		if (ev->type == GS_DECODE_EV_ERROR)
			return 0;
		return gs_decode__pb_pfail(d, "%s event without an object", watch_types[t]);
	}
	if ((rc = unwrap(d, env, env_len, &raw, &raw_len, kind, sizeof(kind))) < 0)
		return rc;
	if (ev->type == GS_DECODE_EV_ERROR)
		return status_obj(d, raw, raw_len, &ev->status_code, &ev->status_reason, &ev->status_message);
	if (ev->type == GS_DECODE_EV_BOOKMARK)
		return event_bookmark(d, raw, raw_len, ev);
	return event_object(d, raw, raw_len, map_annotation, hint, ev);
}

int gs_decode_watch_event_pb(const void *frame, size_t len, enum gs_obj_kind kind, const char *map_annotation,
			     struct gs_decode_event *ev, char *err, size_t errlen)
{
	return gs_decode_watch_event_pb_hint(frame, len, kind, map_annotation, NULL, ev, err, errlen);
}

int gs_decode_watch_event_pb_hint(const void *frame, size_t len, enum gs_obj_kind kind, const char *map_annotation,
				  const struct gs_decode_hint *hint, struct gs_decode_event *ev, char *err,
				  size_t errlen)
{
	struct gs_decode__pctx d = {.err = err, .errlen = errlen, .what = "watch event"};
	int r;

	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->node.gpus = -1;
	ev->node.gpu_capacity = -1;
	r = decode_event(&d, frame, len, map_annotation, hint, ev);
	if (r < 0) {
		gs_decode_event_free(ev);
		ev->kind = kind;
	}
	return r;
}

/* ListMeta: 2 resourceVersion, 3 continue. */
static int list_meta(struct gs_decode__pctx *d, const uint8_t *data, size_t len, char **rv, char **cont)
{
	struct gs_pb r;
	struct gs_pb_field f;
	int rc;

	gs_pb_init(&r, data, len);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		if (f.num == 2)
			rc = gs_decode__pb_sdup(d, &f, "metadata", "resourceVersion", ABSENT_IF_EMPTY, rv);
		else if (f.num == 3 && cont)
			rc = gs_decode__pb_sdup(d, &f, "metadata", "continue", ABSENT_IF_EMPTY, cont);
		if (rc < 0)
			return rc;
	}
	return rc < 0 ? gs_decode__pb_pbad(d, &r, "metadata") : 0;
}

int gs_decode_list_meta_pb(const void *data, size_t len, char **resource_version, char *err, size_t errlen)
{
	struct gs_decode__pctx d = {.err = err, .errlen = errlen, .what = "list metadata"};
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
	return gs_decode__deliver(r, kind, &pod, &node, cb, ud);
}

int gs_decode_list_item_pb(const void *data, size_t len, enum gs_obj_kind kind, const char *map_annotation,
			   gs_decode_item_cb cb, void *ud, unsigned *skipped)
{
	char ierr[512];
	int r = decode_item(data, len, kind, map_annotation, cb, ud, ierr, sizeof(ierr));
	return gs_decode__stream_outcome(r, kind, ierr, skipped);
}

int gs_decode_list_pb_ex(const void *body, size_t len, enum gs_obj_kind kind, const char *map_annotation,
			 gs_decode_item_cb cb, void *ud, char **resource_version, char **continue_token,
			 unsigned *skipped, char *err, size_t errlen)
{
	struct gs_decode__pctx d = {.err = err, .errlen = errlen};
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
		return gs_decode__pb_pfail(&d, "a %.32s, not a %s", tkind[0] ? tkind : "message without a kind",
					   want_kind);
	/* The whole message is checked before any callback, as the JSON list is parsed first. */
	gs_pb_init(&r, raw, raw_len);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		if (f.num == 1 && ((rc = gs_decode__pb_want(&d, &f, GS_PB_LEN, "", "metadata")) < 0 ||
				   (rc = list_meta(&d, f.data, f.len, &rv, &cont)) < 0))
			goto out;
		if (f.num == 2 && (rc = gs_decode__pb_want(&d, &f, GS_PB_LEN, "", "items")) < 0)
			goto out;
	}
	if (rc < 0) {
		rc = gs_decode__pb_pbad(&d, &r, "");
		goto out;
	}
	gs_pb_init(&r, raw, raw_len);
	while (gs_pb_next(&r, &f) > 0) {
		if (f.num != 2)
			continue;
		rc = decode_item(f.data, f.len, kind, map_annotation, cb, ud, ierr, sizeof(ierr));
		if ((rc = gs_decode__item_outcome(rc, d.what, i++, ierr, &nskip, err, errlen)) < 0)
			goto out;
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
