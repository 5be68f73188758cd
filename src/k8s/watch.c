/*
 * watch.c: see watch.h. One request at a time per watch: a list page, or the watch stream. All state
 * changes happen in the request's done callback or the backoff timer, never inside on_data, except the
 * event handlers themselves.
 */
#include "k8s/watch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/backoff.h"
#include "core/closer.h"
#include "core/buf.h"
#include "core/hmap.h"
#include "core/json_items.h"
#include "core/lines.h"
#include "core/log.h"
#include "core/pb.h"
#include "k8s/decode_gpm.h"
#include "k8s/decode_pdb.h"

#define GS_WATCH_PAGE_SIZE        500
#define GS_WATCH_TIMEOUT_MIN_S    300
#define GS_WATCH_TIMEOUT_MAX_S    600
#define GS_WATCH_BACKOFF_MIN_MS   800
#define GS_WATCH_BACKOFF_MAX_MS   30000
/* A watch that says nothing (no event, no bookmark) this long past its timeout is presumed dead. */
#define GS_WATCH_SILENCE_GRACE_MS 60000
#define GS_WATCH_LIST_TIMEOUT_MS  60000
/* The largest list item a streamed list keeps (etcd's own limit on an object is 1.5 MiB). */
#define GS_WATCH_ITEM_MAX         (4u << 20)

enum state {
	ST_LISTING,
	ST_WATCHING,
	ST_BACKOFF,
	ST_STOPPING,
};

struct gs_watch {
	uv_loop_t *loop;
	struct gs_kube *kube;
	struct gs_watch_handlers h;
	void *ud;
	enum gs_obj_kind kind;
	char *path;
	char *field_selector; /* escaped */
	char *map_annotation;
	struct gs_decode_hint hint;
	int metadata_only; /* opts->metadata_only */
	unsigned page_size;
	enum state state;
	char *rv;                   /* resourceVersion to watch from */
	char *cont;                 /* continue token of the list in progress */
	int cache_list;             /* the next list is the first: one streamed request served from the
	                       * apiserver's watch cache (resourceVersion=0), not pages from etcd */
	int streaming;              /* the list in flight is that one */
	unsigned pages;             /* requests the list in progress took */
	struct gs_json_items items; /* its splitter (JSON) */
	struct gs_pb_stream pbs;    /* its splitter (protobuf) */
	int list_pb;                /* the streamed list in flight: -1 not known yet, 0 JSON, 1 protobuf */
	int watch_pb;               /* the watch in flight: the same */
	char *stream_rv;            /* its metadata.resourceVersion */
	unsigned stream_skipped;
	char stream_why[256]; /* why the streamed list was given up, "" if it was not */
	uint64_t epoch;       /* the current list's number; keys seen in it carry it */
	int relist_wanted;
	int relist_asked;     /* gs_watch_relist: while watching, the watch ends and a list starts; while listing,
			   * another list follows this one */
	struct gs_hmap known; /* key -> (void *)epoch of the last list or event that showed it */
	struct gs_kube_call *call;
	struct gs_lines lines;
	int stream_err;   /* set by the stream: -ESTALE for 410, other <0 for garbage */
	uv_timer_t timer; /* backoff, and the silence guard while watching */
	struct gs_backoff backoff;
	struct gs_watch_stats st;
	int answered;            /* h.answered was called */
	struct gs_closer closer; /* the timer's close and the cancelled call's done, while stopping */
};

static void list_page(struct gs_watch *w);
static void watch_start(struct gs_watch *w);

const char *gs_watch_name(const struct gs_watch *w)
{
	return w->kind == GS_OBJ_POD    ? "pods"
	       : w->kind == GS_OBJ_NODE ? "nodes"
	       : w->kind == GS_OBJ_PDB  ? "poddisruptionbudgets"
					: GS_GPM_RESOURCE;
}

/* The kinds read in JSON alone, their own decoders (decode_gpm.h, decode_pdb.h): a custom resource has no
 * protobuf, and PodDisruptionBudgets are few and small. */
static int json_kind(enum gs_obj_kind kind)
{
	return kind == GS_OBJ_GPM || kind == GS_OBJ_PDB;
}

