/*
 * certs.c: the webhook's self-signed certificate cycle (see certs.h for the protocol).
 *
 * One request at a time: a small state machine driven by the responses, restarted by a timer. The
 * Secret is the source of truth; memory only remembers what was last served and the previous CA.
 */
#include "k8s/certs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <mbedtls/base64.h>

#include "core/alloc.h"
#include "core/backoff.h"
#include "core/buf.h"
#include "core/closer.h"
#include "core/log.h"
#include "core/tls.h"

#define CERTS_BODY_MAX (1024 * 1024)

struct gs_certs {
	uv_loop_t *loop;
	struct gs_kube *kube;
	uv_timer_t timer;
	struct gs_backoff backoff;
	char *ns, *secret, *service, *config_name;
	int64_t validity_s, renew_before_s;
	gs_certs_pair_cb on_pair;
	int (*may_renew)(void *ud);
	void *ud;

	/* the pair in effect (from the Secret), and the CA it replaced */
	char *ca, *cert, *key, *old_ca;
	int64_t not_after;
	char *served_cert; /* what on_pair last got */

	int pending; /* requests in flight (0 or 1) */
	int closing;
	struct gs_closer closer; /* the timer and the request in flight, while closing */
};

static void cycle(struct gs_certs *c);
static void patch_config(struct gs_certs *c);

static void replace(char **slot, char *v)
{
	free(*slot);
	*slot = v;
}

/* ---- scheduling --------------------------------------------------------------------------------- */

static void on_timer(uv_timer_t *t)
{
	cycle(t->data);
}

static void retry_later(struct gs_certs *c, const char *what, const char *why)
{
	uint64_t ms = gs_backoff_next(&c->backoff);
	gs_log_warn("webhook certificates: %s: %s; retrying in %.1f s", what, why, (double)ms / 1000);
	uv_timer_start(&c->timer, on_timer, ms, 0);
}

static void done_for_now(struct gs_certs *c)
{
	gs_backoff_reset(&c->backoff);
	int64_t until_renew_ms = (c->not_after - c->renew_before_s - (int64_t)time(NULL)) * 1000;
	uint64_t ms = GS_CERTS_CHECK_MS;
	if (until_renew_ms > 0 && (uint64_t)until_renew_ms < ms)
		ms = (uint64_t)until_renew_ms + 1000;
	uv_timer_start(&c->timer, on_timer, ms, 0);
}

/* A replica that does not lead leaves making a pair to the leader, and looks again soon. 1 if so. */
static int leave_to_leader(struct gs_certs *c)
{
	if (!c->may_renew || c->may_renew(c->ud))
		return 0;
	gs_log_info("webhook certificates: Secret %s/%s needs a new pair: left to the leader, looking again in %d s",
		    c->ns, c->secret, GS_CERTS_FOLLOWER_MS / 1000);
	uv_timer_start(&c->timer, on_timer, GS_CERTS_FOLLOWER_MS, 0);
	return 1;
}

void gs_certs_poke(struct gs_certs *c)
{
	if (!c->closing && !c->pending)
		uv_timer_start(&c->timer, on_timer, 0, 0);
}

static void certs_release(struct gs_closer *closer)
{
	struct gs_certs *c = GS_CONTAINER_OF(closer, struct gs_certs, closer);

	free(c->ns);
	free(c->secret);
	free(c->service);
	free(c->config_name);
	free(c->ca);
	free(c->cert);
	free(c->key);
	free(c->old_ca);
	free(c->served_cert);
	free(c);
}

/* ---- helpers ------------------------------------------------------------------------------------ */

static char *b64_decode(const char *in)
{
	size_t n = 0, len = strlen(in);
	mbedtls_base64_decode(NULL, 0, &n, (const unsigned char *)in, len);
	char *out = malloc(n + 1);
	if (!out)
		return NULL;
	if (mbedtls_base64_decode((unsigned char *)out, n, &n, (const unsigned char *)in, len) != 0) {
		free(out);
		return NULL;
	}
	out[n] = '\0';
	return out;
}

