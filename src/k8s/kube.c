/*
 * kube.c: see kube.h. The kube layer keeps its own two FIFO queues and hands a request to the
 * HTTP pool only when a connection is free for it, so priorities and the rate limit are decided here
 * and the pool's own queue stays empty for requests.
 */
#include "k8s/kube.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/closer.h"
#include "core/list.h"
#include "core/log.h"

#define GS_KUBE_DEFAULT_TIMEOUT_MS 30000
#define GS_KUBE_TOKEN_REREAD_MS    60000
#define GS_KUBE_TOKEN_MAX          (64 * 1024)
#define GS_KUBE_WATCH_CONNS        8

struct gs_kube_call {
	struct gs_kube *k;
	struct gs_list link; /* in a queue (queued) or in k->early (finished early) */
	char *path;
	char *body;
	size_t body_len;
	const char *method; /* static strings only: "GET", ... copied below if needed */
	char method_buf[16];
	char content_type[64];
	char accept[96];
	char token_header[64]; /* "" for none */
	unsigned timeout_ms;
	enum gs_kube_prio prio;
	int watch;
	int auth_retried;
	int queued;
	int err_early; /* cancelled while queued: done runs from the completion timer */
	gs_kube_data_cb on_data;
	int (*may_send)(void *ud);
	gs_kube_done_cb done;
	void *ud;
	struct gs_http_call *hc;
};

struct queue {
	struct gs_list calls; /* FIFO */
	unsigned n;
};

struct gs_kube {
	uv_loop_t *loop;
	struct gs_http_client *http;
	struct gs_http_client *watch;
	struct queue q[2];
	unsigned inflight[2];
	unsigned max_conns;
	char *server;
	char *user_agent;
	int protobuf;
	struct gs_tls_config *tls; /* a reference: the one config of both clients, for its handshake counts */
	/* auth */
	char *token;
	char *token_file;
	uint64_t token_read_at;
	/* token bucket */
	double qps;
	double tokens;
	unsigned burst;
	uint64_t tokens_at;
	uv_timer_t throttle_timer;
	int throttle_armed;
	/* calls cancelled before dispatch finish from here, never inside gs_kube_cancel */
	struct gs_list early; /* the last one finished first */
	uv_timer_t early_timer;
	/* shutdown */
	int closing;
	struct gs_closer closer; /* the two timers and the two HTTP clients */
	uint64_t requests_total, auth_retries_total, throttled_total;
};

static void dispatch(struct gs_kube *k);

/* ---- token ------------------------------------------------------------------------------------- */

static int read_token(struct gs_kube *k)
{
	char buf[GS_KUBE_TOKEN_MAX + 1];
	ssize_t n = 0, r;
	int fd = open(k->token_file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		gs_log_warn("cannot read token file %s: %s (keeping the previous token)", k->token_file,
			    strerror(errno));
		return -errno;
	}
	while (n < GS_KUBE_TOKEN_MAX && (r = read(fd, buf + n, (size_t)(GS_KUBE_TOKEN_MAX - n))) > 0)
		n += r;
	close(fd);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	if (n == 0) {
		gs_log_warn("token file %s is empty (keeping the previous token)", k->token_file);
		return -EINVAL;
	}
	if (!k->token || strcmp(k->token, buf) != 0) {
		char *t = gs_xstrdup(buf);
		if (k->token)
			gs_log_info("token from %s changed; using the new one", k->token_file);
		free(k->token);
		k->token = t;
	}
	k->token_read_at = uv_now(k->loop);
	return 0;
}

/* ---- queues ------------------------------------------------------------------------------------ */

static void q_push(struct queue *q, struct gs_kube_call *c)
{
	gs_list_insert_tail(&q->calls, &c->link);
	q->n++;
	c->queued = 1;
}

static struct gs_kube_call *q_head(const struct queue *q)
{
	return gs_list_empty(&q->calls) ? NULL : GS_CONTAINER_OF(gs_list_first(&q->calls), struct gs_kube_call, link);
}