/* Protobuf asked for: never for a JSON-only kind. */
static int want_pb(const struct gs_watch *w)
{
	return !json_kind(w->kind) && !w->metadata_only && gs_kube_protobuf(w->kube);
}

/* The Accept header of a list (or, watch, of a watch's stream). NULL: JSON. */
static const char *accept_of(const struct gs_watch *w, int watch)
{
	if (w->metadata_only)
		return watch ? GS_KUBE_ACCEPT_META : GS_KUBE_ACCEPT_META_LIST;
	if (want_pb(w))
		return watch ? GS_KUBE_ACCEPT_PB_WATCH : GS_KUBE_ACCEPT_PB;
	return NULL;
}

static void set_str(char **dst, const char *s)
{
	char *n = s ? strdup(s) : NULL;
	if (s && !n)
		return; /* keep the old value: a stale version only costs a relist */
	free(*dst);
	*dst = n;
}

/* ---- objects to handlers --------------------------------------------------------------------- */

/* The key of obj: a pod's uid, a node's name, a GPUPlacementMap's or PodDisruptionBudget's "NS/NAME" (in buf). */
static const char *obj_key(enum gs_obj_kind kind, const void *obj, char *buf, size_t len)
{
	const struct gs_gpm *g = obj;
	const struct gs_pdb_obj *b = obj;
	if (kind == GS_OBJ_POD)
		return ((const struct gs_pod_obj *)obj)->uid;
	if (kind == GS_OBJ_NODE)
		return ((const struct gs_node_obj *)obj)->name;
	if (kind == GS_OBJ_PDB)
		snprintf(buf, len, "%s/%s", b->ns, b->name);
	else
		snprintf(buf, len, "%s/%s", g->ns, g->name);
	return buf;
}

static void upsert(struct gs_watch *w, const void *obj)
{
	char kbuf[2 * GS_GPM_MAX_NAME + 2];
	const char *key = obj_key(w->kind, obj, kbuf, sizeof(kbuf));
	if (gs_hmap_put_str(&w->known, key, (void *)(uintptr_t)w->epoch, NULL) < 0)
		gs_log_error("%s: out of memory tracking %s", gs_watch_name(w), key);
	w->h.upsert(w, w->kind, obj, w->ud);
}

static void removed(struct gs_watch *w, const char *key)
{
	if (gs_hmap_del_str(&w->known, key, NULL) == 0)
		w->h.remove(w, w->kind, key, w->ud);
}

/* After a complete list: whatever it did not show is gone. */
static void sweep(struct gs_watch *w)
{
	struct gs_hmap_iter it = {0};
	unsigned n = 0;
	while (gs_hmap_next(&w->known, &it)) {
		if ((uintptr_t)it.val == w->epoch)
			continue;
		/* The key is a copy owned by the map: report before deleting. */
		w->h.remove(w, w->kind, it.key, w->ud);
		gs_hmap_del(&w->known, it.key, it.klen, NULL);
		n++;
	}
	if (n)
		gs_log_info("%s: relist found %u object(s) deleted while not watching", gs_watch_name(w), n);
}

/* ---- scheduling the next step ------------------------------------------------------------------ */

static void on_timer(uv_timer_t *t)
{
	struct gs_watch *w = t->data;
	if (w->state == ST_WATCHING && w->call) {
		gs_log_warn("%s: watch silent for too long; restarting it", gs_watch_name(w));
		gs_kube_cancel(w->call);
		return;
	}
	if (w->state != ST_BACKOFF)
		return;
	if (w->rv && !w->relist_wanted) {
		watch_start(w);
	} else {
		w->state = ST_LISTING;
		list_page(w);
	}
}

static void tell_answered(struct gs_watch *w)
{
	if (w->answered)
		return;
	w->answered = 1;
	if (w->h.answered)
		w->h.answered(w, w->ud);
}

/* min_ms: the apiserver's Retry-After (429, 503), which the delay never undercuts. */
static void back_off_at_least(struct gs_watch *w, const char *why, uint64_t min_ms)
{
	uint64_t d = gs_backoff_next(&w->backoff);
	if (d < min_ms)
		d = min_ms;
	w->st.errors_total++;
	w->state = ST_BACKOFF;
	gs_log_warn("%s: %s; retrying in %.1f s", gs_watch_name(w), why, (double)d / 1000.0);
	uv_timer_start(&w->timer, on_timer, d, 0);
	tell_answered(w);
}