static char *b64_encode(const char *in)
{
	size_t n = 0, len = strlen(in);
	mbedtls_base64_encode(NULL, 0, &n, (const unsigned char *)in, len);
	char *out = malloc(n + 1);
	if (out && mbedtls_base64_encode((unsigned char *)out, n + 1, &n, (const unsigned char *)in, len) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* Expiry of a cert/key pair that loads as a server config, or 0 when it does not. */
static int64_t pair_not_after(const char *cert, const char *key)
{
	struct gs_tls_config *cfg;
	char err[128];
	if (!cert || !key || gs_tls_server_config_new(cert, strlen(cert), key, strlen(key), &cfg, err, sizeof(err)) < 0)
		return 0;
	int64_t t = gs_tls_config_not_after(cfg);
	gs_tls_config_unref(cfg);
	return t;
}

static int certs_send(struct gs_certs *c, const char *method, const char *path, const char *body, gs_kube_done_cb done)
{
	int r = gs_kube_request(c->kube, method, path, body, NULL, GS_KUBE_LOW, 0, done, c);
	if (r == 0)
		c->pending++;
	return r;
}

/*
 * Every response handler starts the same way: one request fewer in flight, nothing more to do when
 * closing, a transport error retried later. Returns 1 when the response was dealt with here.
 */
static int response_handled(struct gs_certs *c, int err, const char *msg, const char *what)
{
	c->pending--;
	if (c->closing) {
		gs_closer_drop(&c->closer);
		return 1;
	}
	if (err) {
		retry_later(c, what, msg);
		return 1;
	}
	return 0;
}

/* ---- the Secret --------------------------------------------------------------------------------- */

/* Generates a new CA and serving certificate into c (the old CA is kept for the bundle). */
static int generate(struct gs_certs *c)
{
	char dns[4][300];
	snprintf(dns[0], sizeof(dns[0]), "%s", c->service);
	snprintf(dns[1], sizeof(dns[1]), "%s.%s", c->service, c->ns);
	snprintf(dns[2], sizeof(dns[2]), "%s.%s.svc", c->service, c->ns);
	snprintf(dns[3], sizeof(dns[3]), "%s.%s.svc.cluster.local", c->service, c->ns);
	const char *names[] = {dns[0], dns[1], dns[2], dns[3], NULL};
	int64_t now = (int64_t)time(NULL);
	char *ca, *ca_key, *cert, *key, err[256];
	struct gs_tls_cert_req careq = {
		.common_name = "gpu-scheduler webhook CA",
		.is_ca = 1,
		.not_before = now - 3600,
		.not_after = now + 2 * c->validity_s,
	};
	if (gs_tls_generate(&careq, NULL, NULL, &ca, &ca_key, err, sizeof(err)) < 0) {
		gs_log_error("webhook certificates: cannot make a CA: %s", err);
		return -EINVAL;
	}
	struct gs_tls_cert_req req = {
		.common_name = dns[2],
		.dns_names = names,
		.not_before = now - 3600,
		.not_after = now + c->validity_s,
	};
	int r = gs_tls_generate(&req, ca, ca_key, &cert, &key, err, sizeof(err));
	free(ca_key);
	if (r < 0) {
		free(ca);
		gs_log_error("webhook certificates: cannot make the serving certificate: %s", err);
		return -EINVAL;
	}
	if (c->ca)
		replace(&c->old_ca, c->ca);
	c->ca = ca;
	replace(&c->cert, cert);
	replace(&c->key, key);
	c->not_after = req.not_after;
	gs_log_info("webhook certificates: generated a CA and a certificate for %s (expires in %lld days)", dns[2],
		    (long long)(c->validity_s / 86400));
	return 0;
}

static void on_secret_written(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct gs_certs *c = ud;
	if (response_handled(c, err, msg, "writing the Secret"))
		return;
	if (resp->status == 409) { /* another replica wrote first: take theirs */
		gs_log_info("webhook certificates: Secret %s/%s changed under us; reading it again", c->ns, c->secret);
		cycle(c);
		return;
	}
	if (resp->status / 100 != 2) {
		char why[200];
		snprintf(why, sizeof(why), "HTTP %d%s", resp->status,
			 resp->status == 403 ? " (RBAC: see deploy/rbac.yaml)" : "");
		retry_later(c, "writing the Secret", why);
		return;
	}
	gs_log_info("webhook certificates: stored in Secret %s/%s", c->ns, c->secret);
	patch_config(c);
}

/* The Secret to write: `existing` (the object as read, its resourceVersion making the PUT conditional)
 * with the pair in its data and nothing else changed, so the type, labels and annotations it was shipped
 * with (a Helm release's, kustomize's, Argo CD's) stay theirs; or, with NULL, a new kubernetes.io/tls
 * Secret. Takes existing. NULL when out of memory. */
static char *secret_body(struct gs_certs *c, cJSON *existing)
{
	char *b_crt = b64_encode(c->cert), *b_key = b64_encode(c->key), *b_ca = b64_encode(c->ca), *body = NULL;
	cJSON *o = existing ? existing : cJSON_CreateObject(), *meta, *data;
	if (!b_crt || !b_key || !b_ca || !o)
		goto out;
	meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	if (!existing) {
		if (!cJSON_AddStringToObject(o, "apiVersion", "v1") || !cJSON_AddStringToObject(o, "kind", "Secret") ||
		    !cJSON_AddStringToObject(o, "type", "kubernetes.io/tls") ||
		    !(meta = cJSON_AddObjectToObject(o, "metadata")) ||
		    !cJSON_AddStringToObject(meta, "name", c->secret) ||
		    !cJSON_AddStringToObject(meta, "namespace", c->ns) || !cJSON_AddObjectToObject(meta, "labels") ||
		    !cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(meta, "labels"), "app.kubernetes.io/name",
					     "gpu-scheduler"))
			goto out;
	}
	/* Left out, the apiserver keeps who manages which field; sent back, it would be ours to keep right. */
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "managedFields");
	data = cJSON_GetObjectItemCaseSensitive(o, "data");
	if (!cJSON_IsObject(data)) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, "data");
		if (!(data = cJSON_AddObjectToObject(o, "data")))
			goto out;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(data, "tls.crt");
	cJSON_DeleteItemFromObjectCaseSensitive(data, "tls.key");
	cJSON_DeleteItemFromObjectCaseSensitive(data, "ca.crt");
	if (cJSON_AddStringToObject(data, "tls.crt", b_crt) && cJSON_AddStringToObject(data, "tls.key", b_key) &&
	    cJSON_AddStringToObject(data, "ca.crt", b_ca))
		body = cJSON_PrintUnformatted(o);
