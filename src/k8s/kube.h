/*
 * kube.h: the kube-apiserver client: authentication, rate limiting and priorities over the core
 * HTTP pool (src/core/http.h).
 *
 * Two pools to one apiserver: one for long-lived watches (a connection each, never queued behind
 * requests), one for requests. Requests have a priority: GS_KUBE_HIGH (bindings, lists) are always
 * dispatched before GS_KUBE_LOW (events, status patches), and low-priority requests may hold at most
 * a quarter of the request connections, so events never steal binding throughput.
 *
 * Authentication: a bearer token (static, or re-read from token_file every minute and at once after a
 * 401, as service-account tokens rotate) or a client certificate. A request answered 401 is retried
 * once after the token is re-read.
 *
 * Rate limit: --kube-api-qps/--kube-api-burst as a token bucket; qps 0 means unlimited. Watches are not
 * rate limited (kube-scheduler's client does the same for its informers' long requests).
 */
#ifndef GS_K8S_KUBE_H
#define GS_K8S_KUBE_H

#include <stdint.h>
#include <uv.h>

#include "core/http.h"
#include "core/tls.h"
#include "k8s/kubeconfig.h"

struct gs_kube;
struct gs_kube_call;

enum gs_kube_prio {
	GS_KUBE_HIGH = 0,
	GS_KUBE_LOW = 1,
};

struct gs_kube_opts {
	const struct gs_kubeconfig *kc; /* copied what is needed; may be freed after gs_kube_new */
	unsigned max_conns;             /* request connections (watches have their own) */
	double qps;                     /* 0: unlimited */
	unsigned burst;
	const char *user_agent;
	int protobuf; /* ask for protobuf where the apiserver has it (pod and node lists
	                                 * and watches, src/k8s/watch.c); 0: JSON everywhere */
};

/* Body bytes of a streamed 2xx response, as they arrive. */
typedef void (*gs_kube_data_cb)(const char *data, size_t len, void *ud);

struct gs_kube_req {
	const char *method;
	const char *path; /* path and query, escaped */
	const char *body; /* copied */
	size_t body_len;
	const char *content_type; /* default application/json when there is a body */
	const char *accept;       /* the Accept header; NULL: application/json */
	unsigned timeout_ms;      /* 0: the client default (30 s) for requests, none for watches */
	enum gs_kube_prio prio;
	int watch;               /* long-lived streaming request on the watch pool, on_data required */
	gs_kube_data_cb on_data; /* streams a 2xx body (watches, and lists too); may call gs_kube_cancel */
	/* Asked with done's ud before each write (gs_http_request's may_send): 0 withdraws the request,
	 * done then runs with GS_HTTP_EWITHDRAWN. A request that waited in the rate-limit queue, for a
	 * connection, or to be resent is asked again when its turn comes. NULL: always sent. */
	int (*may_send)(void *ud);
	/*
	 * Also send this client's bearer token (when it has one) in a header of this name: the apiserver's
	 * pod proxy drops Authorization, so a daemon behind it sees the caller's token only there
	 * (k8s/authz.h). NULL: no such header.
	 */
	const char *token_header;
};

/*
 * Exactly once per accepted call, never synchronously. err: 0 with resp (any HTTP status), or a
 * negative code as in gs_http_done_cb. msg: a readable reason for err ("" if none).
 */
typedef void (*gs_kube_done_cb)(int err, const struct gs_http_response *resp, const char *msg, void *ud);

int gs_kube_new(uv_loop_t *loop, const struct gs_kube_opts *opts, struct gs_kube **out, char *err, size_t errlen);

/* 0 (done will run) or <0 (it will not). *out, if given, is valid until done returns. */
int gs_kube_send(struct gs_kube *k, const struct gs_kube_req *req, gs_kube_done_cb done, void *ud,
		 struct gs_kube_call **out);
/*
 * The common case of gs_kube_send: one request with an optional NUL-terminated body (JSON unless
 * content_type says otherwise), no streaming; timeout_ms 0 is the client default. Same result.
 */
int gs_kube_request(struct gs_kube *k, const char *method, const char *path, const char *body, const char *content_type,
		    enum gs_kube_prio prio, unsigned timeout_ms, gs_kube_done_cb done, void *ud);

/* The response's Content-Type once its head arrived (inside on_data), else "". */
const char *gs_kube_call_content_type(const struct gs_kube_call *call);

/* gs_kube_opts.protobuf as given. */
int gs_kube_protobuf(const struct gs_kube *k);

/* The Accept headers asked with protobuf: an object or list (JSON allowed as the fallback: the server
 * picks), and a watch stream. */
#define GS_KUBE_ACCEPT_PB        "application/vnd.kubernetes.protobuf, application/json"
#define GS_KUBE_ACCEPT_PB_WATCH  "application/vnd.kubernetes.protobuf;stream=watch, application/json"
/* Objects as their metadata alone (meta.k8s.io/v1 PartialObjectMetadata, in JSON): a list, a watch's
 * objects. The apiserver leaves the rest (a pod's spec and its env) out of its answer. */
#define GS_KUBE_ACCEPT_META_LIST "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
#define GS_KUBE_ACCEPT_META      "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"

/* done runs later with -ECANCELED. */
void gs_kube_cancel(struct gs_kube_call *call);

struct gs_kube_stats {
	unsigned queued_high, queued_low, inflight_high, inflight_low;
	uint64_t requests_total, auth_retries_total, throttled_total;
	struct gs_http_client_stats http, watch;
	struct gs_tls_stats tls; /* handshakes of both clients' connections, full or resumed (tls.h) */
};
void gs_kube_stats(const struct gs_kube *k, struct gs_kube_stats *st);

/* The server URL, for logs. */
const char *gs_kube_server(const struct gs_kube *k);

/* Cancels every call and closes every handle; close_cb once all are closed. */
void gs_kube_close(struct gs_kube *k, void (*close_cb)(void *ud), void *ud);

/* Percent-escapes a query value (RFC 3986 unreserved kept). Returns 0 or -E2BIG. */
int gs_kube_escape(const char *s, char *out, size_t outlen);

/*
 * Tests only: the request connections (not the watches) go through the memory transport from now on
 * (core/http_client.h, gs_http_client__use_memory: no socket, no TLS; the test plays the apiserver).
 */
void gs_kube__use_memory(struct gs_kube *k, struct gs_conn_mem *(*open)(void *ud), void *ud);

#endif
