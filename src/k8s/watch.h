/*
 * watch.h: list-then-watch of one resource (pods, nodes or GPUPlacementMaps), the reflector of client-go
 * in C.
 *
 *   1. LIST -> upsert every item; once the list is complete, remove what was known before but is gone
 *      now (the relist sweep), then synced() fires. The first list is one request with
 *      resourceVersion=0, served from the apiserver's watch cache and decoded as it streams in, an
 *      item at a time; relists read pages (limit=page_size, continue=...) from etcd, consistently.
 *   2. WATCH from the list's resourceVersion with allowWatchBookmarks=true and a randomised
 *      timeoutSeconds (5-10 min), decoding the chunked stream line by line (JSON) or frame by frame
 *      (protobuf).
 *   Encoding: with gs_kube_opts.protobuf, every list and watch asks for protobuf with JSON as the
 *   fallback, and each response is decoded by its own Content-Type (an aggregated or old apiserver may
 *   answer JSON); without it, JSON only.
 *   3. A normal end re-watches from the last resourceVersion seen (bookmarks keep it fresh);
 *      410 Gone (as a status or an ERROR event) relists; an unreachable apiserver, 429 or 5xx backs off
 *      with jitter (0.8 s doubling to 30 s) and then resumes.
 *
 * GPUPlacementMaps (GS_OBJ_GPM, a custom resource): JSON only whatever gs_kube_opts.protobuf says (CRDs
 * have no protobuf), every list paginated (they are few and small), lists at GS_KUBE_LOW so that they
 * never go ahead of a pod or node list. A list answered 404 means the CRD is not installed: logged once,
 * st.absent set, listed again every GS_WATCH_ABSENT_RETRY_MS (not the error backoff), quietly, until
 * it is.
 *
 * Only compact records (src/sched/objects.h, k8s/decode_gpm.h) reach the handlers; whole objects are never kept. The
 * watch keeps the set of keys it has reported (pod UIDs, node names) for the relist sweep.
 */
#ifndef GS_K8S_WATCH_H
#define GS_K8S_WATCH_H

#include <stdint.h>
#include <uv.h>

#define GS_WATCH_ABSENT_RETRY_MS 30000 /* a resource not served (404) is listed again this often */

#include "k8s/kube.h"
#include "k8s/decode.h"

struct gs_watch;

struct gs_watch_handlers {
	/* An object was added or changed. obj is a struct gs_pod_obj, gs_node_obj or gs_gpm (decode_gpm.h),
	 * valid during the call. */
	void (*upsert)(struct gs_watch *w, enum gs_obj_kind kind, const void *obj, void *ud);
	/* An object is gone. key is the pod's UID, the node's name or the GPUPlacementMap's "NS/NAME". */
	void (*remove)(struct gs_watch *w, enum gs_obj_kind kind, const char *key, void *ud);
	/* A complete list was applied (the first one means the cache is synced). May be NULL. */
	void (*synced)(struct gs_watch *w, void *ud);
	/* The first list was answered, once: listed (after synced), not served (404, st.absent) or failed
	 * (st.errors_total; the watch retries as ever). Lets a caller order one watch after another without
	 * waiting for a failing one. May be NULL. */
	void (*answered)(struct gs_watch *w, void *ud);
};

struct gs_watch_opts {
	enum gs_obj_kind kind;
	const char *path;           /* collection path, e.g. "/api/v1/pods" */
	const char *field_selector; /* unescaped, may be NULL */
	const char *map_annotation; /* for pods */
	unsigned page_size;         /* 0: 500 */
	int consistent_list;        /* 1: the first list too is paginated from etcd, not the watch cache */
	uint64_t seed;              /* for jitter */
	/* Pods in protobuf: what the handler holds, so that a watch event of a pod it holds bound is read
	 * partially (decode.h, gs_decode_hint; objects.h, partial). {NULL}: every pod read whole. */
	struct gs_decode_hint hint;
	/* Pods as their metadata alone (GS_KUBE_ACCEPT_META*, JSON): the handler gets records with no spec,
	 * for a watcher that needs to know only that pods come and go (the node agent: no env read). */
	int metadata_only;
};

struct gs_watch_stats {
	uint64_t lists_total;    /* complete lists (the first included) */
	uint64_t relists_total;  /* lists after the first: 410 Gone or a failed watch without a version */
	uint64_t watches_total;  /* watch requests started */
	uint64_t restarts_total; /* watches that ended, for any reason */
	uint64_t errors_total;   /* failed requests and undecodable events */
	uint64_t events_total;
	unsigned known;          /* keys currently known */
	int synced;              /* a list has completed */
	int healthy;             /* the last request reached the apiserver */
	uint64_t protobuf_total; /* list pages and watch streams that came as protobuf */
	uint64_t json_total;     /* ... as JSON */
	int absent;              /* the last list was answered 404: the resource is not served (a CRD
	                          * not installed); cleared by the next list that succeeds */
};

/* Starts listing at once; cannot fail (allocation failures abort: core/alloc.h). opts strings are copied. */
void gs_watch_start(uv_loop_t *loop, struct gs_kube *kube, const struct gs_watch_opts *opts,
		    const struct gs_watch_handlers *h, void *ud, struct gs_watch **out);
void gs_watch_stats(const struct gs_watch *w, struct gs_watch_stats *st);
/*
 * Lists again, consistently (the paginated list from etcd), then watches on: every object is upserted
 * again (the engine takes what it does not hold: the GPUPlacementMaps it refused for memory, sched.h
 * gs_sched_gpm_take_relist). While watching, the watch is cancelled and the list starts; while listing,
 * another list follows; in a backoff, the retry lists. Counted in relists_total.
 */
void gs_watch_relist(struct gs_watch *w);
/* The resource's name for logs ("pods", "nodes", "gpuplacementmaps"). */
const char *gs_watch_name(const struct gs_watch *w);
/* Stops: cancels the request in flight, closes the timer; close_cb once everything is closed. */
void gs_watch_stop(struct gs_watch *w, void (*close_cb)(void *ud), void *ud);

#endif