out:
	cJSON_Delete(o);
	free(b_crt);
	free(b_key);
	free(b_ca);
	return body;
}

/* Writes the pair: into `existing` (the Secret as read; taken) with a PUT, or a new Secret (NULL). */
static void write_secret(struct gs_certs *c, cJSON *existing)
{
	char path[512];
	int put = existing != NULL, r = -ENOMEM;
	char *body = secret_body(c, existing);
	if (put)
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", c->ns, c->secret);
	else
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets", c->ns);
	if (body && strlen(body) <= CERTS_BODY_MAX)
		r = certs_send(c, put ? "PUT" : "POST", path, body, on_secret_written);
	else if (body)
		r = -E2BIG;
	if (r < 0)
		retry_later(c, "writing the Secret", strerror(-r));
	cJSON_free(body);
}

/* Takes the pair from a Secret's data when it is good for long enough. 1 taken, 0 not. */
static int take_secret(struct gs_certs *c, const cJSON *secret)
{
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(secret, "data");
	const char *crt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(data, "tls.crt"));
	const char *key = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(data, "tls.key"));
	const char *ca = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(data, "ca.crt"));
	if (!crt || !key || !ca)
		return 0;
	char *pc = b64_decode(crt), *pk = b64_decode(key), *pa = b64_decode(ca);
	int64_t na = pair_not_after(pc, pk);
	if (!pa || na - c->renew_before_s <= (int64_t)time(NULL)) {
		if (na)
			gs_log_info("webhook certificates: the stored certificate expires within %lld days: renewing",
				    (long long)(c->renew_before_s / 86400));
		else
			gs_log_warn("webhook certificates: Secret %s/%s does not hold a usable pair: replacing it",
				    c->ns, c->secret);
		free(pc);
		free(pk);
		free(pa);
		/* still remember its CA, so the bundle trusts both while replicas switch */
		if (ca && (pa = b64_decode(ca)) != NULL && (!c->ca || strcmp(pa, c->ca)))
			replace(&c->ca, pa);
		else
			free(pa);
		return 0;
	}
	if (c->ca && strcmp(c->ca, pa) != 0)
		replace(&c->old_ca, c->ca);
	else
		free(c->ca);
	c->ca = pa;
	replace(&c->cert, pc);
	replace(&c->key, pk);
	c->not_after = na;
	return 1;
}

