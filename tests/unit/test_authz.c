/*
 * test_authz.c: delegated authentication and authorization (k8s/authz.c) and its cache
 * (core/ttl_cache.c): the cache's expiry, bound and eviction; the TokenReview and SubjectAccessReview
 * encoders and decoders; the checker against a fake apiserver over HTTPS, counting the reviews it is
 * sent (shared reviews, cached verdicts, the rate limit, expiry); the secure port's gate end to end.
 * The plain port without data is in test_health_api.c.
 * The real apiserver's answers are in tests/integration/test_secure_serving.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/health.h"
#include "core/http.h"
#include "core/tls.h"
#include "core/ttl_cache.h"
#include "k8s/authz.h"
#include "k8s/review.h"

/* ---- the cache ---------------------------------------------------------------------------------- */

static int freed;
static void count_free(void *v)
{
	freed++;
	free(v);
}

static int *val(int v)
{
	int *p = malloc(sizeof(*p));
	assert_non_null(p);
	*p = v;
	return p;
}

static void test_cache_ttl(void **state)
{
	struct gs_ttl_cache *c = gs_ttl_cache_new(4, count_free);
	struct gs_ttl_cache_stats st;
	freed = 0;
	gs_ttl_cache_put(c, "a", 1, val(1), 100, 0);
	assert_int_equal(*(int *)gs_ttl_cache_get(c, "a", 1, 99), 1);
	assert_null(gs_ttl_cache_get(c, "a", 1, 100)); /* expired at its expiry, and dropped */
	assert_int_equal(freed, 1);
	assert_null(gs_ttl_cache_get(c, "a", 1, 0)); /* gone, even for an earlier clock */
	gs_ttl_cache_put(c, "b", 1, val(2), 50, 0);
	gs_ttl_cache_put(c, "b", 1, val(3), 200, 10); /* a replacement frees the old value, new expiry */
	assert_int_equal(freed, 2);
	assert_int_equal(*(int *)gs_ttl_cache_get(c, "b", 1, 150), 3);
	gs_ttl_cache_stats(c, &st);
	assert_int_equal(st.entries, 1);
	assert_int_equal(st.hits, 2);
	assert_int_equal(st.misses, 2);
	assert_int_equal(st.expired, 1);
	/* touch: a new expiry for a live entry, its value kept; nothing for a missing one. */
	assert_int_equal(gs_ttl_cache_touch(c, "b", 1, 300, 150), 0);
	assert_int_equal(*(int *)gs_ttl_cache_get(c, "b", 1, 250), 3);
	assert_int_equal(gs_ttl_cache_touch(c, "zz", 2, 300, 150), -ENOENT);
	assert_int_equal(freed, 2);
	gs_ttl_cache_free(c);
	assert_int_equal(freed, 3);
}

static void test_cache_bound(void **state)
{
	struct gs_ttl_cache *c = gs_ttl_cache_new(3, count_free);
	struct gs_ttl_cache_stats st;
	char k[8];
	freed = 0;
	for (int i = 0; i < 3; i++) {
		snprintf(k, sizeof(k), "k%d", i);
		gs_ttl_cache_put(c, k, strlen(k), val(i), 1000, 0);
	}
	assert_non_null(gs_ttl_cache_get(c, "k0", 2, 1)); /* k0 used: k1 is now the least recently used */
	gs_ttl_cache_put(c, "k3", 2, val(3), 1000, 2);
	assert_int_equal(freed, 1);
	assert_null(gs_ttl_cache_get(c, "k1", 2, 3));
	assert_non_null(gs_ttl_cache_get(c, "k0", 2, 3));
	assert_non_null(gs_ttl_cache_get(c, "k2", 2, 3));
	assert_non_null(gs_ttl_cache_get(c, "k3", 2, 3));
	gs_ttl_cache_stats(c, &st);
	assert_int_equal(st.entries, 3);
	assert_int_equal(st.evicted, 1);
	/* A thousand more keys: never more than the bound. */
	for (int i = 0; i < 1000; i++) {
		snprintf(k, sizeof(k), "n%d", i);
		gs_ttl_cache_put(c, k, strlen(k), val(i), 1000, 4);
		gs_ttl_cache_stats(c, &st);
		assert_true(st.entries <= 3);
	}
	assert_non_null(gs_ttl_cache_get(c, "n999", 4, 5));
	assert_null(gs_ttl_cache_get(c, "n996", 4, 5));
	/* Binary keys: a NUL inside is part of the key. */
	gs_ttl_cache_put(c, "x\0y", 3, val(7), 1000, 5);
	assert_null(gs_ttl_cache_get(c, "x", 1, 5));
	assert_int_equal(*(int *)gs_ttl_cache_get(c, "x\0y", 3, 5), 7);
	gs_ttl_cache_free(c);
	assert_int_equal(freed, 1005); /* k1, 1000 for the n keys, one for x\0y, 3 at the end */
}

