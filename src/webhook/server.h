/*
 * server.h: the mutating admission webhook over HTTPS: routing, certificate rotation, counters.
 *
 * Routes:
 *   POST /mutate   Content-Type application/json (parameters allowed) -> gs_admission_review:
 *                  200 + AdmissionReview JSON; 400 text for a body that is no AdmissionReview;
 *                  500 text on allocation failure
 *   /mutate with another method -> 405 (Allow: POST);  wrong Content-Type -> 400;  any other path -> 404
 * Limits on the request (head size, body size GS_WEBHOOK_MAX_BODY, timeouts) are the HTTP server's.
 *
 * Certificates: the PEM files named by cert_file and key_file are read at start (a failure there is
 * fatal for the caller: gs_webhook_start returns an error and a readable reason). Every
 * reload_interval_ms the webhook stat()s both paths (following symlinks, so a Kubernetes Secret
 * volume's "..data" swap shows as a new inode), and when device, inode, size, mtime or ctime changed,
 * reads both, compares the content with the one being served, and on a difference builds
 * a new TLS config and hands it to the server: new connections use it, live ones finish with the
 * old one, so no request fails across a rotation. A pair that does not load (mismatched key, a half-
 * written file) is logged and counted, the old certificate stays, and it is retried when the files
 * change again. The file reads are synchronous on the loop thread: a few KiB, once per change.
 *
 * Loop thread only. No callback runs from inside gs_webhook_start.
 */
#ifndef GS_WEBHOOK_SERVER_H
#define GS_WEBHOOK_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "core/http.h"
#include "core/metrics.h"
#include "webhook/admission.h"

#define GS_WEBHOOK_PATH               "/mutate"
/* An AdmissionReview holds the object (and oldObject on UPDATE); the apiserver caps a request body at
 * 3 MiB, so twice that plus the envelope. */
#define GS_WEBHOOK_MAX_BODY           (7 * 1024 * 1024)
#define GS_WEBHOOK_MAX_RESPONSE       (2 * 1024 * 1024) /* base64 of GS_ADMISSION_PATCH_MAX, and some */
#define GS_WEBHOOK_CERT_MAX           (1024 * 1024)     /* bytes per certificate or key file */
#define GS_WEBHOOK_RELOAD_INTERVAL_MS 10000
/*
 * Connections (docs/http.md, "Connection limits"). The apiserver keeps up to ~25 idle connections
 * per webhook host and opens one more per concurrent admission (--max-mutating-requests-inflight,
 * 200 by default), possibly several apiservers behind one address: so by default one address may use
 * the whole cap, and eviction is what keeps room for it: at the cap, the oldest idle or unfinished
 * connection of the address that holds the most of them goes (core/http.h, "Limits").
 */
#define GS_WEBHOOK_MAX_CONNS          256
#define GS_WEBHOOK_HANDSHAKE_MS       5000
#define GS_WEBHOOK_HEADER_MS          10000 /* from the accept (handshake included) or the request's first byte */
#define GS_WEBHOOK_REQUEST_MS         10000 /* the apiserver's own timeout for a review is at most 30 s, 10 by default */
#define GS_WEBHOOK_IDLE_MS            60000

/*
 * Counters, updated on the loop thread; a caller may register them with a gs_metrics registry
 * (gs_webhook_stats_register), which then must not outlive the struct.
 */
struct gs_webhook_stats {
	struct gs_counter reviews[GS_ADMISSION_OUTCOME_COUNT]; /* POST /mutate answered, by outcome */
	struct gs_counter internal_errors;                     /* 500 answers (allocation failures) */
	struct gs_counter http_rejected;                       /* 404, 405, wrong Content-Type */
	struct gs_counter cert_reloads;                        /* certificate pairs loaded after the start */
	struct gs_counter cert_reload_failures;                /* pairs that changed on disk but did not load */
	struct gs_gauge cert_not_after;                        /* expiry of the served leaf, seconds since the epoch */
	struct gs_counter tls_failures;                        /* TLS handshakes that failed */
	struct gs_counter connections; /* connections accepted: as many as reviews = no keep-alive */
	struct gs_histogram latency;   /* seconds spent deciding one review (POST /mutate) */
	struct gs_counter conns_closed[GS_HTTP_CLOSE_REASON_COUNT]; /* the HTTP server's, copied */
};