static void on_secret(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct gs_certs *c = ud;
	if (response_handled(c, err, msg, "reading the Secret"))
		return;
	if (resp->status == 404) {
		if (!leave_to_leader(c) && generate(c) == 0)
			write_secret(c, NULL);
		else if (!c->may_renew || c->may_renew(c->ud))
			retry_later(c, "generating", "see above");
		return;
	}
	if (resp->status != 200) {
		char why[64];
		snprintf(why, sizeof(why), "HTTP %d", resp->status);
		retry_later(c, "reading the Secret", why);
		return;
	}
	cJSON *j = cJSON_ParseWithLength(resp->body, resp->body_len);
	if (!j) {
		retry_later(c, "reading the Secret", "not JSON");
		return;
	}
	if (take_secret(c, j)) {
		cJSON_Delete(j);
		patch_config(c);
		return;
	}
	if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(j, "metadata"))) {
		cJSON_Delete(j);
		retry_later(c, "reading the Secret", "no metadata");
		return;
	}
	if (leave_to_leader(c)) {
		cJSON_Delete(j); /* checked again soon */
	} else if (generate(c) == 0) {
		write_secret(c, j);
	} else {
		cJSON_Delete(j);
		retry_later(c, "generating", "see above");
	}
}

static void cycle(struct gs_certs *c)
{
	char path[512];
	if (c->closing || c->pending)
		return;
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", c->ns, c->secret);
	int r = certs_send(c, "GET", path, NULL, on_secret);
	if (r < 0)
		retry_later(c, "reading the Secret", strerror(-r));
}

/* ---- the MutatingWebhookConfiguration ------------------------------------------------------------ */

static void deliver(struct gs_certs *c)
{
	if (c->served_cert && strcmp(c->served_cert, c->cert) == 0) {
		done_for_now(c);
		return;
	}
	replace(&c->served_cert, strdup(c->cert));
	c->on_pair(c->cert, c->key, c->not_after, c->ud);
	done_for_now(c);
}

static void on_config_written(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct gs_certs *c = ud;
	if (response_handled(c, err, msg, "setting the caBundle"))
		return;
	if (resp->status == 409) {
		patch_config(c); /* someone else updated it: read it again */
		return;
	}
	if (resp->status / 100 != 2) {
		char why[64];
		snprintf(why, sizeof(why), "HTTP %d", resp->status);
		retry_later(c, "setting the caBundle", why);
		return;
	}
	gs_log_info("webhook certificates: caBundle of MutatingWebhookConfiguration %s updated", c->config_name);
	deliver(c);
}