static void back_off(struct gs_watch *w, const char *why)
{
	back_off_at_least(w, why, 0);
}

static void relist(struct gs_watch *w, const char *why)
{
	gs_log_info("%s: %s; listing again", gs_watch_name(w), why);
	w->relist_wanted = 1;
	w->state = ST_LISTING;
	set_str(&w->cont, NULL);
	list_page(w);
}

/* ---- list ---------------------------------------------------------------------------------------- */

static int on_list_item(enum gs_obj_kind kind, const void *obj, void *ud)
{
	(void)kind;
	upsert(ud, obj);
	return 0;
}

static int on_gpm_item(const struct gs_gpm *gpm, void *ud)
{
	upsert(ud, gpm);
	return 0;
}

static int on_pdb_item(const struct gs_pdb_obj *pdb, void *ud)
{
	upsert(ud, pdb);
	return 0;
}

/*
 * The first list: one unpaginated GET with resourceVersion=0, which the apiserver serves from its watch
 * cache (client-go's reflector starts the same way), streamed and decoded one item at a time, so memory
 * stays bounded by one item however long the list. Measured with 10,000 pods: 0.55 s, against 2.9 s
 * for 20 pages of 500 read from etcd (docs/performance.md). Relists after an error or a 410 use the
 * paginated consistent list: the cache of another apiserver may be behind what this one showed us.
 */
static int on_stream_member(const char *key, const char *value, size_t len, void *ud)
{
	struct gs_watch *w = ud;
	char derr[200];
	if (strcmp(key, "metadata") != 0)
		return 0;
	free(w->stream_rv);
	w->stream_rv = NULL;
	if (gs_decode_list_meta(value, len, &w->stream_rv, derr, sizeof(derr)) < 0) {
		snprintf(w->stream_why, sizeof(w->stream_why), "%s", derr);
		return -EINVAL;
	}
	return 0;
}

static int on_stream_item(const char *value, size_t len, void *ud)
{
	struct gs_watch *w = ud;
	int r = gs_decode_list_item(value, len, w->kind, w->map_annotation, on_list_item, w, &w->stream_skipped);
	if (r < 0)
		snprintf(w->stream_why, sizeof(w->stream_why), "out of memory decoding an item");
	return r;
}

/* The protobuf list, streamed: the fields of the PodList/NodeList inside the envelope (1 metadata,
 * 2 items), one at a time. */
static int on_stream_field(uint32_t num, int wire, uint64_t v, const uint8_t *data, size_t len, void *ud)
{
	struct gs_watch *w = ud;
	char derr[200];
	int r;
	(void)v;
	if (num != 1 && num != 2)
		return 0;
	if (wire != GS_PB_LEN) {
		snprintf(w->stream_why, sizeof(w->stream_why), "list field %u has wire type %s", num,
			 gs_pb_wire_name((unsigned)wire));
		return -EINVAL;
	}
	if (num == 1) {
		free(w->stream_rv);
		w->stream_rv = NULL;
		if (gs_decode_list_meta_pb(data, len, &w->stream_rv, derr, sizeof(derr)) < 0) {
			snprintf(w->stream_why, sizeof(w->stream_why), "%s", derr);
			return -EINVAL;
		}
		return 0;
	}
	r = gs_decode_list_item_pb(data, len, w->kind, w->map_annotation, on_list_item, w, &w->stream_skipped);
	if (r < 0)
		snprintf(w->stream_why, sizeof(w->stream_why), "out of memory decoding an item");
	return r;
}

/* Which encoding a response came in, from its Content-Type, counted once per response. */
static int response_pb(struct gs_watch *w, const char *content_type)
{
	int pb = gs_decode_is_protobuf(content_type);
	if (pb)
		w->st.protobuf_total++;
	else
		w->st.json_total++;
	return pb;
}

static const char *enc_name(int pb)
{
	return pb ? "protobuf" : "JSON";
}

