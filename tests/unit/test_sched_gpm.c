/*
 * test_sched_gpm.c: maps as objects in the engine (sched/gpm.h; sched.h, gs_sched_gpm_*): the store of
 * GPUPlacementMaps, pods placed by reference, and each object's status and its rate limit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "core/buf.h"
#include "sched/gpm.h"
#include "sched/sched.h"
#include "sched/workload_out.h"

static struct gs_sched *new_engine(void)
{
	struct gs_sched_config cfg;
	struct gs_sched *s;

	gs_sched_config_init(&cfg);
	cfg.check_env = 0;
	s = gs_sched_new(&cfg);
	assert_non_null(s);
	return s;
}

static struct gs_gpm_view view(const char *ns, const char *name, int64_t gen, const char *text)
{
	struct gs_gpm_view v = {.ns = ns,
				.name = name,
				.uid = "gpm-uid",
				.generation = gen,
				.map_text = text,
				.map_len = text ? strlen(text) : 0};
	return v;
}

/* The store: upsert copies, find hands the copy back, delete forgets; bad views are refused. */
static void test_store(void **state)
{
	struct gs_sched *s = new_engine();
	char text[] = "0=node1:0\n1=node2:1";
	struct gs_gpm_view v = view("ml", "ranks", 3, text), got;
	struct gs_gpm_status st;
	(void)state;

	assert_int_equal(gs_sched_gpm_find(s, "ml", "ranks", &got), 0);
	assert_int_equal(gs_sched_gpm_upsert(s, &v, 0), 0);
	memset(text, 'x', sizeof(text) - 1); /* the engine kept its own copy */
	assert_int_equal(gs_sched_gpm_find(s, "ml", "ranks", &got), 1);
	assert_string_equal(got.ns, "ml");
	assert_string_equal(got.name, "ranks");
	assert_string_equal(got.uid, "gpm-uid");
	assert_int_equal(got.generation, 3);
	assert_int_equal(got.map_len, strlen("0=node1:0\n1=node2:1"));
	assert_memory_equal(got.map_text, "0=node1:0\n1=node2:1", got.map_len);
	assert_null(got.placement);
	assert_int_equal(gs_sched_gpm_find(s, "other", "ranks", &got), 0);
	assert_int_equal(gs_sched_gpm_find(s, "ml", "rank", &got), 0);

	assert_int_equal(gs_sched_gpm_status(s, "ml", "ranks", &st), 1);
	assert_int_equal(st.entries, 2);
	assert_int_equal(st.placed, 0);
	assert_int_equal(st.waiting, 0);
	assert_int_equal(st.oldest_index, -1);
	assert_int_equal(st.ready, 0);
	assert_null(st.map_error);
	gs_sched_audit(s);

	v.ns = NULL;
	assert_int_equal(gs_sched_gpm_upsert(s, &v, 0), -EINVAL);
	v.ns = "ml";
	v.uid = "";
	assert_int_equal(gs_sched_gpm_upsert(s, &v, 0), -EINVAL);

	assert_int_equal(gs_sched_gpm_delete(s, "ml", "nope", 0), -ENOENT);
	assert_int_equal(gs_sched_gpm_delete(s, "ml", "ranks", 0), 0);
	assert_int_equal(gs_sched_gpm_find(s, "ml", "ranks", &got), 0);
	assert_int_equal(gs_sched_gpm_status(s, "ml", "ranks", &st), 0);
	assert_int_equal(gs_sched_gpm_delete(s, "ml", "ranks", 0), -ENOENT);
	gs_sched_audit(s);
	gs_sched_free(s);
}

/* A map that does not parse is kept with its error; the status names it. */
static void test_bad_map(void **state)
{
	struct gs_sched *s = new_engine();
	struct gs_gpm_view v = view("ml", "bad", 1, "0=node1:0\n1 node2:1");
	struct gs_gpm_status st;
	(void)state;

	assert_int_equal(gs_sched_gpm_upsert(s, &v, 0), 0);
	assert_int_equal(gs_sched_gpm_status(s, "ml", "bad", &st), 1);
	assert_non_null(st.map_error);
	assert_non_null(strstr(st.map_error, "line 2"));
	assert_int_equal(st.entries, 0);
	assert_int_equal(st.ready, 0);
	gs_sched_free(s);
}