/* Takes c (queued in q) off q. */
static void q_remove(struct queue *q, struct gs_kube_call *c)
{
	GS_ASSERT(c->queued && q->n > 0);
	gs_list_remove(&c->link);
	q->n--;
	c->queued = 0;
}

static struct gs_kube_call *q_pop(struct queue *q)
{
	struct gs_kube_call *c = q_head(q);
	if (c)
		q_remove(q, c);
	return c;
}

static void on_early_timer(uv_timer_t *t);

/* Queues c for on_early_timer. */
static void early_push(struct gs_kube *k, struct gs_kube_call *c)
{
	gs_list_insert_head(&k->early, &c->link);
	uv_timer_start(&k->early_timer, on_early_timer, 0, 0);
}

static struct gs_kube_call *early_pop(struct gs_kube *k)
{
	struct gs_kube_call *c;

	if (gs_list_empty(&k->early))
		return NULL;
	c = GS_CONTAINER_OF(gs_list_first(&k->early), struct gs_kube_call, link);
	gs_list_remove(&c->link);
	return c;
}

static void call_free(struct gs_kube_call *c)
{
	free(c->path);
	free(c->body);
	free(c);
}

/* ---- completion -------------------------------------------------------------------------------- */

static void on_early_timer(uv_timer_t *t)
{
	struct gs_kube *k = t->data;
	struct gs_kube_call *c;
	while ((c = early_pop(k)) != NULL) {
		c->done(-ECANCELED, NULL, "cancelled", c->ud);
		call_free(c);
	}
}

static int submit(struct gs_kube_call *c);

static void on_http_data(struct gs_http_call *hc, const char *data, size_t len, void *ud)
{
	struct gs_kube_call *c = ud;
	(void)hc;
	if (c->on_data)
		c->on_data(data, len, c->ud);
}

static void on_http_done(struct gs_http_call *hc, int err, const struct gs_http_response *resp, void *ud)
{
	struct gs_kube_call *c = ud;
	struct gs_kube *k = c->k;
	const char *msg = err ? gs_http_call_error(hc) : "";

	c->hc = NULL;
	if (!c->watch)
		k->inflight[c->prio]--;

	if (err == 0 && resp->status == 401 && !c->auth_retried && k->token_file && !k->closing) {
		/* A rotated service-account token: re-read it and try once more. */
		c->auth_retried = 1;
		k->auth_retries_total++;
		read_token(k);
		gs_log_info("apiserver answered 401 to %s %s; retrying with the token re-read", c->method, c->path);
		if (submit(c) == 0) {
			dispatch(k);
			return;
		}
	}
	if (err && !*msg)
		msg = uv_strerror(err);
	c->done(err, err ? NULL : resp, msg, c->ud);
	call_free(c);
	if (!k->closing)
		dispatch(k);
}

static int call_may_send(void *ud)
{
	struct gs_kube_call *c = ud;
	return c->may_send(c->ud);
}

/* Hands one call to its HTTP pool. */
static int start(struct gs_kube_call *c)
{
	struct gs_kube *k = c->k;
	struct gs_http_header h[5];
	size_t nh = 0;
	char auth[GS_KUBE_TOKEN_MAX + 16];

	if (k->token_file && uv_now(k->loop) - k->token_read_at >= GS_KUBE_TOKEN_REREAD_MS)
		read_token(k);
	if (k->token) {
		snprintf(auth, sizeof(auth), "Bearer %s", k->token);
		h[nh++] = (struct gs_http_header){"Authorization", auth};
		if (c->token_header[0])
			h[nh++] = (struct gs_http_header){c->token_header, auth};
	}
	h[nh++] = (struct gs_http_header){"Accept", c->accept};
	h[nh++] = (struct gs_http_header){"User-Agent", k->user_agent};
	if (c->body)
		h[nh++] = (struct gs_http_header){"Content-Type", c->content_type};

	struct gs_http_request req = {
		.method = c->method,
		.path = c->path,
		.headers = h,
		.n_headers = nh,
		.body = c->body,
		.body_len = c->body_len,
		.timeout_ms = c->timeout_ms,
		.on_data = c->on_data ? on_http_data : NULL,
		.may_send = c->may_send ? call_may_send : NULL,
	};
	int r = gs_http_send(c->watch ? k->watch : k->http, &req, on_http_done, c, &c->hc);
	if (r == 0) {
		k->requests_total++;
		if (!c->watch)
			k->inflight[c->prio]++;
	}
	return r;
}