static void on_list_data(const char *data, size_t len, void *ud)
{
	struct gs_watch *w = ud;
	int r;
	if (w->stream_why[0] || w->state == ST_STOPPING)
		return;
	if (w->list_pb < 0)
		w->list_pb = response_pb(w, gs_kube_call_content_type(w->call));
	if (w->list_pb)
		r = gs_pb_stream_feed(&w->pbs, data, len);
	else
		r = gs_json_items_feed(&w->items, data, len);
	if (r < 0) {
		if (!w->stream_why[0])
			snprintf(w->stream_why, sizeof(w->stream_why), "%s", w->list_pb ? w->pbs.err : w->items.err);
		gs_kube_cancel(w->call);
	}
}

/* The streamed list's splitter, at the end of the body: 0 when it ended properly. */
static int stream_finish(struct gs_watch *w, const char **why)
{
	int r;
	if (w->list_pb < 0) { /* an empty body: neither splitter saw a byte */
		*why = "empty list body";
		return -EINVAL;
	}
	r = w->list_pb ? gs_pb_stream_finish(&w->pbs) : gs_json_items_finish(&w->items);
	*why = w->list_pb ? w->pbs.err : w->items.err;
	return r;
}

/* The list answered 404: the CRD is not installed. Said once, then asked again every
 * GS_WATCH_ABSENT_RETRY_MS without a word (not an error: a cluster may run without it). */
static void not_served(struct gs_watch *w)
{
	if (!w->st.absent)
		gs_log_info("%s: not served by the apiserver (404: its CRD is not installed); asking again every %d s",
			    gs_watch_name(w), GS_WATCH_ABSENT_RETRY_MS / 1000);
	w->st.absent = 1;
	w->epoch++;
	sweep(w); /* its objects went with it */
	w->relist_wanted = 1;
	w->state = ST_BACKOFF;
	set_str(&w->cont, NULL);
	uv_timer_start(&w->timer, on_timer, GS_WATCH_ABSENT_RETRY_MS, 0);
	tell_answered(w);
}

/* A list answer that is not a page to read (a failure, an error status, a streamed list not understood):
 * backs off or relists, and returns 1; 0 for a page to read. */
static int list_refused(struct gs_watch *w, int err, const struct gs_http_response *resp, const char *msg)
{
	char why[320];
	const char *fwhy = "";
	if (w->streaming && (w->stream_why[0] || (!err && resp->status == 200 && stream_finish(w, &fwhy) < 0))) {
		/* The apiserver answered, but not with a list we could read: the paginated list next. */
		snprintf(why, sizeof(why), "streamed list not understood: %s", w->stream_why[0] ? w->stream_why : fwhy);
		w->cache_list = 0;
		back_off(w, why);
		return 1;
	}
	if (err) {
		w->st.healthy = 0;
		snprintf(why, sizeof(why), "list failed: %s", msg);
		back_off(w, why);
		return 1;
	}
	w->st.healthy = 1;
	if (resp->status == 404 && w->kind == GS_OBJ_GPM) {
		not_served(w);
		return 1;
	}
	if (resp->status == 410 && w->cont) {
		/* The continue token expired mid-list: start the list over. */
		relist(w, "list continue token expired");
		return 1;
	}
	if (resp->status != 200) {
		int code = 0;
		char *reason = NULL, *message = NULL;
		if (gs_decode_is_protobuf(resp->content_type))
			gs_decode_status_pb(resp->body, resp->body_len, &code, &reason, &message);
		else
			gs_decode_status(resp->body, resp->body_len, &code, &reason, &message);
		snprintf(why, sizeof(why), "list answered %d%s%s", resp->status, message ? ": " : "",
			 message ? message : "");
		free(reason);
		free(message);
		back_off_at_least(w, why, (uint64_t)resp->retry_after * 1000);
		return 1;
	}
	return 0;
}

/* The page's items to the handlers (a streamed list's went as they arrived), its resourceVersion and
 * continue token into *rv and *cont (the caller frees them). 0, or <0 with a message in derr. */