/* Status pulls: handed out when it changed, at most once a second per object; the deadline says when. */
static void test_status_rate(void **state)
{
	struct gs_sched *s = new_engine();
	struct gs_gpm_view a = view("ml", "a", 1, "0=node1:0"), b = view("ml", "b", 1, "0=node1:0\n1=node1:1");
	struct gs_gpm_status st;
	(void)state;

	assert_int_equal(gs_sched_next_deadline(s), -1);
	assert_int_equal(gs_sched_gpm_upsert(s, &a, 1000), 0);
	assert_int_equal(gs_sched_gpm_upsert(s, &b, 1000), 0);
	assert_int_equal(gs_sched_next_gpm_status(s, 1000, &st), 1);
	assert_string_equal(st.name, "a");
	assert_int_equal(st.entries, 1);
	assert_int_equal(gs_sched_next_gpm_status(s, 1000, &st), 1);
	assert_string_equal(st.name, "b");
	assert_int_equal(st.entries, 2);
	assert_int_equal(gs_sched_next_gpm_status(s, 1000, &st), 0);
	assert_int_equal(gs_sched_next_deadline(s), -1); /* nothing held back */

	/* An upsert that changes nothing is no news. */
	assert_int_equal(gs_sched_gpm_upsert(s, &a, 1100), 0);
	assert_int_equal(gs_sched_next_gpm_status(s, 1100, &st), 0);
	assert_int_equal(gs_sched_next_deadline(s), -1);

	/* A new generation of a within its second: held back until 2000. */
	a = view("ml", "a", 2, "0=node1:0\n1=node1:1\n2=node1:2");
	assert_int_equal(gs_sched_gpm_upsert(s, &a, 1200), 0);
	assert_int_equal(gs_sched_next_gpm_status(s, 1200, &st), 0);
	assert_int_equal(gs_sched_next_deadline(s), 2000);
	assert_int_equal(gs_sched_next_gpm_status(s, 1999, &st), 0);
	assert_int_equal(gs_sched_next_gpm_status(s, 2000, &st), 1);
	assert_string_equal(st.name, "a");
	assert_int_equal(st.observed_generation, 2);
	assert_int_equal(st.entries, 3);
	assert_int_equal(gs_sched_next_deadline(s), -1);

	/* A change and its undoing before the next pull: nothing differs, nothing handed out. */
	a.generation = 3;
	assert_int_equal(gs_sched_gpm_upsert(s, &a, 2100), 0);
	a.generation = 2;
	assert_int_equal(gs_sched_gpm_upsert(s, &a, 2200), 0);
	assert_int_equal(gs_sched_next_gpm_status(s, 3500, &st), 0);

	/* Deleted: never handed out again, nothing held back. */
	a.generation = 4;
	assert_int_equal(gs_sched_gpm_upsert(s, &a, 3600), 0);
	assert_int_equal(gs_sched_gpm_delete(s, "ml", "a", 3700), 0);
	assert_int_equal(gs_sched_next_gpm_status(s, 9000, &st), 0);
	assert_int_equal(gs_sched_next_deadline(s), -1);
	gs_sched_audit(s);
	gs_sched_free(s);
}

/* The object deleted and re-created under the same name, seen as an update (a relist after the watch
 * expired never shows the delete): the new object has no status yet, so its first one is handed out even
 * when it counts exactly what the old object's last one did. */