/* Queues a request call (or starts a watch at once). */
static int submit(struct gs_kube_call *c)
{
	if (c->watch)
		return start(c);
	q_push(&c->k->q[c->prio], c);
	return 0;
}

/* ---- rate limit and dispatch ------------------------------------------------------------------- */

static void on_throttle_timer(uv_timer_t *t)
{
	struct gs_kube *k = t->data;
	k->throttle_armed = 0;
	dispatch(k);
}

/* Takes a token from the bucket, or arms the timer for when one is due. 1 if taken. */
static int take_token(struct gs_kube *k)
{
	if (k->qps <= 0)
		return 1;
	uint64_t now = uv_now(k->loop);
	k->tokens += (double)(now - k->tokens_at) * k->qps / 1000.0;
	if (k->tokens > k->burst)
		k->tokens = k->burst;
	k->tokens_at = now;
	if (k->tokens >= 1) {
		k->tokens -= 1;
		return 1;
	}
	if (!k->throttle_armed) {
		uint64_t wait = (uint64_t)((1 - k->tokens) * 1000.0 / k->qps) + 1;
		uv_timer_start(&k->throttle_timer, on_throttle_timer, wait, 0);
		k->throttle_armed = 1;
		k->throttled_total++;
	}
	return 0;
}

static void dispatch(struct gs_kube *k)
{
	unsigned low_cap = k->max_conns / 4 ? k->max_conns / 4 : 1;

	while (!k->closing && k->inflight[0] + k->inflight[1] < k->max_conns) {
		struct gs_kube_call *c = NULL;
		if (k->q[GS_KUBE_HIGH].n)
			c = q_head(&k->q[GS_KUBE_HIGH]);
		else if (k->q[GS_KUBE_LOW].n && k->inflight[GS_KUBE_LOW] < low_cap)
			c = q_head(&k->q[GS_KUBE_LOW]);
		if (!c || !take_token(k))
			return;
		q_pop(&k->q[c->prio]);
		int r = start(c);
		if (r < 0) {
			/* The pool refused it synchronously: report it from the completion timer. */
			gs_log_warn("%s %s: cannot send: %s", c->method, c->path, uv_strerror(r));
			early_push(k, c);
		}
	}
}

/* ---- public API -------------------------------------------------------------------------------- */

int gs_kube_request(struct gs_kube *k, const char *method, const char *path, const char *body, const char *content_type,
		    enum gs_kube_prio prio, unsigned timeout_ms, gs_kube_done_cb done, void *ud)
{
	struct gs_kube_req req = {
		.method = method,
		.path = path,
		.body = body,
		.body_len = body ? strlen(body) : 0,
		.content_type = content_type,
		.timeout_ms = timeout_ms,
		.prio = prio,
	};
	return gs_kube_send(k, &req, done, ud, NULL);
}

