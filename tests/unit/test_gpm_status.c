/*
 * test_gpm_status.c: the status writer of GPUPlacementMaps (src/k8s/gpm_status.h) against a scripted
 * apiserver: the real engine hands out the statuses, the real client sends them through the memory
 * transport (kube.h, gs_kube__use_memory), the test reads each request off the wire and answers it.
 *   - a write carries the object's uid as its precondition (a JSON patch testing /metadata/uid)
 *   - the object deleted and re-created while a write for the old one is in flight: the old one's
 *     refusal (422, the failed test) is counted gone, and the new object's status follows with its uid
 *   - leadership lapsing while a write waits in the client (for its connection, or queued behind
 *     another write): it is withdrawn, never sent, and sent once this replica leads again
 *   - a failed write's retry is not sent while not leading
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "core/conn.h"
#include "k8s/gpm_status.h"
#include "k8s/kube.h"
#include "sched/gpm.h"
#include "sched/sched.h"

#define PATH_OF(name) "/apis/gpu-scheduler.io/v1alpha1/namespaces/ml/gpuplacementmaps/" name "/status"
#define UID_A         "11111111-aaaa-4aaa-8aaa-000000000001"
#define UID_A2        "22222222-aaaa-4aaa-8aaa-000000000002"
#define UID_B         "33333333-bbbb-4bbb-8bbb-000000000003"
#define MAX_ENDS      4

static const char failed_test_422[] =
	"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"the server "
	"rejected our request due to an error in our request\",\"reason\":\"Invalid\",\"details\":{},\"code\":422}";

struct fixture {
	uv_loop_t loop;
	struct gs_kube *kube;
	struct gs_sched *sched;
	struct gs_gpm_writer w;
	struct gs_conn_mem ends[MAX_ENDS];
	size_t read_at[MAX_ENDS]; /* how much of each end's output the test has read */
	int opened;
	int leading;
	int wakes;
	int closed;
	int64_t skew; /* the clock pump gives the engine and the writer: the loop's, this far ahead */
};

/* One request as read off the wire. */
struct req {
	char line[512]; /* "PATCH /path" */
	char content_type[64];
	char body[8192];
};

static struct fixture *F;

static struct gs_conn_mem *mem_open(void *ud)
{
	(void)ud;
	assert_true(F->opened < MAX_ENDS);
	struct gs_conn_mem *m = &F->ends[F->opened++];
	gs_buf_init(&m->out, 0);
	return m;
}

static int may_act(void *ud)
{
	return ((struct fixture *)ud)->leading;
}

static void wake(void *ud)
{
	((struct fixture *)ud)->wakes++;
}

static int setup(void **state)
{
	static char server[] = "https://127.0.0.1:6443", host[] = "127.0.0.1", token[] = "t";
	struct gs_kubeconfig kc = {
		.server = server, .host = host, .port = 6443, .token = token, .insecure_skip_verify = 1};
	struct gs_kube_opts o = {.kc = &kc, .max_conns = 4}; /* low priority: one request at a time */
	struct gs_sched_config cfg;
	char err[256];

	F = calloc(1, sizeof(*F));
	assert_non_null(F);
	assert_int_equal(uv_loop_init(&F->loop), 0);
	assert_int_equal(gs_kube_new(&F->loop, &o, &F->kube, err, sizeof(err)), 0);
	gs_kube__use_memory(F->kube, mem_open, NULL);
	gs_sched_config_init(&cfg);
	cfg.check_env = 0;
	F->sched = gs_sched_new(&cfg);
	assert_non_null(F->sched);
	gs_gpm_writer_init(&F->w, &F->loop, F->kube, F->sched, may_act, wake, F);
	F->leading = 1;
	*state = F;
	return 0;
}

static void on_kube_closed(void *ud)
{
	(void)ud;
	F->closed = 1;
}

static int teardown(void **state)
{
	(void)state;
	gs_kube_close(F->kube, on_kube_closed, NULL);
	while (!F->closed)
		uv_run(&F->loop, UV_RUN_ONCE);
	gs_gpm_writer_free(&F->w);
	gs_sched_free(F->sched);
	for (int i = 0; i < F->opened; i++)
		gs_buf_free(&F->ends[i].out);
	assert_int_equal(uv_loop_close(&F->loop), 0);
	free(F);
	return 0;
}

static int64_t now(void)
{
	uv_update_time(&F->loop);
	return (int64_t)uv_now(&F->loop) + F->skew;
}

static void upsert(const char *name, const char *uid)
{
	struct gs_gpm_view v = {.ns = "ml", .name = name, .uid = uid, .generation = 1, .map_text = "0=node1:0"};
	v.map_len = strlen(v.map_text);
	assert_true(gs_sched_gpm_upsert(F->sched, &v, now()) >= 0);
}