static void test_status_new_uid(void **state)
{
	struct gs_sched *s = new_engine();
	struct gs_gpm_view a = view("ml", "a", 1, "0=node1:0");
	struct gs_gpm_status st;
	(void)state;

	assert_int_equal(gs_sched_gpm_upsert(s, &a, 1000), 0);
	assert_int_equal(gs_sched_next_gpm_status(s, 1000, &st), 1);
	a.uid = "gpm-uid-2";
	assert_int_equal(gs_sched_gpm_upsert(s, &a, 5000), 0);
	assert_int_equal(gs_sched_next_gpm_status(s, 5000, &st), 1);
	assert_string_equal(st.name, "a");
	assert_int_equal(st.observed_generation, 1);
	assert_int_equal(st.entries, 1);
	assert_int_equal(gs_sched_next_gpm_status(s, 9000, &st), 0);
	gs_sched_audit(s);
	gs_sched_free(s);
}


static struct gs_pod_obj ref_pod(const char *uid, const char *ns, const char *name, const char *ref)
{
	return (struct gs_pod_obj){.uid = (char *)uid,
				   .ns = (char *)ns,
				   .name = (char *)name,
				   .scheduler_name = (char *)"gpu-scheduler",
				   .map_ref = (char *)ref,
				   .map_ref_generation = (char *)"1",
				   .owner_kind = (char *)"StatefulSet",
				   .owner_name = (char *)"ranks",
				   .owner_uid = (char *)"sts-uid",
				   .created_ms = 1000,
				   .n_containers = 1};
}

static void add_node(struct gs_sched *s, const char *name)
{
	struct gs_node_obj n = {.name = (char *)name, .ready = 1, .gpus = 4};
	assert_int_equal(gs_sched_node_upsert(s, &n, 0), 0);
}

static enum gs_pod_state state_of(struct gs_sched *s, const char *uid, enum gs_wait_reason *why)
{
	struct gs_sched_pod_info pi;
	assert_int_equal(gs_sched_pod_info(s, uid, &pi), 0);
	if (why)
		*why = pi.reason;
	return pi.state;
}

/* Counts of one object's pods: placed, waiting by reason, the waiting pod of the lowest index, ready;
 * a pod leaving, or naming another object, moves between counts. */