static int list_items(struct gs_watch *w, const struct gs_http_response *resp, char **rv, char **cont, char *derr,
		      size_t derrlen)
{
	if (json_kind(w->kind)) {
		unsigned skipped = 0;
		int r = w->kind == GS_OBJ_PDB ? gs_decode_pdb_list(resp->body, resp->body_len, on_pdb_item, w, rv, cont,
								   &skipped, derr, derrlen)
					      : gs_decode_gpm_list(resp->body, resp->body_len, on_gpm_item, w, rv, cont,
								   &skipped, derr, derrlen);
		w->list_pb = 0;
		w->st.json_total++;
		if (skipped)
			gs_log_warn("%s: %u list item(s) skipped", gs_watch_name(w), skipped);
		return r;
	}
	if (w->streaming) {
		*rv = w->stream_rv;
		w->stream_rv = NULL;
		if (w->stream_skipped)
			gs_log_warn("%s: %u list item(s) skipped", gs_watch_name(w), w->stream_skipped);
		return 0;
	}
	if (response_pb(w, resp->content_type)) {
		w->list_pb = 1;
		return gs_decode_list_pb_ex(resp->body, resp->body_len, w->kind, w->map_annotation, on_list_item, w, rv,
					    cont, NULL, derr, derrlen);
	}
	w->list_pb = 0;
	return gs_decode_list(resp->body, resp->body_len, w->kind, w->map_annotation, on_list_item, w, rv, cont, derr,
			      derrlen);
}

/* The last page is in: what the list did not mention is gone, then the watch starts. */
static void list_synced(struct gs_watch *w)
{
	sweep(w);
	if (w->st.lists_total++ > 0)
		w->st.relists_total++;
	w->relist_wanted = 0;
	w->cache_list = 0;
	w->st.synced = 1;
	if (w->st.absent)
		gs_log_info("%s: served now (its CRD was installed)", gs_watch_name(w));
	w->st.absent = 0;
	gs_backoff_reset(&w->backoff);
	gs_log_info("%s: listed %u at resourceVersion %s (%s%u page%s, %s)", gs_watch_name(w),
		    (unsigned)gs_hmap_len(&w->known), w->rv ? w->rv : "?",
		    w->streaming ? "from the watch cache, streamed: " : "from etcd: ", w->pages,
		    w->pages == 1 ? "" : "s", enc_name(w->list_pb == 1));
	if (w->h.synced)
		w->h.synced(w, w->ud);
	tell_answered(w);
	if (w->state != ST_LISTING)
		return;
	if (w->relist_asked) {
		w->relist_asked = 0;
		relist(w, "asked to list again while listing");
		return;
	}
	watch_start(w);
}

static void on_list_done(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct gs_watch *w = ud;
	char why[320], derr[256] = "";
	char *rv = NULL, *cont = NULL;

	w->call = NULL;
	if (w->state == ST_STOPPING) {
		gs_closer_drop(&w->closer);
		return;
	}
	if (list_refused(w, err, resp, msg))
		return;
	if (list_items(w, resp, &rv, &cont, derr, sizeof(derr)) < 0) {
		snprintf(why, sizeof(why), "list reply not understood: %s", derr);
		free(rv);
		free(cont);
		back_off(w, why);
		return;
	}
	set_str(&w->rv, rv);
	set_str(&w->cont, cont && *cont ? cont : NULL);
	free(rv);
	free(cont);
	if (w->cont)
		list_page(w);
	else
		list_synced(w);
}

