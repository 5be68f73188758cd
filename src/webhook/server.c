/*
 * server.c: the admission webhook's HTTPS front: routing, the certificate files and their reload.
 *
 * The decision itself is admission.c (no I/O); the transport is core/http_server.c. What is left
 * here is small on purpose: route, time, count, and keep the served certificate in step with the
 * files without ever serving a broken pair.
 */
#include "webhook/server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/closer.h"
#include "core/http.h"
#include "core/log.h"

struct file_id {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};

struct gs_webhook {
	uv_loop_t *loop;
	struct gs_http_server *server;
	uv_timer_t reload;
	struct gs_admission *admission;
	struct gs_webhook_stats own_stats, *stats;
	char *cert_file, *key_file;
	struct file_id cert_id, key_id;
	char *cert, *key;          /* the content being served */
	struct gs_tls_config *cfg; /* built from it (a reference); the server holds its own */
	size_t cert_len, key_len;
	char *client_ca; /* o->client_ca_file's content, read at start; NULL: any client */
	size_t client_ca_len;
	struct gs_closer closer;
	struct gs_buf out;
};

/* ---- stats -------------------------------------------------------------------------------------- */

/* A review takes tens of microseconds; the apiserver's budget for the call is seconds. Finer than
 * gs_metrics_latency_buckets at the low end, so a p99 against a 1 ms goal can be read off. */
static const double review_buckets[] = {
	0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 2.5,
};

void gs_webhook_stats_init(struct gs_webhook_stats *st)
{
	memset(st, 0, sizeof(*st));
	gs_histogram_init(&st->latency, review_buckets, sizeof(review_buckets) / sizeof(review_buckets[0]));
}

void gs_webhook_stats_free(struct gs_webhook_stats *st)
{
	gs_histogram_free(&st->latency);
}

void gs_webhook_stats_register(struct gs_webhook_stats *st, struct gs_metrics *m)
{
	static char labels[GS_ADMISSION_OUTCOME_COUNT][48];
	for (int i = 0; i < GS_ADMISSION_OUTCOME_COUNT; i++) {
		snprintf(labels[i], sizeof(labels[i]), "result=\"%s\"",
			 gs_admission_outcome_name((enum gs_admission_outcome)i));
		gs_metrics_counter(m, "gpu_scheduler_webhook_reviews_total", "Admission reviews answered, by result.",
				   labels[i], &st->reviews[i]);
	}
	gs_metrics_counter(m, "gpu_scheduler_webhook_errors_total", "Webhook requests answered with an error, by kind.",
			   "kind=\"internal\"", &st->internal_errors);
	gs_metrics_counter(m, "gpu_scheduler_webhook_errors_total", "Webhook requests answered with an error, by kind.",
			   "kind=\"rejected\"", &st->http_rejected);
	gs_metrics_counter(m, "gpu_scheduler_webhook_cert_reloads_total", "Serving certificate reloads, by result.",
			   "result=\"success\"", &st->cert_reloads);
	gs_metrics_counter(m, "gpu_scheduler_webhook_cert_reloads_total", "Serving certificate reloads, by result.",
			   "result=\"failure\"", &st->cert_reload_failures);
	gs_metrics_counter(m, "gpu_scheduler_webhook_tls_handshake_failures_total",
			   "TLS handshakes on the webhook port that failed.", NULL, &st->tls_failures);
	gs_metrics_counter(m, "gpu_scheduler_webhook_connections_total",
			   "Connections accepted on the webhook port (each one a TLS handshake).", NULL,
			   &st->connections);
	gs_metrics_gauge(m, "gpu_scheduler_webhook_cert_not_after_seconds",
			 "Expiry of the served webhook certificate, seconds since the epoch.", NULL,
			 &st->cert_not_after);
	gs_metrics_histogram(m, "gpu_scheduler_webhook_review_duration_seconds",
			     "Time to decide one admission review, in seconds.", NULL, &st->latency);
	static char closed_labels[GS_HTTP_CLOSE_REASON_COUNT][64];
	for (int i = 0; i < GS_HTTP_CLOSE_REASON_COUNT; i++) {
		snprintf(closed_labels[i], sizeof(closed_labels[i]), "server=\"webhook\",reason=\"%s\"",
			 gs_http_close_reason_name((enum gs_http_close_reason)i));
		gs_metrics_counter(m, GS_HTTP_CLOSED_METRIC, GS_HTTP_CLOSED_HELP, closed_labels[i],
				   &st->conns_closed[i]);
	}
}