static void test_status_counts(void **state)
{
	struct gs_sched *s = new_engine();
	struct gs_gpm_view v = view("ml", "ranks", 1, "0=node1:0\n1=node9:1\n2=node1:2");
	struct gs_pod_obj p0 = ref_pod("u0", "ml", "ranks-0", "ranks"), p1 = ref_pod("u1", "ml", "ranks-1", "ranks"),
			  p2 = ref_pod("u2", "ml", "ranks-2", "ranks"), q = ref_pod("q0", "other", "ranks-0", "ranks");
	struct gs_bind_decision d;
	struct gs_gpm_status st;
	enum gs_wait_reason why;
	(void)state;

	add_node(s, "node1");
	assert_int_equal(gs_sched_gpm_upsert(s, &v, 0), 0);
	assert_int_equal(gs_sched_pod_upsert(s, &p0, 0), 0);
	assert_int_equal(gs_sched_pod_upsert(s, &p1, 0), 0);
	assert_int_equal(gs_sched_pod_upsert(s, &q, 0), 0); /* another namespace: another object, missing */
	assert_int_equal(state_of(s, "q0", &why), GS_POD_WAITING);
	assert_int_equal(why, GS_WAIT_MAP_MISSING);
	assert_int_equal(gs_sched_next_bind(s, 0, &d), 1);
	assert_string_equal(d.name, "ranks-0");
	assert_int_equal(gs_sched_bind_done(s, "u0", GS_BIND_OK, 0), 0);
	assert_int_equal(gs_sched_pod_upsert(s, &p2, 0), 0); /* queued, not pulled */
	gs_sched_audit(s);

	assert_int_equal(gs_sched_gpm_status(s, "ml", "ranks", &st), 1);
	assert_int_equal(st.entries, 3);
	assert_int_equal(st.placed, 1);
	assert_int_equal(st.waiting, 2); /* ranks-1 waits, ranks-2 is queued */
	assert_int_equal(st.waiting_by[GS_WAIT_NODE_MISSING], 1);
	assert_int_equal(st.oldest_index, 1);
	assert_string_equal(st.oldest_name, "ranks-1");
	assert_int_equal(st.oldest_reason, GS_WAIT_NODE_MISSING);
	assert_non_null(strstr(st.oldest_message, "GPUPlacementMap ml/ranks line 2"));
	assert_int_equal(st.ready, 0);

	/* ranks-1 now names another object (missing): it leaves this one's counts. */
	p1.map_ref = (char *)"other";
	assert_int_equal(gs_sched_pod_upsert(s, &p1, 0), 0);
	assert_int_equal(state_of(s, "u1", &why), GS_POD_WAITING);
	assert_int_equal(why, GS_WAIT_MAP_MISSING);
	assert_int_equal(gs_sched_gpm_status(s, "ml", "ranks", &st), 1);
	assert_int_equal(st.waiting, 1);
	assert_int_equal(st.oldest_index, -1);
	assert_null(st.oldest_name);
	/* Bound all: ready once the deleted pod's index is placed too. */
	assert_int_equal(gs_sched_next_bind(s, 0, &d), 1);
	assert_string_equal(d.name, "ranks-2");
	assert_int_equal(gs_sched_bind_done(s, "u2", GS_BIND_OK, 0), 0);
	assert_int_equal(gs_sched_gpm_status(s, "ml", "ranks", &st), 1);
	assert_int_equal(st.placed, 2);
	assert_int_equal(st.waiting, 0);
	assert_int_equal(st.ready, 0); /* 2 of 3 entries */
	v = view("ml", "ranks", 2, "0=node1:0\n2=node1:2");
	assert_int_equal(gs_sched_gpm_upsert(s, &v, 0), 0);
	assert_int_equal(gs_sched_gpm_status(s, "ml", "ranks", &st), 1);
	assert_int_equal(st.ready, 1);
	assert_int_equal(st.observed_generation, 2);
	assert_int_equal(gs_sched_pod_delete(s, "u2", 0), 0);
	assert_int_equal(gs_sched_gpm_status(s, "ml", "ranks", &st), 1);
	assert_int_equal(st.placed, 1);
	assert_int_equal(st.ready, 0);
	gs_sched_audit(s);

	/* The pods naming objects nobody holds go with their slots: nothing is left behind. */
	assert_int_equal(gs_sched_pod_delete(s, "u1", 0), 0);
	assert_int_equal(gs_sched_pod_delete(s, "q0", 0), 0);
	assert_int_equal(gs_sched_gpm_find(s, "other", "ranks", &v), 0);
	gs_sched_audit(s);
	gs_sched_free(s);
}

/* A restart: a pod first seen bound by reference holds its devices in the ledger when the object is known
 * (its claim is judged by the object's entry); without the object, the claim is ignored. */
static void test_restart_claim(void **state)
{
	struct gs_sched *s = new_engine();
	struct gs_gpm_view v = view("ml", "ranks", 1, "0=node1:2");
	struct gs_pod_obj b = ref_pod("b0", "ml", "ranks-0", "ranks"), o = ref_pod("o0", "ml", "x-0", "x");
	struct gs_gpm_view x = view("ml", "x", 1, "0=node1:2");
	struct gs_sched_stats st;
	struct gs_gpm_status gst;
	enum gs_wait_reason why;
	(void)state;

	add_node(s, "node1");
	assert_int_equal(gs_sched_gpm_upsert(s, &v, 0), 0);
	b.node_name = (char *)"node1";
	b.assigned = (char *)"node1:2";
	assert_int_equal(gs_sched_pod_upsert(s, &b, 0), 0);
	gs_sched_stats(s, &st);
	assert_int_equal(st.devices_held, 1);
	assert_int_equal(st.claims_ignored, 0);
	assert_int_equal(gs_sched_gpm_status(s, "ml", "ranks", &gst), 1);
	assert_int_equal(gst.placed, 1); /* counted, though never placed here */
	assert_int_equal(gst.ready, 1);
	/* Another owner's pod mapped to that GPU waits for it. */
	o.owner_uid = (char *)"other-owner";
	assert_int_equal(gs_sched_gpm_upsert(s, &x, 0), 0);
	assert_int_equal(gs_sched_pod_upsert(s, &o, 0), 0);
	assert_int_equal(state_of(s, "o0", &why), GS_POD_WAITING);
	assert_int_equal(why, GS_WAIT_DEVICE_BUSY);
	gs_sched_audit(s);
	gs_sched_free(s);

	/* The same pod before its object is known: its claim is not believed. */
	s = new_engine();
	add_node(s, "node1");
	assert_int_equal(gs_sched_pod_upsert(s, &b, 0), 0);
	gs_sched_stats(s, &st);
	assert_int_equal(st.devices_held, 0);
	assert_int_equal(st.claims_ignored, 1);
	gs_sched_audit(s);
	gs_sched_free(s);
}