static void list_page(struct gs_watch *w)
{
	char path[4096];
	int n;

	if (!w->cont) {
		w->epoch++;
		w->pages = 0;
	}
	w->pages++;
	w->streaming = w->cache_list && !w->cont;
	if (w->streaming) {
		static const uint32_t raw_path[] = {2}; /* runtime.Unknown.raw: the list itself */
		gs_json_items_free(&w->items);
		gs_json_items_init(&w->items, "items", GS_WATCH_ITEM_MAX, on_stream_member, on_stream_item, w);
		gs_pb_stream_free(&w->pbs);
		gs_pb_stream_init(&w->pbs, "k8s", 4, raw_path, 1, GS_WATCH_ITEM_MAX, on_stream_field, w);
		w->list_pb = -1;
		free(w->stream_rv);
		w->stream_rv = NULL;
		w->stream_skipped = 0;
		w->stream_why[0] = '\0';
		n = snprintf(path, sizeof(path), "%s?resourceVersion=0", w->path);
	} else {
		n = snprintf(path, sizeof(path), "%s?limit=%u", w->path, w->page_size);
	}
	n += snprintf(path + n, sizeof(path) - (size_t)n, "%s%s", w->field_selector ? "&fieldSelector=" : "",
		      w->field_selector ? w->field_selector : "");
	if (w->cont) {
		char esc[2048];
		if (gs_kube_escape(w->cont, esc, sizeof(esc)) == 0)
			n += snprintf(path + n, sizeof(path) - (size_t)n, "&continue=%s", esc);
	}
	struct gs_kube_req req = {
		.method = "GET",
		.path = path,
		.timeout_ms = GS_WATCH_LIST_TIMEOUT_MS,
		.prio = json_kind(w->kind) ? GS_KUBE_LOW : GS_KUBE_HIGH,
		.on_data = w->streaming ? on_list_data : NULL,
		.accept = accept_of(w, 0),
	};
	gs_log_debug("%s: GET %s (Accept: %s)", gs_watch_name(w), path, req.accept ? req.accept : "application/json");
	int r = gs_kube_send(w->kube, &req, on_list_done, w, &w->call);
	if (r < 0) {
		w->call = NULL;
		back_off(w, "cannot send the list request");
	}
}

/* ---- watch ----------------------------------------------------------------------------------- */

/* An ERROR event: the stream stops, the done callback relists (410) or backs off. */
static int watch_error_event(struct gs_watch *w, int code, const char *reason, const char *message)
{
	gs_log_info("%s: watch error event %d %s: %s", gs_watch_name(w), code, reason ? reason : "",
		    message ? message : "");
	w->stream_err = code == 410 ? -ESTALE : -EPROTO;
	return -ECANCELED;
}

/* A JSON-only kind's watch event, decoded (rc 0, obj the record) or not (rc < 0, derr why), to the handlers. */
static int json_event(struct gs_watch *w, int rc, const char *derr, enum gs_decode_event_type type, const void *obj,
		      int code, const char *reason, const char *message, const char *rv)
{
	char kbuf[2 * GS_GPM_MAX_NAME + 2];

	if (rc < 0) {
		w->st.errors_total++;
		gs_log_warn("%s: watch event not understood: %s", gs_watch_name(w), derr);
		return 0;
	}
	w->st.events_total++;
	if (type == GS_DECODE_EV_ADDED || type == GS_DECODE_EV_MODIFIED)
		upsert(w, obj);
	else if (type == GS_DECODE_EV_DELETED)
		removed(w, obj_key(w->kind, obj, kbuf, sizeof(kbuf)));
	if (type == GS_DECODE_EV_ERROR)
		return watch_error_event(w, code, reason, message);
	set_str(&w->rv, rv);
	return 0;
}

/* One line of a GPUPlacementMap or PodDisruptionBudget watch (JSON). */
static int on_json_line(struct gs_watch *w, const char *line, size_t len)
{
	char derr[256] = "";
	int r;

	if (w->kind == GS_OBJ_PDB) {
		struct gs_pdb_event ev;
		r = gs_decode_pdb_event(line, len, &ev, derr, sizeof(derr));
		r = json_event(w, r, derr, ev.type, &ev.pdb, ev.status_code, ev.status_reason, ev.status_message,
			       ev.resource_version);
		gs_pdb_event_free(&ev);
		return r;
	}
	struct gs_gpm_event ev;
	r = gs_decode_gpm_event(line, len, &ev, derr, sizeof(derr));
	r = json_event(w, r, derr, ev.type, &ev.gpm, ev.status_code, ev.status_reason, ev.status_message,
		       ev.resource_version);
	gs_gpm_event_free(&ev);
	return r;
}