static void spin(void)
{
	for (int i = 0; i < 8; i++)
		uv_run(&F->loop, UV_RUN_NOWAIT);
}

/* The writer's pump, as the controller's, a time later: past the engine's one status a second per
 * object and the writer's first backoff (1 s). */
static void pump(void)
{
	F->skew += 2000;
	gs_gpm_writer_pump(&F->w, now());
	spin();
}

/* The connection end i, connected (it waits for that after opening). */
static struct gs_conn_mem *connect_end(int i)
{
	assert_true(F->opened > i);
	gs_conn__connected(F->ends[i].conn, 0);
	spin();
	return &F->ends[i];
}

/* The value of header name in head (NUL-terminated), "" when absent. */
static void header_value(const char *head, const char *name, char *out, size_t outlen)
{
	size_t n = strlen(name);

	out[0] = '\0';
	for (const char *p = strstr(head, "\r\n"); p; p = strstr(p, "\r\n")) {
		p += 2;
		if (strncasecmp(p, name, n) == 0 && p[n] == ':') {
			const char *v = p + n + 1 + strspn(p + n + 1, " ");
			snprintf(out, outlen, "%.*s", (int)strcspn(v, "\r"), v);
			return;
		}
	}
}

/* The next request written on end i, or 0 when there is none. */
static int next_request(int i, struct req *r)
{
	struct gs_conn_mem *m = &F->ends[i];
	size_t avail = m->out.len - F->read_at[i], head_len, n;
	char *copy, *end, clen[32];

	memset(r, 0, sizeof(*r));
	if (avail == 0)
		return 0;
	copy = calloc(1, avail + 1);
	assert_non_null(copy);
	memcpy(copy, m->out.data + F->read_at[i], avail);
	end = strstr(copy, "\r\n\r\n");
	assert_non_null(end); /* a whole head: the client writes a request at once */
	head_len = (size_t)(end - copy) + 4;
	*end = '\0';
	snprintf(r->line, sizeof(r->line), "%.*s", (int)(strstr(copy, " HTTP/1.1") - copy), copy);
	header_value(copy, "Content-Type", r->content_type, sizeof(r->content_type));
	header_value(copy, "Content-Length", clen, sizeof(clen));
	n = (size_t)atoi(clen);
	assert_true(n < sizeof(r->body) && head_len + n <= avail);
	memcpy(r->body, copy + head_len, n);
	F->read_at[i] += head_len + n;
	free(copy);
	return 1;
}

static void answer(int i, int status, const char *body)
{
	char resp[1024];
	int n = snprintf(resp, sizeof(resp),
			 "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s", status,
			 strlen(body), body);
	gs_conn__received(F->ends[i].conn, resp, n);
	spin();
}

/* The uid the request's patch tests, and that it replaces the status. */
static void assert_patch_tests_uid(const struct req *r, const char *path, const char *uid)
{
	char want[512];
	cJSON *root = cJSON_Parse(r->body);
	const cJSON *test, *add;

	snprintf(want, sizeof(want), "PATCH %s", path);
	assert_string_equal(r->line, want);
	assert_string_equal(r->content_type, "application/json-patch+json");
	assert_non_null(root);
	test = cJSON_GetArrayItem(root, 0);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(test, "op")->valuestring, "test");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(test, "path")->valuestring, "/metadata/uid");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(test, "value")->valuestring, uid);
	add = cJSON_GetArrayItem(root, 1);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(add, "path")->valuestring, "/status");
	assert_int_equal(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(add, "value"), "entries")->valueint,
		1);
	cJSON_Delete(root);
}

static uint64_t count(enum gs_gpm_write_result res)
{
	return F->w.writes[res].v;
}

/* Object "a" (UID_A) is held and its first status write is on the wire, read into *r. */
static void first_write_of_a(struct req *r)
{
	upsert("a", UID_A);
	pump();
	connect_end(0);
	assert_true(next_request(0, r));
}

/* A write carries the object's uid; 200 counts ok. */
static void test_uid_in_patch(void **state)
{
	struct req r;
	(void)state;

	upsert("a", UID_A);
	pump();
	assert_int_equal(F->opened, 1);
	connect_end(0);
	assert_true(next_request(0, &r));
	assert_patch_tests_uid(&r, PATH_OF("a"), UID_A);
	assert_false(next_request(0, &r));
	answer(0, 200, "{}");
	assert_int_equal(count(GS_GPM_WRITE_OK), 1);
	assert_int_equal(F->w.inflight, 0);
}

/* Deleted and re-created while the old object's write is in flight: its 422 is gone, the new one's
 * status is written with the new uid. */