/* Sets everything to zero and allocates the histogram (gs_metrics_latency_buckets). Cannot fail. */
void gs_webhook_stats_init(struct gs_webhook_stats *st);
void gs_webhook_stats_free(struct gs_webhook_stats *st);
/*
 * Registers the series as gpu_scheduler_webhook_reviews_total{result="..."},
 * gpu_scheduler_webhook_errors_total{kind="internal|rejected"},
 * gpu_scheduler_webhook_cert_reloads_total{result="success|failure"},
 * gpu_scheduler_webhook_tls_handshake_failures_total, gpu_scheduler_webhook_connections_total,
 * gpu_scheduler_webhook_cert_not_after_seconds, gpu_scheduler_webhook_review_duration_seconds and
 * gpu_scheduler_http_connections_closed_total{server="webhook",reason="..."}. The counters the HTTP
 * server keeps (connections, TLS failures, closes) are copied on every review and every reload tick.
 */
void gs_webhook_stats_register(struct gs_webhook_stats *st, struct gs_metrics *m);

struct gs_webhook_opts {
	const char *addr;      /* "0.0.0.0:8443" (--webhook-addr); "127.0.0.1:0" in tests */
	const char *cert_file; /* PEM chain, leaf first; NULL: cert_pem/key_pem (self-signed mode) */
	const char *key_file;  /* PEM key */
	const char *cert_pem;  /* with cert_file NULL: the pair itself (copied); no file polling */
	const char *key_pem;
	struct gs_admission *admission; /* borrowed: must outlive the webhook */
	struct gs_webhook_stats *stats; /* borrowed, initialised by the caller; NULL: the webhook keeps its own */
	unsigned reload_interval_ms;    /* 0: GS_WEBHOOK_RELOAD_INTERVAL_MS */
	size_t max_body;                /* 0: GS_WEBHOOK_MAX_BODY */
	unsigned max_conns;             /* 0: GS_WEBHOOK_MAX_CONNS */
	unsigned max_conns_per_source;  /* 0: max_conns */
	/*
	 * --webhook-client-ca-file: only clients with a certificate of this CA complete a handshake (the
	 * apiserver, given one by its AdmissionConfiguration's kubeConfigFile: docs/deploy.md); read at
	 * start (a failure is fatal), not reloaded. NULL: any client.
	 */
	const char *client_ca_file;
};

struct gs_webhook; /* opaque */

/*
 * Loads the certificate, listens, starts the reload timer. Returns 0, or <0 with a readable reason in
 * err: -ENOENT/-EACCES (a file cannot be read), -EINVAL (bad PEM, key does not match, bad options),
 * or the listen error (-EADDRINUSE, ...).
 */
int gs_webhook_start(uv_loop_t *loop, const struct gs_webhook_opts *o, struct gs_webhook **out, char *err,
		     size_t errlen);

/*
 * Serves a new pair from memory (self-signed mode): new connections use it, live ones keep theirs.
 * 0, or -EINVAL with a reason in err (the old pair stays).
 */
int gs_webhook_set_pair(struct gs_webhook *w, const char *cert_pem, const char *key_pem, char *err, size_t errlen);

/* The counters in use (the caller's, or the webhook's own). */
struct gs_webhook_stats *gs_webhook_stats(struct gs_webhook *w);

/*
 * Checks the files now, as the timer does (e.g. on SIGHUP). Returns 1 when a new pair is being
 * served, 0 when nothing changed (or the content is the same), <0 when a changed pair failed to load
 * (the old one stays; logged and counted).
 */
int gs_webhook_check_certs(struct gs_webhook *w);

/* Before gs_webhook_close, while the endpoints drop this replica: every answer from now on closes its
 * connection (gs_http_server_drain), so the apiserver's kept-alive connections move to the others. */
void gs_webhook_drain(struct gs_webhook *w);

/* Stops the timer and the server, closes every connection; close_cb (may be NULL) runs once all
 * handles are closed, after which w is freed. No other call on w afterwards (GS_ASSERT in each). */
void gs_webhook_close(struct gs_webhook *w, void (*close_cb)(void *ud), void *ud);

#endif