static int on_line(const char *line, size_t len, void *ud)
{
	struct gs_watch *w = ud;
	struct gs_decode_event ev;
	char derr[256] = "", kbuf[2];

	if (json_kind(w->kind))
		return on_json_line(w, line, len);

	int r = w->watch_pb ? gs_decode_watch_event_pb_hint(line, len, w->kind, w->map_annotation, &w->hint, &ev, derr,
							    sizeof(derr))
			    : gs_decode_watch_event(line, len, w->kind, w->map_annotation, &ev, derr, sizeof(derr));
	if (r < 0) {
		/* One bad event must not lose the others: count it, log it, go on. */
		w->st.errors_total++;
		gs_log_warn("%s: watch event not understood: %s", gs_watch_name(w), derr);
		return 0;
	}
	w->st.events_total++;
	switch (ev.type) {
	case GS_DECODE_EV_ADDED:
	case GS_DECODE_EV_MODIFIED:
		upsert(w, w->kind == GS_OBJ_POD ? (const void *)&ev.pod : (const void *)&ev.node);
		set_str(&w->rv, ev.resource_version);
		break;
	case GS_DECODE_EV_DELETED:
		removed(w, obj_key(w->kind, w->kind == GS_OBJ_POD ? (const void *)&ev.pod : (const void *)&ev.node,
				   kbuf, sizeof(kbuf)));
		set_str(&w->rv, ev.resource_version);
		break;
	case GS_DECODE_EV_BOOKMARK:
		set_str(&w->rv, ev.resource_version);
		break;
	case GS_DECODE_EV_ERROR:
		r = watch_error_event(w, ev.status_code, ev.status_reason, ev.status_message);
		gs_decode_event_free(&ev);
		return r; /* stop feeding; the done callback decides */
	}
	gs_decode_event_free(&ev);
	return 0;
}

static void on_watch_data(const char *data, size_t len, void *ud)
{
	struct gs_watch *w = ud;
	w->st.healthy = 1;
	if (w->stream_err)
		return;
	if (w->watch_pb < 0) {
		/* Frames of a 4-byte length (protobuf) or lines (JSON), by what the server chose. */
		w->watch_pb = response_pb(w, gs_kube_call_content_type(w->call));
		gs_lines_set_framed(&w->lines, w->watch_pb);
		gs_log_debug("%s: watch stream in %s", gs_watch_name(w), enc_name(w->watch_pb));
	}
	int r = gs_lines_feed(&w->lines, data, len);
	if (r < 0) {
		if (!w->stream_err)
			w->stream_err = r;
		if (w->call)
			gs_kube_cancel(w->call);
	}
}

static void on_watch_done(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct gs_watch *w = ud;
	char why[320];
	int stream_err = w->stream_err;

	w->call = NULL;
	w->st.restarts_total++;
	uv_timer_stop(&w->timer);
	gs_lines_reset(&w->lines);
	gs_lines_set_framed(&w->lines, 0);
	w->watch_pb = -1;
	w->stream_err = 0;
	if (w->state == ST_STOPPING) {
		gs_closer_drop(&w->closer);
		return;
	}
	if (w->relist_asked) {
		w->relist_asked = 0;
		relist(w, "asked to list again");
		return;
	}
	if (stream_err == -ESTALE) {
		relist(w, "watch resourceVersion too old (410 Gone)");
		return;
	}
	if (stream_err) {
		snprintf(why, sizeof(why), "watch stream broken: %s",
			 stream_err == -E2BIG ? "event over the size cap" : "error event");
		back_off(w, why);
		return;
	}
	if (err) {
		w->st.healthy = 0;
		snprintf(why, sizeof(why), "watch failed: %s", msg);
		back_off(w, why);
		return;
	}
	if (resp->status == 410) {
		relist(w, "watch answered 410 Gone");
		return;
	}
	if (resp->status == 404 && w->kind == GS_OBJ_GPM) {
		/* The CRD went away while we watched: the list says so (and sweeps what it held). */
		w->relist_wanted = 1;
	}
	if (resp->status != 200) {
		snprintf(why, sizeof(why), "watch answered %d", resp->status);
		back_off_at_least(w, why, (uint64_t)resp->retry_after * 1000);
		return;
	}
	/* The server's timeout ended it: carry on from where we are. */
	gs_backoff_reset(&w->backoff);
	watch_start(w);
}