/* ---- certificates ------------------------------------------------------------------------------- */

static int file_stat(const char *path, struct file_id *id)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->size = st.st_size;
	id->mtime = st.st_mtim;
	id->ctime = st.st_ctim;
	return 0;
}

static int file_id_eq(const struct file_id *a, const struct file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
	       a->mtime.tv_nsec == b->mtime.tv_nsec && a->ctime.tv_sec == b->ctime.tv_sec &&
	       a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/*
 * Builds a TLS config from a pair and serves it: the one place a pair becomes current. Takes cert and
 * key over on success (freed on failure too). 0, or -EINVAL with a reason in err.
 */
static int adopt_pair(struct gs_webhook *w, char *cert, size_t cert_len, char *key, size_t key_len, char *err,
		      size_t errlen)
{
	struct gs_tls_config *cfg;
	char why[256];
	if (gs_tls_server_config_new(cert, cert_len, key, key_len, &cfg, why, sizeof(why)) < 0 ||
	    (w->client_ca &&
	     gs_tls_server_config_require_client(cfg, w->client_ca, w->client_ca_len, why, sizeof(why)) < 0)) {
		snprintf(err, errlen, "%s", why);
		gs_tls_config_unref(cfg); /* NULL when the first call failed */
		free(cert);
		free(key);
		return -EINVAL;
	}
	if (w->server)
		gs_http_server_set_tls(w->server, cfg);
	gs_tls_config_unref(w->cfg);
	w->cfg = cfg;
	w->stats->cert_not_after.v = (double)gs_tls_config_not_after(cfg);
	free(w->cert);
	free(w->key);
	w->cert = cert;
	w->key = key;
	w->cert_len = cert_len;
	w->key_len = key_len;
	return 0;
}

/*
 * Loads the pair if it differs from the one served. 1 a new pair is served, 0 unchanged, <0 failed
 * (err says why; the old pair stays).
 */
static int load_certs(struct gs_webhook *w, char *err, size_t errlen)
{
	struct file_id cid, kid;
	char *cert = NULL, *key = NULL;
	size_t cert_len = 0, key_len = 0;
	int r;

	if ((r = file_stat(w->cert_file, &cid)) < 0 ||
	    (r = gs_buf_read_file(w->cert_file, GS_WEBHOOK_CERT_MAX, &cert, &cert_len)) < 0) {
		snprintf(err, errlen, "%s: %s", w->cert_file, strerror(-r));
		goto out;
	}
	if ((r = file_stat(w->key_file, &kid)) < 0 ||
	    (r = gs_buf_read_file(w->key_file, GS_WEBHOOK_CERT_MAX, &key, &key_len)) < 0) {
		snprintf(err, errlen, "%s: %s", w->key_file, strerror(-r));
		goto out;
	}
	if (w->cert && cert_len == w->cert_len && key_len == w->key_len && !memcmp(cert, w->cert, cert_len) &&
	    !memcmp(key, w->key, key_len)) {
		w->cert_id = cid; /* same content under a new inode (a Secret update with equal data) */
		w->key_id = kid;
		r = 0;
		goto out;
	}
	char why[256];
	r = adopt_pair(w, cert, cert_len, key, key_len, why, sizeof(why));
	cert = key = NULL; /* adopted or freed */
	if (r < 0) {
		snprintf(err, errlen, "%s, %s: %s", w->cert_file, w->key_file, why);
		goto out;
	}
	w->cert_id = cid;
	w->key_id = kid;
	r = 1;
out:
	free(cert);
	free(key);
	return r;
}

int gs_webhook_check_certs(struct gs_webhook *w)
{
	GS_ASSERT(!gs_closer_closing(&w->closer));
	struct file_id cid, kid;
	if (!w->cert_file)
		return 0; /* self-signed mode: gs_webhook_set_pair brings new pairs */
	if (file_stat(w->cert_file, &cid) == 0 && file_stat(w->key_file, &kid) == 0 && file_id_eq(&cid, &w->cert_id) &&
	    file_id_eq(&kid, &w->key_id))
		return 0;
	char err[512];
	int r = load_certs(w, err, sizeof(err));
	if (r > 0) {
		w->stats->cert_reloads.v++;
		gs_log_info("webhook: serving the new certificate from %s (expires %.0f)", w->cert_file,
			    w->stats->cert_not_after.v);
	} else if (r < 0) {
		w->stats->cert_reload_failures.v++;
		gs_log_warn("webhook: certificate files changed but do not load, keeping the old pair: %s", err);
		/* Retried on the next change only: remember what failed. */
		file_stat(w->cert_file, &w->cert_id);
		file_stat(w->key_file, &w->key_id);
	}
	return r;
}

/* The counters the HTTP server keeps, copied into ours: on every review and every reload tick. */
static void refresh_server_stats(struct gs_webhook *w)
{
	struct gs_http_server_stats st;
	gs_http_server_stats(w->server, &st);
	w->stats->tls_failures.v = st.tls_failures_total;
	w->stats->connections.v = st.conns_total;
	for (int i = 0; i < GS_HTTP_CLOSE_REASON_COUNT; i++)
		w->stats->conns_closed[i].v = st.closed[i];
}

static void on_reload_tick(uv_timer_t *t)
{
	struct gs_webhook *w = t->data;
	refresh_server_stats(w);
	gs_webhook_check_certs(w);
}

/* ---- requests ----------------------------------------------------------------------------------- */

static void respond_text(struct gs_http_server_req *req, int status, const char *text)
{
	gs_http_respond(req, status, "text/plain; charset=utf-8", text, strlen(text), NULL, 0);
}

static int is_json(const char *ct)
{
	if (!ct)
		return 0;
	size_t n = strlen("application/json");
	return strncasecmp(ct, "application/json", n) == 0 && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

static void on_request(struct gs_http_server_req *req, void *ud)
{
	struct gs_webhook *w = ud;
	const char *path = gs_http_req_path(req), *method = gs_http_req_method(req);

	if (strcmp(path, GS_WEBHOOK_PATH) != 0) {
		w->stats->http_rejected.v++;
		respond_text(req, 404, "not found\n");
		return;
	}
	if (strcmp(method, "POST") != 0) {
		struct gs_http_header allow = {"Allow", "POST"};
		w->stats->http_rejected.v++;
		gs_http_respond(req, 405, "text/plain; charset=utf-8", "POST only\n", 10, &allow, 1);
		return;
	}
	if (!is_json(gs_http_req_header(req, "Content-Type"))) {
		w->stats->http_rejected.v++;
		respond_text(req, 400, "Content-Type must be application/json\n");
		return;
	}

	size_t len;
	const char *body = gs_http_req_body(req, &len);
	struct gs_admission_result res;
	refresh_server_stats(w);
	uint64_t t0 = uv_hrtime();
	gs_buf_reset(&w->out);
	int r = gs_admission_review(w->admission, body, len, &w->out, &res);
	gs_histogram_observe(&w->stats->latency, (double)(uv_hrtime() - t0) / 1e9);

	if (r == -EINVAL) {
		w->stats->reviews[GS_ADMISSION_BAD_REQUEST].v++;
		gs_log_warn("webhook: bad AdmissionReview: %s", res.message);
		char text[sizeof(res.message) + 32];
		snprintf(text, sizeof(text), "bad AdmissionReview: %s\n", res.message);
		respond_text(req, 400, text);
		return;
	}
	if (r < 0) {
		w->stats->internal_errors.v++;
		gs_log_error("webhook: cannot answer review %s: %s", res.uid, strerror(-r));
		respond_text(req, 500, "internal error\n");
		return;
	}
	w->stats->reviews[res.outcome].v++;
	char ref[sizeof(res.map_ref) + 48] = "";
	if (res.map_ref[0]) /* by reference: which object, and which generation of it the answer used */
		snprintf(ref, sizeof(ref), " map %s generation %lld", res.map_ref, (long long)res.map_generation);
	if (res.outcome == GS_ADMISSION_SKIPPED)
		gs_log_trace("webhook: %s %s/%s: skipped", res.uid, res.ns, res.name);
	else
		gs_log_info("webhook: pod %s/%s index %ld%s: %s%s%s%s%s%s%s", res.ns, res.name, res.index, ref,
			    gs_admission_outcome_name(res.outcome), res.node[0] ? " " : "", res.node,
			    res.devices[0] ? ":" : "", res.devices, res.message[0] ? ": " : "", res.message);
	gs_http_respond(req, 200, "application/json", w->out.data, w->out.len, NULL, 0);
}

/* ---- life --------------------------------------------------------------------------------------- */

static void webhook_free(struct gs_webhook *w)
{
	if (w->stats == &w->own_stats)
		gs_webhook_stats_free(&w->own_stats);
	gs_buf_free(&w->out);
	gs_tls_config_unref(w->cfg);
	free(w->cert);
	free(w->key);
	free(w->client_ca);
	free(w->cert_file);
	free(w->key_file);
	free(w);
}

static void webhook_release(struct gs_closer *c)
{
	webhook_free(GS_CONTAINER_OF(c, struct gs_webhook, closer));
}

int gs_webhook_start(uv_loop_t *loop, const struct gs_webhook_opts *o, struct gs_webhook **out, char *err,
		     size_t errlen)
{
	GS_ASSERT(loop && o && out);
	int from_files = o->cert_file && o->key_file;
	if (!o->addr || !o->admission || (!from_files && (!o->cert_pem || !o->key_pem))) {
		snprintf(err, errlen, "the webhook needs an address, a certificate, a key and an admission");
		return -EINVAL;
	}
	struct gs_webhook *w = gs_xcalloc(1, sizeof(*w));
	w->loop = loop;
	w->admission = o->admission;
	if (o->stats) {
		w->stats = o->stats;
	} else {
		gs_webhook_stats_init(&w->own_stats);
		w->stats = &w->own_stats;
	}
	gs_buf_init(&w->out, GS_WEBHOOK_MAX_RESPONSE);
	int r;
	if (o->client_ca_file &&
	    (r = gs_buf_read_file(o->client_ca_file, GS_WEBHOOK_CERT_MAX, &w->client_ca, &w->client_ca_len)) < 0) {
		snprintf(err, errlen, "%s: %s", o->client_ca_file, strerror(-r));
		webhook_free(w);
		return r;
	}
	if (from_files) {
		w->cert_file = gs_xstrdup(o->cert_file);
		w->key_file = gs_xstrdup(o->key_file);
		r = load_certs(w, err, errlen);
	} else {
		char *c = gs_xstrdup(o->cert_pem), *k = gs_xstrdup(o->key_pem);
		r = adopt_pair(w, c, strlen(c), k, strlen(k), err, errlen);
	}
	if (r < 0) {
		webhook_free(w);
		return r;
	}
	struct gs_http_server_opts so = {
		.addr = o->addr,
		.tls = w->cfg,
		.name = "webhook",
		.max_body = o->max_body ? o->max_body : GS_WEBHOOK_MAX_BODY,
		.max_conns = o->max_conns ? o->max_conns : GS_WEBHOOK_MAX_CONNS,
		.max_conns_per_source = o->max_conns_per_source,
		.handshake_timeout_ms = GS_WEBHOOK_HANDSHAKE_MS,
		.header_timeout_ms = GS_WEBHOOK_HEADER_MS,
		.request_timeout_ms = GS_WEBHOOK_REQUEST_MS,
		.idle_timeout_ms = GS_WEBHOOK_IDLE_MS,
	};
	r = gs_http_server_start(loop, &so, on_request, w, &w->server);
	if (r < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", o->addr, uv_strerror(r));
		webhook_free(w);
		return r;
	}
	uv_timer_init(loop, &w->reload);
	w->reload.data = w;
	unsigned every = o->reload_interval_ms ? o->reload_interval_ms : GS_WEBHOOK_RELOAD_INTERVAL_MS;
	uv_timer_start(&w->reload, on_reload_tick, every, every);
	*out = w;
	return 0;
}

int gs_webhook_set_pair(struct gs_webhook *w, const char *cert_pem, const char *key_pem, char *err, size_t errlen)
{
	GS_ASSERT(!gs_closer_closing(&w->closer) && cert_pem && key_pem);
	char *c = gs_xstrdup(cert_pem), *k = gs_xstrdup(key_pem);
	int r = adopt_pair(w, c, strlen(c), k, strlen(k), err, errlen);
	if (r < 0)
		w->stats->cert_reload_failures.v++;
	else
		w->stats->cert_reloads.v++;
	return r;
}

struct gs_webhook_stats *gs_webhook_stats(struct gs_webhook *w)
{
	return w->stats;
}

void gs_webhook_drain(struct gs_webhook *w)
{
	GS_ASSERT(!gs_closer_closing(&w->closer));
	gs_http_server_drain(w->server);
}

void gs_webhook_close(struct gs_webhook *w, void (*close_cb)(void *ud), void *ud)
{
	gs_closer_start(&w->closer, webhook_release, close_cb, ud);
	gs_closer_uv(&w->closer, (uv_handle_t *)&w->reload);
	gs_closer_hold(&w->closer);
	gs_http_server_close(w->server, gs_closer_drop_cb, &w->closer);
	gs_closer_arm(&w->closer);
}