/* The workload view lists the indices of the object's map as it is now. */
static void test_workload_by_ref(void **state)
{
	struct gs_sched *s = new_engine();
	struct gs_gpm_view v = view("ml", "ranks", 1, "0=node1:0\n1=node1:1\n2=node9:0");
	struct gs_pod_obj p0 = ref_pod("u0", "ml", "ranks-0", "ranks"), p2 = ref_pod("u2", "ml", "ranks-2", "ranks");
	struct gs_sched_workload w;
	struct gs_bind_decision d;
	(void)state;

	add_node(s, "node1");
	assert_int_equal(gs_sched_gpm_upsert(s, &v, 0), 0);
	assert_int_equal(gs_sched_pod_upsert(s, &p0, 0), 0);
	assert_int_equal(gs_sched_pod_upsert(s, &p2, 0), 0);
	assert_int_equal(gs_sched_next_bind(s, 0, &d), 1);
	assert_int_equal(gs_sched_bind_done(s, "u0", GS_BIND_OK, 0), 0);
	assert_int_equal(gs_sched_workload(s, "ml", "StatefulSet", "ranks", NULL, 0, &w), 0);
	assert_int_equal(w.map_from, GS_WORKLOAD_MAP_OBJECT);
	assert_string_equal(w.map_ref, "ranks");
	assert_int_equal(w.map_entries, 3);
	assert_int_equal(w.pods, 2);
	assert_int_equal(w.not_created, 1);
	assert_int_equal(w.rows[1].index, 1);
	assert_int_equal(w.rows[1].created, 0);
	assert_string_equal(w.rows[2].node, "node9");
	gs_sched_workload_free(&w);

	/* An edit: a fourth entry is one more index not created. */
	v = view("ml", "ranks", 2, "0=node1:0\n1=node1:1\n2=node9:0\n3=node1:3");
	assert_int_equal(gs_sched_gpm_upsert(s, &v, 0), 0);
	assert_int_equal(gs_sched_workload(s, "ml", "StatefulSet", "ranks", NULL, 0, &w), 0);
	assert_int_equal(w.map_entries, 4);
	assert_int_equal(w.not_created, 2);
	gs_sched_workload_free(&w);
	gs_sched_free(s);
}

/* The view of one object (status gpm/NAME): the pods naming it whatever their owner, its indices not
 * created, its status written out; an object not held leaves its pods' rows without a map. */