static void watch_start(struct gs_watch *w)
{
	char path[4096];
	uint64_t timeout_s = gs_backoff_rand(&w->backoff, GS_WATCH_TIMEOUT_MIN_S, GS_WATCH_TIMEOUT_MAX_S);

	snprintf(path, sizeof(path), "%s?watch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=%llu%s%s",
		 w->path, w->rv ? w->rv : "", (unsigned long long)timeout_s, w->field_selector ? "&fieldSelector=" : "",
		 w->field_selector ? w->field_selector : "");
	struct gs_kube_req req = {
		.method = "GET",
		.path = path,
		.watch = 1,
		.on_data = on_watch_data,
		.prio = GS_KUBE_HIGH,
		.accept = accept_of(w, 1),
	};
	w->state = ST_WATCHING;
	w->stream_err = 0;
	w->watch_pb = -1;
	w->st.watches_total++;
	if (gs_kube_send(w->kube, &req, on_watch_done, w, &w->call) < 0) {
		w->call = NULL;
		back_off(w, "cannot send the watch request");
		return;
	}
	uv_timer_start(&w->timer, on_timer, timeout_s * 1000 + GS_WATCH_SILENCE_GRACE_MS, 0);
}

/* ---- public ---------------------------------------------------------------------------------- */

void gs_watch_start(uv_loop_t *loop, struct gs_kube *kube, const struct gs_watch_opts *opts,
		    const struct gs_watch_handlers *h, void *ud, struct gs_watch **out)
{
	struct gs_watch *w = gs_xcalloc(1, sizeof(*w));
	w->loop = loop;
	w->kube = kube;
	w->h = *h;
	w->ud = ud;
	w->kind = opts->kind;
	w->hint = opts->hint;
	w->metadata_only = opts->metadata_only;
	w->page_size = opts->page_size ? opts->page_size : GS_WATCH_PAGE_SIZE;
	w->path = gs_xstrdup(opts->path);
	w->map_annotation = gs_xstrdup(opts->map_annotation ? opts->map_annotation : "");
	if (opts->field_selector) {
		size_t cap = strlen(opts->field_selector) * 3 + 1;
		w->field_selector = gs_xmalloc(cap);
		gs_kube_escape(opts->field_selector, w->field_selector, cap);
	}
	gs_hmap_init(&w->known, GS_HMAP_COPY_KEYS);
	gs_lines_init(&w->lines, 0, on_line, w);
	gs_pb_stream_init(&w->pbs, NULL, 0, NULL, 0, 0, on_stream_field, w);
	w->list_pb = w->watch_pb = -1;
	gs_backoff_init(&w->backoff, GS_WATCH_BACKOFF_MIN_MS, GS_WATCH_BACKOFF_MAX_MS, opts->seed);
	uv_timer_init(loop, &w->timer);
	w->timer.data = w;
	w->state = ST_LISTING;
	w->cache_list = !opts->consistent_list && !json_kind(opts->kind);
	list_page(w);
	*out = w;
}

void gs_watch_relist(struct gs_watch *w)
{
	switch (w->state) {
	case ST_WATCHING:
		if (w->call) {
			w->relist_asked = 1; /* on_watch_done lists */
			gs_kube_cancel(w->call);
		}
		break;
	case ST_LISTING:
		w->relist_asked = 1; /* list_synced lists again */
		break;
	case ST_BACKOFF:
		w->relist_wanted = 1; /* the timer lists */
		break;
	case ST_STOPPING:
		break;
	}
}

void gs_watch_stats(const struct gs_watch *w, struct gs_watch_stats *st)
{
	*st = w->st;
	st->known = (unsigned)gs_hmap_len(&w->known);
}

static void watch_release(struct gs_closer *c)
{
	struct gs_watch *w = GS_CONTAINER_OF(c, struct gs_watch, closer);

	gs_hmap_free(&w->known);
	gs_lines_free(&w->lines);
	free(w->path);
	free(w->field_selector);
	free(w->map_annotation);
	free(w->rv);
	free(w->cont);
	gs_json_items_free(&w->items);
	gs_pb_stream_free(&w->pbs);
	free(w->stream_rv);
	free(w);
}

void gs_watch_stop(struct gs_watch *w, void (*close_cb)(void *ud), void *ud)
{
	w->state = ST_STOPPING;
	gs_closer_start(&w->closer, watch_release, close_cb, ud);
	if (w->call) {
		gs_closer_hold(&w->closer);
		gs_kube_cancel(w->call); /* its done callback runs later and drops its part */
	}
	uv_timer_stop(&w->timer);
	gs_closer_uv(&w->closer, (uv_handle_t *)&w->timer);
	gs_closer_arm(&w->closer);
}