int gs_kube_send(struct gs_kube *k, const struct gs_kube_req *req, gs_kube_done_cb done, void *ud,
		 struct gs_kube_call **out)
{
	if (k->closing)
		return -ECANCELED;
	if (req->watch && !req->on_data)
		return -EINVAL;
	if (strlen(req->method) >= sizeof(((struct gs_kube_call *)0)->method_buf))
		return -EINVAL;
	struct gs_kube_call *c = gs_xcalloc(1, sizeof(*c));
	c->k = k;
	strcpy(c->method_buf, req->method);
	c->method = c->method_buf;
	c->path = gs_xstrdup(req->path);
	if (req->body) {
		c->body = gs_xmalloc(req->body_len + 1);
		memcpy(c->body, req->body, req->body_len);
		c->body[req->body_len] = '\0';
		c->body_len = req->body_len;
	}
	snprintf(c->content_type, sizeof(c->content_type), "%s",
		 req->content_type ? req->content_type : "application/json");
	snprintf(c->accept, sizeof(c->accept), "%s", req->accept ? req->accept : "application/json");
	snprintf(c->token_header, sizeof(c->token_header), "%s", req->token_header ? req->token_header : "");
	c->timeout_ms = req->timeout_ms ? req->timeout_ms : req->watch ? 0 : GS_KUBE_DEFAULT_TIMEOUT_MS;
	c->prio = req->prio == GS_KUBE_LOW ? GS_KUBE_LOW : GS_KUBE_HIGH;
	c->watch = req->watch;
	c->on_data = req->on_data;
	c->may_send = req->may_send;
	c->done = done;
	c->ud = ud;
	int r = submit(c);
	if (r < 0) {
		call_free(c);
		return r;
	}
	if (out)
		*out = c;
	dispatch(k);
	return 0;
}

const char *gs_kube_call_content_type(const struct gs_kube_call *c)
{
	return c->hc ? gs_http_call_content_type(c->hc) : "";
}

int gs_kube_protobuf(const struct gs_kube *k)
{
	return k->protobuf;
}

void gs_kube_cancel(struct gs_kube_call *c)
{
	struct gs_kube *k = c->k;
	if (c->queued) {
		q_remove(&k->q[c->prio], c);
		early_push(k, c);
	} else if (c->hc) {
		gs_http_cancel(c->hc);
	}
}

static struct gs_tls_config *make_tls(const struct gs_kubeconfig *kc, char *err, size_t errlen)
{
	struct gs_tls_client_opts o = {
		.ca = kc->ca,
		.ca_len = kc->ca_len,
		.cert = kc->cert,
		.cert_len = kc->cert_len,
		.key = kc->key,
		.key_len = kc->key_len,
		.insecure_skip_verify = kc->insecure_skip_verify,
	};
	struct gs_tls_config *cfg = NULL;
	if (gs_tls_client_config_new(&o, &cfg, err, errlen) < 0)
		return NULL;
	return cfg;
}

int gs_kube_new(uv_loop_t *loop, const struct gs_kube_opts *opts, struct gs_kube **out, char *err, size_t errlen)
{
	const struct gs_kubeconfig *kc = opts->kc;
	struct gs_tls_config *tls = NULL;
	struct gs_kube *k = gs_xcalloc(1, sizeof(*k));
	int r;

	k->loop = loop;
	gs_list_init(&k->q[GS_KUBE_HIGH].calls);
	gs_list_init(&k->q[GS_KUBE_LOW].calls);
	gs_list_init(&k->early);
	k->max_conns = opts->max_conns ? opts->max_conns : 64;
	k->qps = opts->qps;
	k->burst = opts->burst ? opts->burst : 1;
	k->tokens = k->burst;
	k->tokens_at = uv_now(loop);
	k->server = gs_xstrdup(kc->server ? kc->server : "");
	k->user_agent = gs_xstrdup(opts->user_agent ? opts->user_agent : "gpu-scheduler");
	k->protobuf = opts->protobuf;
	if (kc->token)
		k->token = gs_xstrdup(kc->token);
	if (kc->token_file) {
		k->token_file = gs_xstrdup(kc->token_file);
		if (read_token(k) < 0 && !k->token) {
			snprintf(err, errlen, "cannot read the bearer token from %s", kc->token_file);
			r = -EINVAL;
			goto fail;
		}
	}
	if (!(tls = make_tls(kc, err, errlen))) {
		r = -EINVAL;
		goto fail;
	}
	struct gs_http_client_opts ho = {
		.host = kc->host,
		.port = kc->port,
		.server_name = kc->tls_server_name,
		.tls = tls,
		.max_conns = k->max_conns,
		.connect_timeout_ms = 10000,
		.idle_timeout_ms = 90000,
	};
	if ((r = gs_http_client_new(loop, &ho, &k->http)) < 0) {
		snprintf(err, errlen, "cannot create the HTTP client: %s", uv_strerror(r));
		goto fail;
	}
	ho.max_conns = GS_KUBE_WATCH_CONNS;
	if ((r = gs_http_client_new(loop, &ho, &k->watch)) < 0) {
		snprintf(err, errlen, "cannot create the HTTP client: %s", uv_strerror(r));
		goto fail;
	}
	k->tls = tls; /* our reference */
	uv_timer_init(loop, &k->throttle_timer);
	k->throttle_timer.data = k;
	uv_timer_init(loop, &k->early_timer);
	k->early_timer.data = k;
	*out = k;
	return 0;
fail:
	gs_tls_config_unref(tls);
	/* The HTTP clients own handles: they cannot be freed synchronously. A failed start is fatal for
	 * the daemon, so leaking them here is the lesser evil over a half-closed loop. */
	free(k->server);
	free(k->user_agent);
	free(k->token);
	free(k->token_file);
	if (!k->http && !k->watch)
		free(k);
	return r;
}