/* ---- JSON -------------------------------------------------------------------------------------- */

static void test_review_json(void **state)
{
	char *s = gs_review_token_json("ab\"c\\d");
	cJSON *o = cJSON_Parse(s);
	assert_non_null(o);
	assert_string_equal(cJSON_GetObjectItem(o, "apiVersion")->valuestring, "authentication.k8s.io/v1");
	assert_string_equal(cJSON_GetObjectItem(o, "kind")->valuestring, "TokenReview");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "spec"), "token")->valuestring, "ab\"c\\d");
	cJSON_Delete(o);
	free(s);

	char *groups[] = {"system:serviceaccounts", "system:authenticated"};
	struct gs_review_user u = {
		.name = "system:serviceaccount:monitoring:prometheus", .uid = "u-1", .groups = groups, .n_groups = 2};
	s = gs_review_access_json(&u, "/metrics", "get");
	assert_string_equal(s, "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SubjectAccessReview\",\"spec\":"
			       "{\"user\":\"system:serviceaccount:monitoring:prometheus\",\"uid\":\"u-1\",\"groups\":"
			       "[\"system:serviceaccounts\",\"system:authenticated\"],\"nonResourceAttributes\":"
			       "{\"path\":\"/metrics\",\"verb\":\"get\"}}}");
	free(s);
	u.uid = "";
	u.n_groups = 0;
	s = gs_review_access_json(&u, "/debug/pods/a/b", "get");
	assert_null(strstr(s, "\"uid\""));
	assert_non_null(strstr(s, "\"groups\":[]"));
	free(s);
}

static int decode_tr(const char *body, struct gs_review_user *u, char *why)
{
	return gs_review_decode_token(body, strlen(body), u, why, 256);
}