static void on_config(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct gs_certs *c = ud;
	if (response_handled(c, err, msg, "reading the MutatingWebhookConfiguration"))
		return;
	if (resp->status == 404) {
		gs_log_warn("webhook certificates: MutatingWebhookConfiguration %s not found: its caBundle is not set "
			    "(apply deploy/webhook.yaml)",
			    c->config_name);
		deliver(c);
		return;
	}
	cJSON *j = resp->status == 200 ? cJSON_ParseWithLength(resp->body, resp->body_len) : NULL;
	if (!j) {
		char why[64];
		snprintf(why, sizeof(why), "HTTP %d", resp->status);
		retry_later(c, "reading the MutatingWebhookConfiguration", why);
		return;
	}
	struct gs_buf bundle;
	gs_buf_init(&bundle, 0);
	gs_buf_append_str(&bundle, c->ca);
	if (c->old_ca && strcmp(c->old_ca, c->ca) != 0)
		gs_buf_append_str(&bundle, c->old_ca);
	char *b64 = b64_encode(bundle.data);
	gs_buf_free(&bundle);
	int changed = 0;
	const cJSON *w;
	cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(j, "webhooks")) {
		cJSON *cc = cJSON_GetObjectItemCaseSensitive(w, "clientConfig");
		if (!cc)
			continue;
		const char *cur = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cc, "caBundle"));
		if (cur && b64 && strcmp(cur, b64) == 0)
			continue;
		cJSON_DeleteItemFromObjectCaseSensitive(cc, "caBundle");
		cJSON_AddStringToObject(cc, "caBundle", b64 ? b64 : "");
		changed = 1;
	}
	free(b64);
	if (!changed) {
		cJSON_Delete(j);
		deliver(c);
		return;
	}
	char *body = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	char path[512];
	snprintf(path, sizeof(path), "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/%s",
		 c->config_name);
	int r = body ? certs_send(c, "PUT", path, body, on_config_written) : -ENOMEM;
	free(body);
	if (r < 0)
		retry_later(c, "setting the caBundle", strerror(-r));
}

static void patch_config(struct gs_certs *c)
{
	char path[512];
	snprintf(path, sizeof(path), "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/%s",
		 c->config_name);
	int r = certs_send(c, "GET", path, NULL, on_config);
	if (r < 0)
		retry_later(c, "reading the MutatingWebhookConfiguration", strerror(-r));
}

/* ---- life ---------------------------------------------------------------------------------------- */

int gs_certs_start(uv_loop_t *loop, struct gs_kube *kube, const struct gs_certs_opts *o, struct gs_certs **out)
{
	if (!o->ns || !o->secret || !o->service || !o->config_name || !o->on_pair)
		return -EINVAL;
	struct gs_certs *c = gs_xcalloc(1, sizeof(*c));
	c->loop = loop;
	c->kube = kube;
	c->ns = gs_xstrdup(o->ns);
	c->secret = gs_xstrdup(o->secret);
	c->service = gs_xstrdup(o->service);
	c->config_name = gs_xstrdup(o->config_name);
	c->validity_s = o->validity_s ? o->validity_s : GS_CERTS_VALIDITY_S;
	c->renew_before_s = o->renew_before_s ? o->renew_before_s : GS_CERTS_RENEW_BEFORE_S;
	c->on_pair = o->on_pair;
	c->may_renew = o->may_renew;
	c->ud = o->ud;
	gs_backoff_init(&c->backoff, 800, 30000, (uint64_t)uv_hrtime());
	uv_timer_init(loop, &c->timer);
	c->timer.data = c;
	uv_timer_start(&c->timer, on_timer, 0, 0); /* never from inside this call */
	*out = c;
	return 0;
}

void gs_certs_close(struct gs_certs *c, void (*close_cb)(void *ud), void *ud)
{
	c->closing = 1;
	gs_closer_start(&c->closer, certs_release, close_cb, ud);
	GS_ASSERT(c->pending == 0 || c->pending == 1);
	if (c->pending)
		gs_closer_hold(&c->closer); /* its response handler drops it */
	gs_closer_uv(&c->closer, (uv_handle_t *)&c->timer);
	gs_closer_arm(&c->closer);
}