void gs_kube_stats(const struct gs_kube *k, struct gs_kube_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->queued_high = k->q[GS_KUBE_HIGH].n;
	st->queued_low = k->q[GS_KUBE_LOW].n;
	st->inflight_high = k->inflight[GS_KUBE_HIGH];
	st->inflight_low = k->inflight[GS_KUBE_LOW];
	st->requests_total = k->requests_total;
	st->auth_retries_total = k->auth_retries_total;
	st->throttled_total = k->throttled_total;
	gs_http_client_stats(k->http, &st->http);
	gs_http_client_stats(k->watch, &st->watch);
	if (k->tls)
		gs_tls_config_stats(k->tls, &st->tls);
}

const char *gs_kube_server(const struct gs_kube *k)
{
	return k->server;
}

static void kube_release(struct gs_closer *c)
{
	struct gs_kube *k = GS_CONTAINER_OF(c, struct gs_kube, closer);

	free(k->server);
	free(k->user_agent);
	free(k->token);
	free(k->token_file);
	gs_tls_config_unref(k->tls);
	free(k);
}

void gs_kube_close(struct gs_kube *k, void (*close_cb)(void *ud), void *ud)
{
	struct gs_kube_call *c;

	k->closing = 1;
	gs_closer_start(&k->closer, kube_release, close_cb, ud);
	/* Queued calls never reached the pool: finish them here, with the same contract as a cancel. */
	for (int p = 0; p < 2; p++) {
		while ((c = q_pop(&k->q[p])) != NULL) {
			c->done(-ECANCELED, NULL, "client closing", c->ud);
			call_free(c);
		}
	}
	while ((c = early_pop(k)) != NULL) {
		c->done(-ECANCELED, NULL, "client closing", c->ud);
		call_free(c);
	}
	gs_closer_uv(&k->closer, (uv_handle_t *)&k->throttle_timer);
	gs_closer_uv(&k->closer, (uv_handle_t *)&k->early_timer);
	gs_closer_hold(&k->closer);
	gs_http_client_close(k->http, gs_closer_drop_cb, &k->closer);
	gs_closer_hold(&k->closer);
	gs_http_client_close(k->watch, gs_closer_drop_cb, &k->closer);
	gs_closer_arm(&k->closer);
}

int gs_kube_escape(const char *s, char *out, size_t outlen)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		int keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
			   ch == '-' || ch == '.' || ch == '_' || ch == '~';
		if (n + (keep ? 1 : 3) >= outlen)
			return -E2BIG;
		if (keep) {
			out[n++] = (char)ch;
		} else {
			out[n++] = '%';
			out[n++] = hex[ch >> 4];
			out[n++] = hex[ch & 15];
		}
	}
	out[n] = '\0';
	return 0;
}

void gs_kube__use_memory(struct gs_kube *k, struct gs_conn_mem *(*open)(void *ud), void *ud)
{
	gs_http_client__use_memory(k->http, open, ud);
}