static void test_decode_token_review(void **state)
{
	struct gs_review_user u;
	char why[256];

	assert_int_equal(
		decode_tr("{\"kind\":\"TokenReview\",\"status\":{\"authenticated\":true,\"user\":{\"username\":"
			  "\"alice\",\"uid\":\"42\",\"groups\":[\"g1\",\"g2\"],\"extra\":{\"k\":[\"v\"]}},"
			  "\"audiences\":[\"api\"]}}",
			  &u, why),
		1);
	assert_string_equal(u.name, "alice");
	assert_string_equal(u.uid, "42");
	assert_int_equal(u.n_groups, 2);
	assert_string_equal(u.groups[1], "g2");
	gs_review_user_free(&u);
	assert_null(u.name);
	/* no uid, no groups: fine */
	assert_int_equal(decode_tr("{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"bob\"}}}", &u, why),
			 1);
	assert_null(u.uid);
	assert_int_equal(u.n_groups, 0);
	gs_review_user_free(&u);
	/* not authenticated: 0, the apiserver's error in why */
	assert_int_equal(
		decode_tr("{\"status\":{\"authenticated\":false,\"error\":\"invalid bearer token\"}}", &u, why), 0);
	assert_string_equal(why, "invalid bearer token");
	assert_int_equal(decode_tr("{\"status\":{\"user\":{}}}", &u, why), 0);
	assert_int_equal(decode_tr("{\"status\":{\"authenticated\":\"true\",\"user\":{\"username\":\"x\"}}}", &u, why),
			 0);
	/* not a TokenReview status */
	const char *bad[] = {
		"",
		"nope",
		"[]",
		"{}",
		"{\"status\":1}",
		"{\"status\":{\"authenticated\":true}}",
		"{\"status\":{\"authenticated\":true,\"user\":{}}}",
		"{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"\"}}}",
		"{\"status\":{\"authenticated\":true,\"user\":{\"username\":7}}}",
		"{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"a\",\"groups\":\"g\"}}}",
		"{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"a\",\"groups\":[\"g\",1]}}}",
		"{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"a\",\"uid\":[]}}}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_true(decode_tr(bad[i], &u, why) < 0);
		assert_null(u.name);
		assert_true(why[0] != '\0');
	}
	/* caps: a name over GS_REVIEW_NAME_MAX, more than GS_REVIEW_GROUPS_MAX groups */
	char *big = malloc(GS_REVIEW_NAME_MAX * 8 + 256), *p = big;
	p += sprintf(p, "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"");
	memset(p, 'a', GS_REVIEW_NAME_MAX + 1);
	p += GS_REVIEW_NAME_MAX + 1;
	strcpy(p, "\"}}}");
	assert_int_equal(decode_tr(big, &u, why), -E2BIG);
	p = big + sprintf(big, "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"a\",\"groups\":[");
	for (int i = 0; i <= GS_REVIEW_GROUPS_MAX; i++)
		p += sprintf(p, "%s\"g\"", i ? "," : "");
	strcpy(p, "]}}}");
	assert_int_equal(decode_tr(big, &u, why), -E2BIG);
	free(big);
}

static int decode_sar(const char *body, char *why)
{
	return gs_review_decode_access(body, strlen(body), why, 256);
}

static void test_decode_access_review(void **state)
{
	char why[256];
	assert_int_equal(
		decode_sar("{\"status\":{\"allowed\":true,\"reason\":\"RBAC: allowed by ClusterRoleBinding\"}}", why),
		1);
	assert_string_equal(why, "RBAC: allowed by ClusterRoleBinding");
	assert_int_equal(decode_sar("{\"status\":{\"allowed\":false}}", why), 0);
	assert_string_equal(why, "");
	assert_int_equal(decode_sar("{\"status\":{\"allowed\":false,\"reason\":\"no\"}}", why), 0);
	assert_string_equal(why, "no");
	assert_int_equal(decode_sar("{\"status\":{\"allowed\":true,\"denied\":true}}", why), 0);
	assert_int_equal(decode_sar("{\"status\":{\"allowed\":true,\"denied\":false}}", why), 1);
	assert_true(decode_sar("{\"status\":{}}", why) < 0);
	assert_true(decode_sar("{\"status\":{\"allowed\":\"true\"}}", why) < 0);
	assert_true(decode_sar("{\"kind\":\"Status\",\"code\":403}", why) < 0);
	assert_true(decode_sar("{", why) < 0);
}

/* ---- the checker, against a fake apiserver -------------------------------------------------------- */

static uv_loop_t loop;
static struct {
	int token_reviews, access_reviews;
	int hold; /* answer nothing while set */
	struct gs_http_server_req *held[64];
	int n_held;
} api;

static void answer(struct gs_http_server_req *r)
{
	size_t len;
	const char *body = gs_http_req_body(r, &len);
	cJSON *o = cJSON_ParseWithLength(body, len), *spec = cJSON_GetObjectItem(o, "spec");
	char out[512];
	if (strstr(gs_http_req_path(r), "tokenreviews")) {
		const char *t = cJSON_GetObjectItem(spec, "token")->valuestring;
		if (strcmp(t, "broken") == 0)
			snprintf(out, sizeof(out), "{\"status\":");
		else if (strncmp(t, "good", 4) == 0)
			snprintf(out, sizeof(out),
				 "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"%s\","
				 "\"groups\":[\"readers\"]}}}",
				 t);
		else
			snprintf(out, sizeof(out), "{\"status\":{\"authenticated\":false,\"error\":\"unknown\"}}");
	} else {
		const char *path =
			cJSON_GetObjectItem(cJSON_GetObjectItem(spec, "nonResourceAttributes"), "path")->valuestring;
		int ok =
			strcmp(path, "/metrics") == 0 &&
			strcmp(cJSON_GetArrayItem(cJSON_GetObjectItem(spec, "groups"), 0)->valuestring, "readers") == 0;
		snprintf(out, sizeof(out), "{\"status\":{\"allowed\":%s}}", ok ? "true" : "false");
	}
	cJSON_Delete(o);
	gs_http_respond(r, 201, "application/json", out, strlen(out), NULL, 0);
}

static void on_api(struct gs_http_server_req *r, void *ud)
{
	assert_string_equal(gs_http_req_header(r, "Authorization"), "Bearer daemon-token");
	if (strstr(gs_http_req_path(r), "tokenreviews"))
		api.token_reviews++;
	else
		api.access_reviews++;
	if (api.hold) {
		assert_true(api.n_held < 64);
		api.held[api.n_held++] = r;
		return;
	}
	answer(r);
}

static void release_held(void)
{
	api.hold = 0;
	for (int i = 0; i < api.n_held; i++)
		answer(api.held[i]);
	api.n_held = 0;
}

static int verdicts[GS_AUTHZ_VERDICT_COUNT], answered;
static void on_verdict(enum gs_authz_verdict v, void *ud)
{
	verdicts[v]++;
	answered++;
}

static void run_until(int n)
{
	while (answered < n)
		uv_run(&loop, UV_RUN_ONCE);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
	uv_update_time(&loop);
}

static int closed;
static void on_closed(void *ud)
{
	closed++;
}

struct fixture {
	struct gs_http_server *api;
	struct gs_authz *a;
	struct gs_metrics *m;
};

/* The per-source rate and burst start() gives the checker (0: GS_AUTHZ_SOURCE_QPS, _BURST). */
static double start_source_qps;
static unsigned start_source_burst;

static void start(struct fixture *f, unsigned ttl_ms, double qps, unsigned burst)
{
	char *cert, *key, err[256] = "", server[64];
	const char *names[] = {"127.0.0.1", NULL};
	struct gs_tls_cert_req cr = {.common_name = "api",
				     .dns_names = names,
				     .not_before = time(NULL) - 60,
				     .not_after = time(NULL) + 3600};
	struct gs_tls_config *tls;

	memset(&api, 0, sizeof(api));
	memset(verdicts, 0, sizeof(verdicts));
	answered = closed = 0;
	uv_loop_init(&loop);
	assert_int_equal(gs_tls_generate(&cr, NULL, NULL, &cert, &key, err, sizeof(err)), 0);
	assert_int_equal(gs_tls_server_config_new(cert, strlen(cert), key, strlen(key), &tls, err, sizeof(err)), 0);
	struct gs_http_server_opts so = {.addr = "127.0.0.1:0", .tls = tls};
	assert_int_equal(gs_http_server_start(&loop, &so, on_api, NULL, &f->api), 0);
	gs_tls_config_unref(tls);
	snprintf(server, sizeof(server), "https://127.0.0.1:%d", gs_http_server_port(f->api));
	struct gs_kubeconfig kc = {.server = server,
				   .host = "127.0.0.1",
				   .port = gs_http_server_port(f->api),
				   .token = "daemon-token",
				   .insecure_skip_verify = 1};
	f->m = gs_metrics_new();
	struct gs_authz_opts ao = {.kc = &kc,
				   .metrics = f->m,
				   .ttl_ms = ttl_ms,
				   .qps = qps,
				   .burst = burst,
				   .source_qps = start_source_qps,
				   .source_burst = start_source_burst};
	assert_int_equal(gs_authz_new(&loop, &ao, &f->a, err, sizeof(err)), 0);
	free(cert);
	free(key);
}

static void stop(struct fixture *f)
{
	gs_authz_close(f->a, on_closed, NULL);
	gs_http_server_close(f->api, on_closed, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(closed, 2);
	assert_int_equal(uv_loop_close(&loop), 0);
	gs_metrics_free(f->m);
}

static int check_from(struct fixture *f, const char *token, const char *path, const char *source)
{
	return gs_authz_check(f->a, token, path, source, on_verdict, NULL);
}

static int check(struct fixture *f, const char *token, const char *path)
{
	return check_from(f, token, path, "10.0.0.1");
}

static void test_checker(void **state)
{
	struct fixture f;
	struct gs_authz_stats st;
	start_source_qps = start_source_burst = 1000; /* one source here; its budget: test_checker_per_source */
	start(&f, 60000, 1000, 1000);
	start_source_qps = start_source_burst = 0;

	/* No token, an empty one, one over the cap: refused without a review. */
	assert_int_equal(check(&f, NULL, "/metrics"), GS_AUTHZ_UNAUTHENTICATED);
	assert_int_equal(check(&f, "", "/metrics"), GS_AUTHZ_UNAUTHENTICATED);
	char *huge = malloc(GS_AUTHZ_TOKEN_MAX + 2);
	memset(huge, 'x', GS_AUTHZ_TOKEN_MAX + 1);
	huge[GS_AUTHZ_TOKEN_MAX + 1] = '\0';
	assert_int_equal(check(&f, huge, "/metrics"), GS_AUTHZ_UNAUTHENTICATED);
	free(huge);

	/* Fifty requests with one unknown token at once: one TokenReview, fifty 401s; then from the cache. */
	for (int i = 0; i < 50; i++)
		assert_int_equal(check(&f, "bad", "/metrics"), GS_AUTHZ_PENDING);
	run_until(50);
	assert_int_equal(verdicts[GS_AUTHZ_UNAUTHENTICATED], 50);
	assert_int_equal(api.token_reviews, 1);
	assert_int_equal(check(&f, "bad", "/debug/pending"), GS_AUTHZ_UNAUTHENTICATED);
	assert_int_equal(api.token_reviews, 1);

	/* A good token: TokenReview then SubjectAccessReview, shared by the requests that wait for them. */
	answered = 0;
	memset(verdicts, 0, sizeof(verdicts));
	for (int i = 0; i < 5; i++)
		assert_int_equal(check(&f, "good-reader", "/metrics"), GS_AUTHZ_PENDING);
	run_until(5);
	assert_int_equal(verdicts[GS_AUTHZ_ALLOW], 5);
	assert_int_equal(api.token_reviews, 2);
	assert_int_equal(api.access_reviews, 1);
	assert_int_equal(check(&f, "good-reader", "/metrics"), GS_AUTHZ_ALLOW);
	/* Another path: the token is known, one SubjectAccessReview, denied, then cached. */
	assert_int_equal(check(&f, "good-reader", "/debug/pending"), GS_AUTHZ_PENDING);
	run_until(6);
	assert_int_equal(verdicts[GS_AUTHZ_FORBIDDEN], 1);
	assert_int_equal(api.token_reviews, 2);
	assert_int_equal(api.access_reviews, 2);
	assert_int_equal(check(&f, "good-reader", "/debug/pending"), GS_AUTHZ_FORBIDDEN);
	assert_int_equal(api.access_reviews, 2);

	/* A reply that is no TokenReview: 503 for the requests, not cached (the next one asks again). */
	assert_int_equal(check(&f, "broken", "/metrics"), GS_AUTHZ_PENDING);
	run_until(7);
	assert_int_equal(verdicts[GS_AUTHZ_ERROR], 1);
	assert_int_equal(check(&f, "broken", "/metrics"), GS_AUTHZ_PENDING);
	run_until(8);
	assert_int_equal(api.token_reviews, 4);

	gs_authz_stats(f.a, &st);
	assert_int_equal(st.token_reviews, 4);
	assert_int_equal(st.access_reviews, 2);
	assert_int_equal(st.verdicts[GS_AUTHZ_UNAUTHENTICATED], 54);
	assert_int_equal(st.verdicts[GS_AUTHZ_ALLOW], 6);
	assert_int_equal(st.verdicts[GS_AUTHZ_FORBIDDEN], 2);
	assert_int_equal(st.verdicts[GS_AUTHZ_ERROR], 2);
	assert_int_equal(st.inflight, 0);
	stop(&f);
}

/* A flood of distinct tokens from as many addresses: GS_AUTHZ_MAX_INFLIGHT reviews at most at once,
 * then the shared bucket. */
static void test_checker_bounds(void **state)
{
	struct fixture f;
	char tok[32];
	int pending = 0, throttled = 0;
	start(&f, 60000, 0.001, 6);

	for (int i = 0; i < 100; i++) { /* all in one turn of the loop: nothing is answered meanwhile */
		snprintf(tok, sizeof(tok), "bad-%d", i);
		int v = check_from(&f, tok, "/metrics", tok + 4);
		pending += v == GS_AUTHZ_PENDING;
		throttled += v == GS_AUTHZ_THROTTLED;
	}
	assert_int_equal(pending, GS_AUTHZ_MAX_INFLIGHT);
	assert_int_equal(throttled, 100 - GS_AUTHZ_MAX_INFLIGHT);
	run_until(GS_AUTHZ_MAX_INFLIGHT);
	/* Two tokens left in the bucket of six, then nothing (0.001 per second). */
	pending = throttled = 0;
	for (int i = 100; i < 200; i++) {
		snprintf(tok, sizeof(tok), "bad-%d", i);
		int v = check_from(&f, tok, "/metrics", tok + 4);
		pending += v == GS_AUTHZ_PENDING;
		throttled += v == GS_AUTHZ_THROTTLED;
	}
	assert_int_equal(pending, 2);
	assert_int_equal(throttled, 98);
	run_until(GS_AUTHZ_MAX_INFLIGHT + 2);
	assert_int_equal(api.token_reviews, GS_AUTHZ_MAX_INFLIGHT + 2);
	/* The known tokens are still answered from the cache. */
	assert_int_equal(check(&f, "bad-0", "/metrics"), GS_AUTHZ_UNAUTHENTICATED);
	stop(&f);
}

/*
 * The budget per source (issue 36): one address flooding new tokens gets the in-flight cap's free half
 * and the shared bucket down to half its burst; from there on (contended) it is held to its own budget,
 * spent meanwhile, and a scraper from another address still gets its reviews, its cached verdict none.
 */
static void test_checker_per_source(void **state)
{
	struct fixture f;
	char tok[32];
	int pending = 0, throttled = 0;
	start_source_qps = 0.001;
	start(&f, 60000, 0.001, GS_AUTHZ_BURST);
	start_source_qps = 0;

	for (int i = 0; i < 100; i++) { /* one turn, none answered: then half the cap is taken */
		snprintf(tok, sizeof(tok), "bad-%d", i);
		int v = check_from(&f, tok, "/metrics", "10.9.9.9");
		pending += v == GS_AUTHZ_PENDING;
		throttled += v == GS_AUTHZ_THROTTLED;
	}
	assert_int_equal(pending, GS_AUTHZ_MAX_INFLIGHT / 2);
	assert_int_equal(throttled, 100 - GS_AUTHZ_MAX_INFLIGHT / 2);
	/* Another address is under its own cap: its review now. */
	assert_int_equal(check_from(&f, "good-scraper", "/metrics", "10.0.0.7"), GS_AUTHZ_PENDING);
	run_until(GS_AUTHZ_MAX_INFLIGHT / 2 + 1);
	assert_int_equal(verdicts[GS_AUTHZ_ALLOW], 1);
	/* The flood goes on, each round answered before the next (both buckets refill at 0.001 per
	 * second here): two reviews a round while the shared bucket is at half or more, then none. */
	pending = throttled = 0;
	for (int round = 0; round < 10; round++) {
		int before = pending;
		for (int i = 0; i < 10; i++) {
			snprintf(tok, sizeof(tok), "bad-%d-%d", round, i);
			int v = check_from(&f, tok, "/metrics", "10.9.9.9");
			pending += v == GS_AUTHZ_PENDING;
			throttled += v == GS_AUTHZ_THROTTLED;
		}
		run_until(answered + pending - before);
	}
	/* The shared bucket: 20, less the flood's first 2 and the scraper's 2 (TokenReview and
	 * SubjectAccessReview), is 16, spent down to 9 uncontended (7 reviews), each spending one of the
	 * flood's own 10 as well; then what is left of its own: 10 - 2 - 7 = 1. */
	int free_ = GS_AUTHZ_BURST - GS_AUTHZ_MAX_INFLIGHT / 2 - 2 - GS_AUTHZ_BURST / 2 + 1;
	int own = GS_AUTHZ_SOURCE_BURST - GS_AUTHZ_MAX_INFLIGHT / 2 - free_;
	assert_int_equal(pending, free_ + (own > 0 ? own : 0));
	assert_int_equal(throttled, 100 - pending);
	int reviews = GS_AUTHZ_MAX_INFLIGHT / 2 + 1 + pending;
	assert_int_equal(api.token_reviews, reviews);
	/* The scraper: its verdict cached (no review), and a new token of its reviewed although the
	 * reviews are contended now: its own budget has room. */
	assert_int_equal(check_from(&f, "good-scraper", "/metrics", "10.0.0.7"), GS_AUTHZ_ALLOW);
	assert_int_equal(check_from(&f, "good-scraper-2", "/metrics", "10.0.0.7"), GS_AUTHZ_PENDING);
	run_until(answered + 1);
	assert_int_equal(api.token_reviews, reviews + 1);
	/* No address, or a string too long to be one: the budget of "", its own. */
	assert_int_equal(check_from(&f, "good-x", "/metrics", NULL), GS_AUTHZ_PENDING);
	run_until(answered + 1);
	stop(&f);
}

/* Verdicts expire after the TTL; and closing answers what waits with ERROR. */
static void test_checker_ttl_and_close(void **state)
{
	struct fixture f;
	start(&f, 50, 1000, 1000);
	assert_int_equal(check(&f, "good-a", "/metrics"), GS_AUTHZ_PENDING);
	run_until(1);
	assert_int_equal(check(&f, "good-a", "/metrics"), GS_AUTHZ_ALLOW);
	sleep_ms(80);
	assert_int_equal(check(&f, "good-a", "/metrics"), GS_AUTHZ_PENDING);
	run_until(2);
	assert_int_equal(api.token_reviews, 2);
	assert_int_equal(api.access_reviews, 2);
	api.hold = 1;
	assert_int_equal(check(&f, "good-b", "/metrics"), GS_AUTHZ_PENDING);
	while (api.n_held < 1)
		uv_run(&loop, UV_RUN_ONCE);
	gs_authz_close(f.a, on_closed, NULL);
	while (answered < 3)
		uv_run(&loop, UV_RUN_ONCE);
	assert_int_equal(verdicts[GS_AUTHZ_ERROR], 1);
	release_held(); /* the fake apiserver answers into a closed connection */
	gs_http_server_close(f.api, on_closed, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(closed, 2);
	assert_int_equal(uv_loop_close(&loop), 0);
	gs_metrics_free(f.m);
}

/* ---- the secure port: health's gate with this checker, over HTTPS --------------------------------- */

static int done, status;
static char body[4096];
static void on_done(struct gs_http_call *c, int err, const struct gs_http_response *r, void *ud)
{
	assert_int_equal(err, 0);
	status = r->status;
	snprintf(body, sizeof(body), "%s", r->body);
	done = 1;
}

static void get(struct gs_http_client *c, const char *path, const char *hname, const char *hvalue)
{
	struct gs_http_header h = {hname, hvalue};
	struct gs_http_request req = {.method = "GET", .path = path, .headers = &h, .n_headers = hname ? 1 : 0};
	done = 0;
	assert_int_equal(gs_http_send(c, &req, on_done, NULL, NULL), 0);
	while (!done)
		uv_run(&loop, UV_RUN_ONCE);
}

static char *route_cb(const char *path, int *st, const char **ct, void *ud)
{
	*st = 200;
	return strdup("{\"explained\":true}");
}

static void test_secure_port(void **state)
{
	struct fixture f;
	struct gs_health *h;
	struct gs_http_client *cl;
	struct gs_tls_config *stls, *ctls;
	struct gs_counter c = {7};
	char *cert, *key, err[256];
	const char *names[] = {"127.0.0.1", NULL};
	struct gs_tls_cert_req cr = {
		.common_name = "gs", .dns_names = names, .not_before = time(NULL) - 60, .not_after = time(NULL) + 3600};

	start(&f, 60000, 1000, 1000);
	gs_metrics_counter(f.m, "t_total", "A counter.", NULL, &c);
	assert_int_equal(gs_tls_generate(&cr, NULL, NULL, &cert, &key, err, sizeof(err)), 0);
	assert_int_equal(gs_tls_server_config_new(cert, strlen(cert), key, strlen(key), &stls, err, sizeof(err)), 0);
	struct gs_health_opts ho = {.addr = "127.0.0.1:0",
				    .name = "secure",
				    .tls = stls,
				    .metrics = f.m,
				    .serve_metrics = 1,
				    .gate = gs_authz_gate,
				    .gate_ud = f.a};
	assert_int_equal(gs_health_start_opts(&loop, &ho, &h), 0);
	gs_tls_config_unref(stls);
	gs_health_route(h, "/debug/", route_cb, NULL);
	struct gs_tls_client_opts to = {.ca = cert, .ca_len = strlen(cert)};
	assert_int_equal(gs_tls_client_config_new(&to, &ctls, err, sizeof(err)), 0);
	struct gs_http_client_opts o = {.host = "127.0.0.1", .port = gs_health_port(h), .tls = ctls, .max_conns = 1};
	assert_int_equal(gs_http_client_new(&loop, &o, &cl), 0);
	gs_tls_config_unref(ctls);

	get(cl, "/healthz", NULL, NULL); /* probes are open */
	assert_int_equal(status, 200);
	get(cl, "/metrics", NULL, NULL);
	assert_int_equal(status, 401);
	get(cl, "/metrics", "Authorization", "Basic Zm9vOmJhcg==");
	assert_int_equal(status, 401);
	get(cl, "/metrics", "Authorization", "Bearer nobody");
	assert_int_equal(status, 401);
	get(cl, "/metrics", "Authorization", "Bearer good-x");
	assert_int_equal(status, 200);
	assert_non_null(strstr(body, "t_total 7\n"));
	assert_non_null(strstr(body, "gpu_scheduler_secure_requests_total{result=\"unauthenticated\"} 3\n"));
	assert_non_null(strstr(body, "gpu_scheduler_delegated_reviews_total{kind=\"tokenreview\"} 2\n"));
	get(cl, "/debug/pending", "Authorization", "bearer  good-x"); /* any case, several spaces */
	assert_int_equal(status, 403);
	/* Through the apiserver's pod proxy, which drops Authorization: the dedicated header. */
	get(cl, "/metrics", GS_AUTHZ_HEADER, "Bearer good-x");
	assert_int_equal(status, 200);
	get(cl, "/debug/pods/a/b", GS_AUTHZ_HEADER, "Bearer nobody");
	assert_int_equal(status, 401);
	get(cl, "/nothing", NULL, NULL);
	assert_int_equal(status, 404);
	assert_int_equal(api.token_reviews, 2);
	assert_int_equal(api.access_reviews, 2);

	gs_http_client_close(cl, on_closed, NULL);
	gs_health_close(h, on_closed, NULL);
	while (closed < 2)
		uv_run(&loop, UV_RUN_ONCE);
	closed = 0;
	free(cert);
	free(key);
	stop(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache_ttl),
		cmocka_unit_test(test_cache_bound),
		cmocka_unit_test(test_review_json),
		cmocka_unit_test(test_decode_token_review),
		cmocka_unit_test(test_decode_access_review),
		cmocka_unit_test(test_checker),
		cmocka_unit_test(test_checker_bounds),
		cmocka_unit_test(test_checker_per_source),
		cmocka_unit_test(test_checker_ttl_and_close),
		cmocka_unit_test(test_secure_port),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