static void test_recreated_in_flight(void **state)
{
	struct req r;
	(void)state;

	first_write_of_a(&r);
	assert_patch_tests_uid(&r, PATH_OF("a"), UID_A);

	/* The watch: DELETED, then ADDED under a new uid, before the answer. */
	assert_int_equal(gs_sched_gpm_delete(F->sched, "ml", "a", now()), 0);
	gs_gpm_writer_forget(&F->w, "ml", "a");
	upsert("a", UID_A2);
	pump(); /* the new status waits for the old write to end: never two writes of one object */
	assert_false(next_request(0, &r));

	answer(0, 422, failed_test_422); /* the apiserver: the uid test failed */
	assert_int_equal(count(GS_GPM_WRITE_GONE), 1);
	assert_int_equal(count(GS_GPM_WRITE_FAILED), 0);
	pump();
	assert_true(next_request(0, &r));
	assert_patch_tests_uid(&r, PATH_OF("a"), UID_A2);
	answer(0, 200, "{}");
	assert_int_equal(count(GS_GPM_WRITE_OK), 1);
}

/* The watch behind: the engine still holds the old uid, the write is refused (the object of that name
 * is another one): counted gone, not retried. */
static void test_refused_not_retried(void **state)
{
	struct req r;
	(void)state;

	first_write_of_a(&r);
	answer(0, 422, failed_test_422);
	assert_int_equal(count(GS_GPM_WRITE_GONE), 1);
	assert_int_equal(F->w.retries, 0);
	pump();
	assert_false(next_request(0, &r));
}

/* Leadership comes back: the write that waited goes out (the object's path and uid) and is answered
 * 200, the ok count then `ok`. */
static void lead_again_writes(const char *path, const char *uid, unsigned ok)
{
	struct req r;

	F->leading = 1;
	pump();
	assert_true(next_request(0, &r));
	assert_patch_tests_uid(&r, path, uid);
	answer(0, 200, "{}");
	assert_int_equal(count(GS_GPM_WRITE_OK), ok);
}

/* Leadership lapses while the write waits for its connection: withdrawn, never written; sent once this
 * replica leads again. */
static void test_withdrawn_waiting_for_connection(void **state)
{
	struct req r;
	(void)state;

	upsert("a", UID_A);
	pump();
	assert_int_equal(F->w.inflight, 1);
	F->leading = 0;
	connect_end(0);
	assert_false(next_request(0, &r)); /* nothing written */
	assert_int_equal(count(GS_GPM_WRITE_WITHDRAWN), 1);
	assert_int_equal(F->w.inflight, 0);
	assert_int_equal(F->w.retries, 1);
	pump(); /* the retry is due, but not while not leading */
	assert_false(next_request(0, &r));
	lead_again_writes(PATH_OF("a"), UID_A, 1);
	assert_int_equal(F->w.retries, 0);
}

/* Two objects: the second write queues in the client behind the first (one low-priority request at a
 * time); leadership lapses before the first is answered: the second is withdrawn when its turn comes. */
static void test_withdrawn_queued(void **state)
{
	struct req r;
	(void)state;

	upsert("a", UID_A);
	upsert("b", UID_B);
	pump();
	assert_int_equal(F->w.inflight, 2); /* both handed to the client */
	assert_int_equal(F->opened, 1);     /* one on the wire, one queued */
	connect_end(0);
	assert_true(next_request(0, &r));
	assert_false(next_request(0, &r));
	F->leading = 0;
	answer(0, 200, "{}");
	assert_int_equal(count(GS_GPM_WRITE_OK), 1);
	if (F->opened > 1) /* its turn came on a new connection: asked once that one is ready */
		connect_end(1);
	assert_int_equal(count(GS_GPM_WRITE_WITHDRAWN), 1);
	assert_false(next_request(0, &r)); /* the queued write never went out */
	for (int i = 1; i < F->opened; i++)
		assert_int_equal(F->ends[i].out.len, 0);
	lead_again_writes(PATH_OF("b"), UID_B, 2);
}

/* A failed write's retry waits for leadership too. */
static void test_retry_not_sent_when_not_leading(void **state)
{
	struct req r;
	(void)state;

	first_write_of_a(&r);
	answer(0, 500, "{}");
	assert_int_equal(count(GS_GPM_WRITE_FAILED), 1);
	assert_int_equal(F->w.retries, 1);
	F->leading = 0;
	pump(); /* the retry is due (1 s) */
	assert_false(next_request(0, &r));
	lead_again_writes(PATH_OF("a"), UID_A, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_uid_in_patch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recreated_in_flight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_not_retried, setup, teardown),
		cmocka_unit_test_setup_teardown(test_withdrawn_waiting_for_connection, setup, teardown),
		cmocka_unit_test_setup_teardown(test_withdrawn_queued, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retry_not_sent_when_not_leading, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