static void test_gpm_workload(void **state)
{
	struct gs_sched *s = new_engine();
	struct gs_gpm_view v = view("ml", "ranks", 2, "0=node1:0\n1=node1:1\n2=node9:0\n3=node1:3");
	struct gs_pod_obj p0 = ref_pod("u0", "ml", "ranks-0", "ranks"), p2 = ref_pod("u2", "ml", "ranks-2", "ranks");
	struct gs_pod_obj job = ref_pod("u3", "ml", "other-3", "ranks"), far = ref_pod("u9", "ml2", "ranks-1", "ranks");
	struct gs_sched_workload w;
	struct gs_bind_decision d;
	struct gs_gpm_status st;
	struct gs_buf b;
	(void)state;

	job.owner_kind = (char *)"Job";
	job.owner_name = (char *)"other";
	job.job_index = (char *)"3";
	job.map_ref_generation = (char *)"2";
	add_node(s, "node1");
	assert_int_equal(gs_sched_gpm_workload(s, "ml", "ranks", &w), -ENOENT);
	gs_sched_workload_free(&w);
	assert_int_equal(gs_sched_gpm_upsert(s, &v, 0), 0);
	assert_int_equal(gs_sched_pod_upsert(s, &p0, 0), 0);
	assert_int_equal(gs_sched_next_bind(s, 0, &d), 1);
	assert_int_equal(gs_sched_bind_done(s, "u0", GS_BIND_OK, 0), 0);
	assert_int_equal(gs_sched_pod_upsert(s, &p2, 0), 0);
	assert_int_equal(gs_sched_pod_upsert(s, &job, 0), 0);
	assert_int_equal(gs_sched_pod_upsert(s, &far, 0), 0);

	assert_int_equal(gs_sched_gpm_workload(s, "ml", "ranks", &w), 0);
	assert_string_equal(w.kind, "GPUPlacementMap");
	assert_int_equal(w.map_from, GS_WORKLOAD_MAP_OBJECT);
	assert_string_equal(w.map_ref, "ranks");
	assert_int_equal(w.map_entries, 4);
	assert_int_equal(w.pods, 3); /* ranks-1 of ml2 names ml2's object */
	assert_int_equal(w.not_created, 1);
	assert_int_equal(w.n_rows, 4);
	assert_string_equal(w.rows[0].pod.name, "ranks-0");
	assert_int_equal(w.rows[0].pod.state, GS_POD_BOUND);
	assert_int_equal(w.rows[1].index, 1);
	assert_int_equal(w.rows[1].created, 0);
	assert_string_equal(w.rows[2].pod.name, "ranks-2");
	assert_int_equal(w.rows[2].pod.state, GS_POD_WAITING);
	assert_int_equal(w.rows[2].pod.reason, GS_WAIT_NODE_MISSING);
	assert_string_equal(w.rows[3].pod.name, "other-3");
	assert_int_equal(w.by_state[GS_POD_BOUND], 1);
	assert_int_equal(w.by_state[GS_POD_WAITING], 1);
	gs_buf_init(&b, 0);
	assert_int_equal(gs_workload_text(&w, 1000, &b), 0);
	assert_non_null(strstr(b.data, "GPUPlacementMap ml/ranks: 3 pods"));
	assert_non_null(strstr(b.data, "from GPUPlacementMap ml/ranks"));
	gs_buf_free(&b);
	gs_sched_workload_free(&w);

	/* Its status, as the command writes it. */
	assert_int_equal(gs_sched_gpm_status(s, "ml", "ranks", &st), 1);
	gs_buf_init(&b, 0);
	assert_int_equal(gs_workload_gpm_status_text(&st, &b), 0);
	assert_non_null(strstr(b.data, "Status (generation 2): not ready; 4 entries, "));
	assert_non_null(strstr(b.data, "1 NODE_MISSING"));
	assert_non_null(strstr(b.data, "oldest waiting: index 2, ranks-2: NODE_MISSING: "));
	gs_buf_reset(&b);
	assert_int_equal(gs_workload_gpm_status_json(&st, &b), 0);
	assert_non_null(strstr(b.data, "{\"observedGeneration\":2,\"entries\":4,\"placed\":"));
	assert_non_null(strstr(b.data, "{\"reason\":\"NODE_MISSING\",\"count\":1}"));
	assert_non_null(
		strstr(b.data, "\"oldestWaiting\":{\"index\":2,\"pod\":\"ranks-2\",\"reason\":\"NODE_MISSING\""));
	assert_non_null(strstr(b.data, "\"ready\":false}"));
	/* The view and the status in one object: the command's -o json and the daemon's /debug/ answer. */
	gs_buf_reset(&b);
	assert_int_equal(gs_sched_gpm_workload(s, "ml", "ranks", &w), 0);
	assert_int_equal(gs_workload_gpm_json(&w, &st, 1000, &b), 0);
	gs_sched_workload_free(&w);
	assert_non_null(strstr(b.data, "\"rows\":[{\"index\":0,"));
	assert_non_null(strstr(b.data, "],\"status\":{\"observedGeneration\":2,\"entries\":4,"));
	assert_int_equal(strcmp(b.data + b.len - 3, "}}\n"), 0);
	gs_buf_free(&b);

	/* A map that does not parse: no index rows, the error said; deleted: the pods' rows stay. */
	v = view("ml", "ranks", 3, "0=node1:0\n1 node1:1");
	assert_int_equal(gs_sched_gpm_upsert(s, &v, 0), 0);
	assert_int_equal(gs_sched_gpm_workload(s, "ml", "ranks", &w), 0);
	assert_int_equal(w.map_from, GS_WORKLOAD_MAP_NONE);
	assert_non_null(strstr(w.map_error, "line 2"));
	assert_int_equal(w.not_created, 0);
	gs_sched_workload_free(&w);
	assert_int_equal(gs_sched_gpm_delete(s, "ml", "ranks", 0), 0);
	assert_int_equal(gs_sched_gpm_workload(s, "ml", "ranks", &w), 0);
	assert_int_equal(w.map_from, GS_WORKLOAD_MAP_NONE);
	assert_int_equal(w.pods, 3);
	assert_int_equal(w.by_state[GS_POD_WAITING], 2);
	gs_sched_workload_free(&w);
	gs_sched_audit(s);
	gs_sched_free(s);
}

/* An update of a pod's inline map while its Binding is in flight: the Binding stands, the inputs count at
 * the retry (the audit used to refuse the in-flight pod's new inputs). */
static void test_inline_edit_in_flight(void **state)
{
	struct gs_sched_config cfg;
	struct gs_sched *s;
	struct gs_pod_obj p = {.uid = (char *)"u",
			       .ns = (char *)"ml",
			       .name = (char *)"a-0",
			       .scheduler_name = (char *)"gpu-scheduler",
			       .map_text = "0=node1:2",
			       .map_len = 9,
			       .cuda_state = GS_CUDA_SAME,
			       .cuda_value = (char *)"2",
			       .n_containers = 1};
	struct gs_bind_decision d;
	enum gs_wait_reason why;
	(void)state;

	gs_sched_config_init(&cfg);
	s = gs_sched_new(&cfg);
	add_node(s, "node1");
	assert_int_equal(gs_sched_pod_upsert(s, &p, 0), 0);
	assert_int_equal(gs_sched_next_bind(s, 0, &d), 1);
	p.map_text = "0=node1:3";
	assert_int_equal(gs_sched_pod_upsert(s, &p, 0), 0);
	assert_int_equal(state_of(s, "u", NULL), GS_POD_BINDING);
	gs_sched_audit(s);
	assert_int_equal(gs_sched_bind_done(s, "u", GS_BIND_RETRY, 0), 0);
	assert_int_equal(gs_sched_next_bind(s, 60000, &d), 0);
	assert_int_equal(state_of(s, "u", &why), GS_POD_WAITING);
	assert_int_equal(why, GS_WAIT_NOT_MUTATED);
	gs_sched_audit(s);
	gs_sched_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_store),
		cmocka_unit_test(test_bad_map),
		cmocka_unit_test(test_status_rate),
		cmocka_unit_test(test_status_new_uid),
		cmocka_unit_test(test_status_counts),
		cmocka_unit_test(test_restart_claim),
		cmocka_unit_test(test_workload_by_ref),
		cmocka_unit_test(test_gpm_workload),
		cmocka_unit_test(test_inline_edit_in_flight),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
