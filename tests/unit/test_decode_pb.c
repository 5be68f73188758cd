/*
 * test_decode_pb.c: the protobuf decoders of src/k8s/decode.h (decode_pb.c) against the JSON ones.
 *
 * tests/fixtures/recorded/ holds real objects recorded from a 1.20 apiserver by
 * tests/fixtures/record.sh, each in both encodings from the same state (NAME.json and NAME.pb; watch
 * streams NAME.jsonl and NAME.pbw), tests/fixtures/recorded-1.37/ the same from a 1.37.2 apiserver
 * (which answers the compacted list with a PodList from its watch cache, so it has no 410 Status); tests/fixtures/k8s-serializers/ the same objects encoded by the
 * 1.20.2 serializers' own code (gen.sh, no cluster). Every pair must decode to identical records: each record is
 * printed with every field (dump_pod, dump_node) and the two texts compared; then the values that
 * matter are checked against what the recording script created. The shapes newer than 1.20 are
 * recorded from a 1.37.2 cluster with kubelets by tests/fixtures/record-shapes.sh (test_shapes_1_37);
 * hostile inputs use hand-built protobuf bytes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "slurp.h"

#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/lines.h"
#include "core/pb.h"
#include "k8s/decode.h"

#include "pb_encode.h"

/*
 * The paired fixtures: recorded from real 1.20 and 1.37 apiservers (tests/fixtures/record.sh), and the
 * same objects encoded by the 1.20.2 serializers (tests/fixtures/k8s-serializers/gen.sh). Each group of
 * tests below runs on every directory of this list that holds a pod-full-3.json.
 */
static const char *const pair_dirs[] = {"tests/fixtures/recorded/", "tests/fixtures/recorded-1.37/",
					"tests/fixtures/k8s-serializers/"};
static const char *REC = "";
#define MAP_ANN "gpu-scheduler.io/map"
/* The map annotation both() reads: record.sh's pods use MAP_ANN, record-shapes.sh's the default one. */
static const char *pair_ann = MAP_ANN;

/* ---- records as text ----------------------------------------------------------------------------- */

#define S(x) ((x) ? (x) : "(null)")

static void dump_res(struct gs_buf *b, const char *name, const struct gs_resources *r)
{
	gs_buf_printf(b, " %s{cpu=%lld mem=%lld eph=%lld pods=%lld", name, (long long)r->milli_cpu,
		      (long long)r->memory, (long long)r->ephemeral, (long long)r->pods);
	for (int i = 0; i < r->n_ext; i++)
		gs_buf_printf(b, " %s=%lld", r->ext[i].name, (long long)r->ext[i].value);
	gs_buf_printf(b, "}");
}

static void dump_pod(struct gs_buf *b, const struct gs_pod_obj *p)
{
	gs_buf_printf(
		b, "pod uid=%s ns=%s name=%s rv=%s sched=%s node=%s map=%.*s idx=%s job=%s assigned=%s owner=%s/%s/%s",
		S(p->uid), S(p->ns), S(p->name), S(p->resource_version), S(p->scheduler_name), S(p->node_name),
		p->map_text ? (int)p->map_len : 6, p->map_text ? p->map_text : "(null)", S(p->label_pod_index),
		S(p->job_index), S(p->assigned), S(p->owner_kind), S(p->owner_name), S(p->owner_uid));
	gs_buf_printf(
		b, " cuda=%d:%s n_ctr=%d created=%lld deleting=%d terminal=%d shared=%d prio=%lld never=%d gates=%d:%s",
		(int)p->cuda_state, S(p->cuda_value), p->n_containers, (long long)p->created_ms, p->deleting,
		p->terminal, p->allow_shared, (long long)p->priority, p->preempt_never, p->n_gates, S(p->first_gate));
	gs_buf_printf(b, " partial=%d running=%d stopped=%d infeasible=%d os=%s", p->partial, p->running, p->stopped,
		      p->resize_infeasible, S(p->os_name));
	gs_buf_printf(b, " placement=%s gang-timeout=%s gang-size=%s map-ref=%s@%s nominated=%s", S(p->placement),
		      S(p->gang_timeout), S(p->gang_size), S(p->map_ref), S(p->map_ref_generation),
		      S(p->nominated_node));
	for (int i = 0; i < p->n_init; i++) {
		dump_res(b, "init", &p->init_req[i]);
		gs_buf_printf(b, "%s", p->init_sidecar && p->init_sidecar[i] ? "sidecar" : "");
	}
	for (int i = 0; i < p->n_ctr; i++) {
		dump_res(b, "ctr", &p->ctr_req[i]);
		if (p->ctr_status_set && p->ctr_status_set[i])
			dump_res(b, "status", &p->ctr_status_req[i]);
	}
	if (p->has_pod_req)
		dump_res(b, "pod", &p->pod_req);
	dump_res(b, "overhead", &p->overhead);
	for (int i = 0; i < p->n_host_ports; i++)
		gs_buf_printf(b, " hp=%d/%c/%s", p->host_ports[i].port, p->host_ports[i].proto,
			      S(p->host_ports[i].host_ip));
	for (int i = 0; i < p->n_node_selector; i++)
		gs_buf_printf(b, " sel=%s:%s", p->node_selector[i].key, p->node_selector[i].value);
	gs_buf_printf(b, " aff=%d", p->has_affinity);
	for (int i = 0; i < p->n_terms; i++) {
		gs_buf_printf(b, " term[");
		for (int j = 0; j < p->terms[i].n_reqs; j++) {
			const struct gs_sel_req *q = &p->terms[i].reqs[j];
			gs_buf_printf(b, " %s:%d:%d(", q->key, (int)q->op, q->field);
			for (int k = 0; k < q->n_values; k++)
				gs_buf_printf(b, "%s,", q->values[k]);
			gs_buf_printf(b, ")");
		}
		gs_buf_printf(b, "]");
	}
	for (int i = 0; i < p->n_tolerations; i++) {
		const struct gs_toleration *t = &p->tolerations[i];
		gs_buf_printf(b, " tol=%s/%d/%s/%d/%lld", S(t->key), t->exists, S(t->value), (int)t->effect,
			      (long long)t->seconds);
	}
	for (int i = 0; i < p->n_labels; i++)
		gs_buf_printf(b, " label=%s:%s", p->labels[i].key, p->labels[i].value);
}

static void dump_node(struct gs_buf *b, const struct gs_node_obj *n)
{
	gs_buf_printf(b, "node name=%s rv=%s ready=%d unsched=%d gpus=%lld capacity=%lld boot=%s", S(n->name),
		      S(n->resource_version), n->ready, n->unschedulable, (long long)n->gpus,
		      (long long)n->gpu_capacity, S(n->boot_id));
	for (int i = 0; i < n->n_labels; i++)
		gs_buf_printf(b, " label=%s:%s", n->labels[i].key, n->labels[i].value);
	for (int i = 0; i < n->n_taints; i++)
		gs_buf_printf(b, " taint=%s:%s:%d", S(n->taints[i].key), S(n->taints[i].value),
			      (int)n->taints[i].effect);
	dump_res(b, "alloc", &n->alloc);
}

static void dump_event(struct gs_buf *b, const struct gs_decode_event *ev)
{
	gs_buf_printf(b, "%s rv=%s status=%d/%s/%s: ", gs_decode_event_type_name(ev->type), S(ev->resource_version),
		      ev->status_code, S(ev->status_reason), S(ev->status_message));
	if (ev->type == GS_DECODE_EV_BOOKMARK || ev->type == GS_DECODE_EV_ERROR)
		return;
	if (ev->kind == GS_OBJ_POD)
		dump_pod(b, &ev->pod);
	else
		dump_node(b, &ev->node);
}

/* ---- one object, both ways ----------------------------------------------------------------------- */

static void decode_json_obj(const char *name, enum gs_obj_kind kind, struct gs_buf *b)
{
	char path[256], err[512] = "";
	snprintf(path, sizeof(path), "%s%s.json", REC, name);
	char *text = slurp(path, NULL);
	cJSON *j = cJSON_Parse(text);
	assert_non_null(j);
	if (kind == GS_OBJ_POD) {
		struct gs_pod_obj p;
		if (gs_decode_pod(j, pair_ann, &p, err, sizeof(err)) < 0)
			fail_msg("%s (JSON): %s", name, err);
		dump_pod(b, &p);
		gs_pod_obj_free(&p);
	} else {
		struct gs_node_obj n;
		if (gs_decode_node(j, &n, err, sizeof(err)) < 0)
			fail_msg("%s (JSON): %s", name, err);
		dump_node(b, &n);
		gs_node_obj_free(&n);
	}
	cJSON_Delete(j);
	free(text);
}

static void decode_pb_obj(const char *name, enum gs_obj_kind kind, struct gs_buf *b)
{
	char path[256], err[512] = "", tkind[64];
	const uint8_t *raw;
	size_t len, raw_len;
	snprintf(path, sizeof(path), "%s%s.pb", REC, name);
	char *body = slurp(path, &len);
	if (gs_decode_unwrap_pb(body, len, &raw, &raw_len, tkind, sizeof(tkind), err, sizeof(err)) < 0)
		fail_msg("%s (protobuf): %s", name, err);
	assert_string_equal(tkind, kind == GS_OBJ_POD ? "Pod" : "Node");
	if (kind == GS_OBJ_POD) {
		struct gs_pod_obj p;
		if (gs_decode_pod_pb(raw, raw_len, pair_ann, &p, err, sizeof(err)) < 0)
			fail_msg("%s (protobuf): %s", name, err);
		dump_pod(b, &p);
		gs_pod_obj_free(&p);
	} else {
		struct gs_node_obj n;
		if (gs_decode_node_pb(raw, raw_len, &n, err, sizeof(err)) < 0)
			fail_msg("%s (protobuf): %s", name, err);
		dump_node(b, &n);
		gs_node_obj_free(&n);
	}
	free(body);
}

/* Decodes NAME.json and NAME.pb, asserts the records are identical, returns the text (caller frees). */
static char *both(const char *name, enum gs_obj_kind kind)
{
	struct gs_buf j, p;
	gs_buf_init(&j, 0);
	gs_buf_init(&p, 0);
	decode_json_obj(name, kind, &j);
	decode_pb_obj(name, kind, &p);
	assert_string_equal(p.data, j.data);
	gs_buf_free(&p);
	return gs_buf_steal(&j, NULL);
}

static void expect_has(const char *text, const char *part)
{
	if (!strstr(text, part))
		fail_msg("\"%s\" not in:\n%s", part, text);
}

static void pairs_pods_both_encodings_in(void)
{
	char *t = both("pod-full-3", GS_OBJ_POD);
	/* What record.sh wrote, as the records must show it. */
	expect_has(t, "ns=gs-fixtures name=full-3 ");
	expect_has(
		t,
		"sched=gpu-scheduler node=(null) map=0=node1:0,1\n3=node2:2\n idx=3 job=3 assigned=node2:2 owner=ConfigMap/owner/");
	expect_has(t, "cuda=1:2 n_ctr=3 ");
	expect_has(t, "deleting=0 terminal=0 shared=1 prio=1000 never=0 gates=0:(null)");
	expect_has(t, " init{cpu=1000 mem=1073741824 eph=0 pods=0 nvidia.com/gpu=1}");
	expect_has(t, " ctr{cpu=500 mem=268435456 eph=1073741824 pods=0 example.com/foo=2 nvidia.com/gpu=1}");
	expect_has(t, " overhead{cpu=250 mem=125829120 eph=0 pods=0}");
	expect_has(t, " hp=8080/T/(null) hp=5353/U/10.0.0.1 hp=9000/S/(null) sel=disk:ssd sel=zone:a aff=1");
	expect_has(t, " term[ gpu:0:0(a100,h100,) spot:3:0() metadata.name:1:1(node9,)] term[ gen:4:0(3,)]");
	expect_has(t,
		   " tol=dedicated/0/ml/1/-1 tol=(null)/1/(null)/0/-1 tol=node.kubernetes.io/unreachable/1/(null)/3/30"
		   " tol=blank-value/0/(null)/2/-1");
	assert_null(strstr(t, "created=0 "));
	free(t);

	t = both("pod-bound", GS_OBJ_POD);
	expect_has(t, "node=node1 ");
	expect_has(t, "running=0 "); /* bound, phase Pending */
	expect_has(t, "idx=0 ");
	expect_has(t, "cuda=2:(null) n_ctr=1 ");
	free(t);
	t = both("pod-done", GS_OBJ_POD);
	expect_has(t, "cuda=1:0 n_ctr=1 ");
	expect_has(t, "terminal=1 ");
	free(t);
	t = both("pod-deleting", GS_OBJ_POD);
	expect_has(t, "cuda=2:(null) n_ctr=2 ");
	expect_has(t, "deleting=1 terminal=0 ");
	free(t);
}

static void pairs_nodes_both_encodings_in(void)
{
	char *t = both("node-node1", GS_OBJ_NODE);
	expect_has(t, "node name=node1 ");
	expect_has(t, "ready=1 unsched=1 gpus=4");
	expect_has(t, " taint=dedicated:ml:1 taint=maintenance:(null):3");
	expect_has(t, " label=kubernetes.io/hostname:node1");
	expect_has(t, "nvidia.com/gpu=4}");
	free(t);
	t = both("node-node2", GS_OBJ_NODE);
	expect_has(t, "ready=1 unsched=0 gpus=4");
	assert_null(strstr(t, "taint="));
	free(t);
}

/*
 * The shapes newer than 1.20, recorded from a real 1.37.2 cluster with kubelets and gpu-scheduler
 * (tests/fixtures/record-shapes.sh): both encodings to the same record, and what the script made.
 */
static void test_shapes_1_37(void **state)
{
	(void)state;
	REC = "tests/fixtures/recorded-1.37/";
	pair_ann = "gpu-scheduling-map";
	/* A StatefulSet's pod: the pod-index label, an init container and a sidecar, the kubelet's status. */
	char *t = both("pod-sts-sidecar", GS_OBJ_POD);
	expect_has(t, "ns=gs-shapes name=infer-1 ");
	expect_has(t, "sched=gpu-scheduler node=node1 map=0=node1:0\n1=node1:1,2\n idx=1 job=(null) assigned=node1:1,2 "
		      "owner=StatefulSet/infer/");
	expect_has(t, "cuda=1:1,2 n_ctr=4 "); /* CUDA_VISIBLE_DEVICES is counted in every container, init ones too */
	expect_has(t, "running=1 stopped=0 infeasible=0 os=(null)"); /* phase Running */
	expect_has(t, " init{cpu=200 mem=33554432 eph=0 pods=0} init{cpu=100 mem=33554432 eph=0 pods=0}sidecar");
	expect_has(t, " ctr{cpu=300 mem=33554432 eph=0 pods=0} status{cpu=300 mem=33554432 eph=0 pods=0}"
		      " ctr{cpu=0 mem=0 eph=0 pods=0} overhead");
	free(t);
	/* Deleted, held by a finalizer, the sidecar and the main container stopped: it holds nothing. The
	 * 1.37 kubelet also gives it a terminal phase (Succeeded: every container exited 0), which the
	 * hand-written 1.28 shape lacked; stopped alone covers kubelets that do not. */
	t = both("pod-sidecar-deleting", GS_OBJ_POD);
	expect_has(t, "name=trainer-2 ");
	expect_has(t, "deleting=1 terminal=1 shared=1 ");
	expect_has(t, "running=0 stopped=1 ");
	expect_has(t, " init{cpu=100 mem=33554432 eph=0 pods=0}sidecar ctr{cpu=400 mem=33554432 eph=0 pods=0}");
	free(t);
	/* An Indexed Job's pod: the index from the annotation (the Job controller sets no pod-index label
	 * but its own batch.kubernetes.io/job-completion-index one); pod-level resources. */
	t = both("pod-job-level", GS_OBJ_POD);
	expect_has(t, "idx=(null) job=1 assigned=node3:1 owner=Job/solve/");
	expect_has(t, "cuda=1:1 n_ctr=2 ");
	expect_has(t, " pod{cpu=300 mem=134217728 eph=0 pods=0}");
	expect_has(t, "stopped=0 ");
	free(t);
	/* Resized in place beyond what the node has free: the spec asks 600m, the status holds 200m. */
	t = both("pod-resize-deferred", GS_OBJ_POD);
	expect_has(t, " ctr{cpu=600 mem=33554432 eph=0 pods=0} status{cpu=200 mem=33554432 eph=0 pods=0}");
	expect_has(t, "stopped=0 infeasible=0 ");
	free(t);
	t = both("pod-resized", GS_OBJ_POD);
	expect_has(t, " ctr{cpu=600 mem=33554432 eph=0 pods=0} status{cpu=600 mem=33554432 eph=0 pods=0}");
	free(t);
	/* Gated, for Windows, never bound: no container status at all. */
	t = both("pod-gated", GS_OBJ_POD);
	expect_has(t, "name=queued-1 ");
	expect_has(t, "node=(null) ");
	expect_has(t, "gates=2:example.com/license ");
	expect_has(t, "stopped=1 infeasible=0 os=windows");
	free(t);
	/* spec.schedulingGroup (field 43) is skipped: the pod is an ordinary mapped pod to us. */
	t = both("pod-podgroup", GS_OBJ_POD);
	expect_has(t, "name=member-0 ");
	expect_has(t, "node=node2 map=0=node2:2 ");
	expect_has(t, "cuda=1:2 n_ctr=1 ");
	free(t);
	/* A 1.37 node: status.declaredFeatures (field 14) and runtimeHandlers skipped; the device plugin's GPUs. */
	t = both("node-declared", GS_OBJ_NODE);
	expect_has(t, "node name=node1 ");
	expect_has(t, "ready=1 unsched=0 gpus=4 capacity=4 boot=09491b86-c9de-4400-a834-75f6d99babe3 ");
	expect_has(t, "nvidia.com/gpu=4}");
	free(t);
	/* GPU 3 reported Unhealthy by the device plugin: capacity 4, allocatable 3. */
	t = both("node-unhealthy-gpu", GS_OBJ_NODE);
	expect_has(t, "node name=node3 ");
	expect_has(t, "gpus=3 capacity=4");
	free(t);
	REC = "";
	pair_ann = MAP_ANN;
}

/* ---- lists --------------------------------------------------------------------------------------- */

static int items_seen;

static int dump_item(enum gs_obj_kind kind, const void *obj, void *ud)
{
	struct gs_buf *b = ud;
	items_seen++;
	if (kind == GS_OBJ_POD)
		dump_pod(b, obj);
	else
		dump_node(b, obj);
	gs_buf_printf(b, "\n");
	return 0;
}

static char *list_both(const char *name, enum gs_obj_kind kind, int *items)
{
	char path[256], err[512] = "", *rv = NULL, *cont = NULL, *rv2 = NULL, *cont2 = NULL;
	struct gs_buf j, p;
	size_t jl, pl;
	unsigned skipped = 9;

	gs_buf_init(&j, 0);
	gs_buf_init(&p, 0);
	items_seen = 0;
	snprintf(path, sizeof(path), "%s%s.json", REC, name);
	char *jt = slurp(path, &jl);
	snprintf(path, sizeof(path), "%s%s.pb", REC, name);
	char *pt = slurp(path, &pl);
	if (gs_decode_list_ex(jt, jl, kind, MAP_ANN, dump_item, &j, &rv, &cont, NULL, err, sizeof(err)) < 0)
		fail_msg("%s (JSON): %s", name, err);
	if (gs_decode_list_pb_ex(pt, pl, kind, MAP_ANN, dump_item, &p, &rv2, &cont2, &skipped, err, sizeof(err)) < 0)
		fail_msg("%s (protobuf): %s", name, err);
	assert_int_equal(skipped, 0);
	assert_string_equal(p.data, j.data);
	assert_non_null(rv);
	assert_string_equal(rv2, rv);
	if (cont)
		assert_string_equal(cont2, cont);
	else
		assert_null(cont2);
	*items = items_seen / 2; /* both decoders called dump_item for each */
	/* The continue token, if any, goes at the end of the text for the caller to see. */
	gs_buf_printf(&j, "continue=%s", S(cont));
	free(rv);
	free(cont);
	free(rv2);
	free(cont2);
	free(jt);
	free(pt);
	gs_buf_free(&p);
	return gs_buf_steal(&j, NULL);
}

/* The streamed path: the protobuf list fed to the splitter the watch uses, in pieces of 7 bytes. */
struct stream_sink {
	struct gs_buf *b;
	char *rv;
	unsigned skipped;
};

static int stream_field(uint32_t num, int wire, uint64_t v, const uint8_t *data, size_t len, void *ud)
{
	struct stream_sink *s = ud;
	char err[256];
	(void)v;
	assert_int_equal(wire, 2);
	if (num == 1) {
		assert_int_equal(gs_decode_list_meta_pb(data, len, &s->rv, err, sizeof(err)), 0);
		return 0;
	}
	if (num == 2)
		return gs_decode_list_item_pb(data, len, GS_OBJ_POD, MAP_ANN, dump_item, s->b, &s->skipped);
	return 0;
}

static void pairs_lists_both_encodings_in(void)
{
	int n;
	char *t = list_both("list-pods", GS_OBJ_POD, &n);
	assert_int_equal(n, 4); /* full-3, bound, done, deleting */
	expect_has(t, "name=full-3 ");
	expect_has(t, "continue=(null)");
	free(t);
	t = list_both("list-pods-page1", GS_OBJ_POD, &n);
	assert_int_equal(n, 2);
	assert_null(strstr(t, "continue=(null)"));
	free(t);
	t = list_both("list-nodes", GS_OBJ_NODE, &n);
	assert_int_equal(n, 4);
	free(t);
	t = list_both("list-nodes-cache", GS_OBJ_NODE, &n);
	assert_int_equal(n, 4);
	free(t);

	/* Streamed as the watch does it: the same items as the whole-body decoder. */
	struct gs_buf whole, streamed;
	char err[256], *rv = NULL, *cont = NULL;
	size_t len;
	char path[256];
	snprintf(path, sizeof(path), "%slist-pods.pb", REC);
	char *body = slurp(path, &len);
	static const uint32_t raw_path[] = {2};
	struct gs_pb_stream ps;
	gs_buf_init(&whole, 0);
	gs_buf_init(&streamed, 0);
	struct stream_sink sink = {.b = &streamed};
	assert_int_equal(gs_decode_list_pb_ex(body, len, GS_OBJ_POD, MAP_ANN, dump_item, &whole, &rv, &cont, NULL, err,
					      sizeof(err)),
			 0);
	gs_pb_stream_init(&ps, "k8s", 4, raw_path, 1, 1 << 20, stream_field, &sink);
	for (size_t i = 0; i < len; i += 7)
		assert_int_equal(gs_pb_stream_feed(&ps, body + i, len - i < 7 ? len - i : 7), 0);
	assert_int_equal(gs_pb_stream_finish(&ps), 0);
	assert_string_equal(streamed.data, whole.data);
	assert_string_equal(sink.rv, rv);
	gs_pb_stream_free(&ps);
	free(sink.rv);
	free(rv);
	free(cont);
	free(body);
	gs_buf_free(&whole);
	gs_buf_free(&streamed);
}

/* ---- watch streams ------------------------------------------------------------------------------- */

struct ev_sink {
	struct gs_buf *b;
	enum gs_obj_kind kind;
	int pb;
	int n;
};

static int on_event(const char *data, size_t len, void *ud)
{
	struct ev_sink *s = ud;
	struct gs_decode_event ev;
	char err[512] = "";
	int r = s->pb ? gs_decode_watch_event_pb(data, len, s->kind, MAP_ANN, &ev, err, sizeof(err))
		      : gs_decode_watch_event(data, len, s->kind, MAP_ANN, &ev, err, sizeof(err));
	if (r < 0)
		fail_msg("event %d (%s): %s", s->n, s->pb ? "protobuf" : "JSON", err);
	dump_event(s->b, &ev);
	gs_buf_printf(s->b, "\n");
	gs_decode_event_free(&ev);
	s->n++;
	return 0;
}

/* Splits a recorded stream as the watch does (lines, or frames) and decodes every event. */
static void stream_events(const char *path, int pb, enum gs_obj_kind kind, struct gs_buf *b, size_t piece)
{
	struct gs_lines ls;
	struct ev_sink s = {.b = b, .kind = kind, .pb = pb};
	size_t len;
	char *data = slurp(path, &len);
	gs_lines_init(&ls, 0, on_event, &s);
	gs_lines_set_framed(&ls, pb);
	for (size_t i = 0; i < len; i += piece)
		assert_int_equal(gs_lines_feed(&ls, data + i, len - i < piece ? len - i : piece), 0);
	assert_int_equal(gs_lines_pending(&ls), 0);
	gs_lines_free(&ls);
	free(data);
}

static char *watch_both(const char *name, enum gs_obj_kind kind)
{
	char jp[256], pp[256];
	struct gs_buf j, p, p1;
	snprintf(jp, sizeof(jp), "%s%s.jsonl", REC, name);
	snprintf(pp, sizeof(pp), "%s%s.pbw", REC, name);
	gs_buf_init(&j, 0);
	gs_buf_init(&p, 0);
	gs_buf_init(&p1, 0);
	stream_events(jp, 0, kind, &j, 1 << 20);
	stream_events(pp, 1, kind, &p, 1 << 20);
	stream_events(pp, 1, kind, &p1, 3); /* frames split across pieces */
	assert_string_equal(p.data, j.data);
	assert_string_equal(p1.data, j.data);
	gs_buf_free(&p);
	gs_buf_free(&p1);
	return gs_buf_steal(&j, NULL);
}

static void pairs_watch_both_encodings_in(void)
{
	char *t = watch_both("watch-pods", GS_OBJ_POD);
	expect_has(t, "ADDED rv=");
	expect_has(t, "MODIFIED rv=");
	expect_has(t, "DELETED rv=");
	expect_has(t, "BOOKMARK rv=");
	expect_has(t, "name=full-3 ");
	free(t);
	t = watch_both("watch-nodes", GS_OBJ_NODE);
	expect_has(t, "MODIFIED rv=");
	expect_has(t, "label=gs-fixture:yes");
	free(t);
	/* The ERROR 410 frame: from the serializers' code (a young cluster's watch cache cannot be made to
	 * answer one: see record.sh), wherever a directory has it; k8s-serializers/ must. */
	char path[256];
	FILE *f;
	snprintf(path, sizeof(path), "%swatch-expired.jsonl", REC);
	if ((f = fopen(path, "rb")) || strstr(REC, "k8s-serializers")) {
		if (f)
			fclose(f);
		t = watch_both("watch-expired", GS_OBJ_POD);
		expect_has(t, "ERROR rv=(null) status=410/Expired/");
		free(t);
	}
}

static int status_dirs; /* directories that held a 410 Status: test_status_both_encodings wants one */

static void pairs_status_both_encodings_in(void)
{
	size_t jl, pl;
	char jpath[256], ppath[256];
	snprintf(jpath, sizeof(jpath), "%sstatus-410-list.json", REC);
	snprintf(ppath, sizeof(ppath), "%sstatus-410-list.pb", REC);
	FILE *f = fopen(jpath, "rb");
	if (!f) {
		print_message("  no status-410-list.json here (the apiserver served the compacted list)\n");
		return;
	}
	fclose(f);
	status_dirs++;
	char *jt = slurp(jpath, &jl), *pt = slurp(ppath, &pl);
	int jc, pc;
	char *jr, *jm, *pr, *pm;
	assert_int_equal(gs_decode_status(jt, jl, &jc, &jr, &jm), 0);
	assert_int_equal(gs_decode_status_pb(pt, pl, &pc, &pr, &pm), 0);
	assert_int_equal(jc, 410);
	assert_int_equal(pc, 410);
	assert_string_equal(pr, jr);
	assert_string_equal(pm, jm);
	/* A Status is not a list: the list decoder says so instead of returning an empty list. */
	char err[256] = "", *rv, *cont;
	int n = 0;
	assert_int_equal(
		gs_decode_list_pb_ex(pt, pl, GS_OBJ_POD, MAP_ANN, dump_item, &n, &rv, &cont, NULL, err, sizeof(err)),
		-EINVAL);
	assert_string_equal(err, "pod list: a Status, not a PodList");
	free(jr);
	free(jm);
	free(pr);
	free(pm);
	free(jt);
	free(pt);
}

/* ---- the hand-written JSON fixtures, through protobuf ------------------------------------------- */

/*
 * Every fixture of tests/fixtures/json (the ones test_decode.c checks value by value) is encoded to
 * protobuf by pb_encode.h and decoded again: the records must be identical, so what test_decode.c
 * asserts of the JSON records holds for the protobuf ones too.
 */
static void fixture_as_pb(const char *path)
{
	const char *base = strrchr(path, '/') + 1;
	enum gs_obj_kind kind = strstr(base, "node") ? GS_OBJ_NODE : GS_OBJ_POD;
	char err[512] = "", err2[512] = "";
	struct gs_buf j, p, enc;
	size_t len;
	char *text = slurp(path, &len);

	gs_buf_init(&j, 0);
	gs_buf_init(&p, 0);
	gs_buf_init(&enc, 0);
	if (strncmp(base, "watch-", 6) == 0) {
		/* One event per line; each line is also a frame of the protobuf stream. */
		for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
			struct gs_decode_event ev;
			cJSON *o = cJSON_Parse(line);
			assert_non_null(o);
			gs_buf_reset(&enc);
			if (pbe_watch_event(&enc, o, kind) < 0)
				fail_msg("%s: cannot encode %s", base, pbe_failed_key);
			if (gs_decode_watch_event(line, strlen(line), kind, MAP_ANN, &ev, err, sizeof(err)) < 0)
				fail_msg("%s (JSON): %s", base, err);
			dump_event(&j, &ev);
			gs_decode_event_free(&ev);
			if (gs_decode_watch_event_pb(enc.data, enc.len, kind, MAP_ANN, &ev, err, sizeof(err)) < 0)
				fail_msg("%s (protobuf): %s", base, err);
			dump_event(&p, &ev);
			gs_decode_event_free(&ev);
			cJSON_Delete(o);
		}
	} else if (strncmp(base, "list-", 5) == 0) {
		char *rv, *cont, *rv2, *cont2;
		cJSON *o = cJSON_Parse(text);
		if (pbe_envelope(&enc, o, kind == GS_OBJ_POD ? pbe_podlist : pbe_nodelist,
				 kind == GS_OBJ_POD ? "PodList" : "NodeList") < 0)
			fail_msg("%s: cannot encode %s", base, pbe_failed_key);
		if (gs_decode_list(text, len, kind, MAP_ANN, dump_item, &j, &rv, &cont, err, sizeof(err)) < 0)
			fail_msg("%s (JSON): %s", base, err);
		if (gs_decode_list_pb_ex(enc.data, enc.len, kind, MAP_ANN, dump_item, &p, &rv2, &cont2, NULL, err2,
					 sizeof(err2)) < 0)
			fail_msg("%s (protobuf): %s", base, err2);
		gs_buf_printf(&j, "rv=%s continue=%s", S(rv), S(cont));
		gs_buf_printf(&p, "rv=%s continue=%s", S(rv2), S(cont2));
		free(rv);
		free(cont);
		free(rv2);
		free(cont2);
		cJSON_Delete(o);
	} else if (strncmp(base, "status-", 7) == 0) {
		int c1, c2;
		char *r1, *m1, *r2, *m2;
		cJSON *o = cJSON_Parse(text);
		assert_int_equal(pbe_envelope(&enc, o, pbe_status, "Status"), 0);
		assert_int_equal(gs_decode_status(text, len, &c1, &r1, &m1), 0);
		assert_int_equal(gs_decode_status_pb(enc.data, enc.len, &c2, &r2, &m2), 0);
		gs_buf_printf(&j, "%d %s %s", c1, S(r1), S(m1));
		gs_buf_printf(&p, "%d %s %s", c2, S(r2), S(m2));
		free(r1);
		free(m1);
		free(r2);
		free(m2);
		cJSON_Delete(o);
	} else if (strncmp(base, "pod-", 4) == 0 || strncmp(base, "node-", 5) == 0) {
		cJSON *o = cJSON_Parse(text);
		if (pbe_msg(&enc, o, kind == GS_OBJ_POD ? pbe_pod : pbe_node) < 0)
			fail_msg("%s: cannot encode %s", base, pbe_failed_key);
		if (kind == GS_OBJ_POD) {
			struct gs_pod_obj a, b;
			if (gs_decode_pod(o, MAP_ANN, &a, err, sizeof(err)) < 0)
				fail_msg("%s (JSON): %s", base, err);
			if (gs_decode_pod_pb(enc.data, enc.len, MAP_ANN, &b, err, sizeof(err)) < 0)
				fail_msg("%s (protobuf): %s", base, err);
			dump_pod(&j, &a);
			dump_pod(&p, &b);
			gs_pod_obj_free(&a);
			gs_pod_obj_free(&b);
		} else {
			struct gs_node_obj a, b;
			if (gs_decode_node(o, &a, err, sizeof(err)) < 0)
				fail_msg("%s (JSON): %s", base, err);
			if (gs_decode_node_pb(enc.data, enc.len, &b, err, sizeof(err)) < 0)
				fail_msg("%s (protobuf): %s", base, err);
			dump_node(&j, &a);
			dump_node(&p, &b);
			gs_node_obj_free(&a);
			gs_node_obj_free(&b);
		}
		cJSON_Delete(o);
	} else {
		goto out; /* lease.json: not ours */
	}
	if (strcmp(j.data ? j.data : "", p.data ? p.data : "") != 0) {
		size_t at = 0;
		while (j.data[at] && j.data[at] == p.data[at])
			at++;
		at = at > 80 ? at - 80 : 0;
		fail_msg("%s: JSON and protobuf records differ:\nJSON:     ...%.200s\nprotobuf: ...%.200s", base,
			 j.data + at, p.data + at);
	}
	assert_true(j.len > 0);
out:
	gs_buf_free(&j);
	gs_buf_free(&p);
	gs_buf_free(&enc);
	free(text);
}

static void test_json_fixtures_as_protobuf(void **state)
{
	(void)state;
	glob_t g;
	assert_int_equal(glob("tests/fixtures/json/*.json*", 0, NULL, &g), 0);
	assert_true(g.gl_pathc >= 15);
	for (size_t i = 0; i < g.gl_pathc; i++)
		fixture_as_pb(g.gl_pathv[i]);
	globfree(&g);
}

/* The parity fields' edge cases (test_decode.c test_parity_field_rules) give the same record in both
 * encodings, and the same in a partial one (what a DELETED event decodes). */
static void test_parity_rules_both_encodings(void **state)
{
	(void)state;
	static const char *const cases[] = {
		"\"status\":{\"containerStatuses\":[{\"name\":\"a\",\"state\":{}}]}",
		"\"status\":{\"containerStatuses\":[{\"name\":\"a\",\"state\":{\"waiting\":{}}},"
		"{\"name\":\"b\",\"state\":{\"terminated\":{}}},{\"name\":\"zz\",\"state\":{\"terminated\":{}}}]}",
		"\"status\":{\"containerStatuses\":[{\"name\":\"b\",\"resources\":{\"requests\":{}},"
		"\"allocatedResources\":{\"cpu\":\"3\"}},{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"1\"}},"
		"\"allocatedResources\":{\"cpu\":\"3\"}},{\"name\":\"a\",\"allocatedResources\":{\"cpu\":\"2\"}}]}",
		"\"status\":{\"conditions\":[{\"type\":\"PodResizePending\",\"reason\":\"Deferred\"}],\"resize\":\"InProgress\"}",
		"\"status\":{\"conditions\":[{\"type\":\"Ready\"},{\"type\":\"PodResizePending\",\"reason\":\"Infeasible\"}]}",
		"\"status\":{\"resize\":\"Infeasible\"}",
		"\"status\":{\"nominatedNodeName\":\"node7\"}",
		"\"status\":{\"nominatedNodeName\":\"\"}",
	};
	static const char *const specs[] = {
		"",
		",\"initContainers\":[{\"name\":\"i\",\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}},"
		"{\"name\":\"j\",\"restartPolicy\":\"OnFailure\"}],\"os\":{\"name\":\"linux\"},"
		"\"resources\":{\"requests\":{\"memory\":\"1Gi\"}}",
		",\"resources\":{\"limits\":{\"cpu\":\"1\"}}",
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (size_t k = 0; k < sizeof(specs) / sizeof(specs[0]); k++) {
			char json[2048], err[256] = "";
			struct gs_buf j, p, enc;
			struct gs_pod_obj a, b;
			struct gs_decode_event ev;
			snprintf(
				json, sizeof(json),
				"{\"metadata\":{\"namespace\":\"d\",\"name\":\"p-0\",\"uid\":\"u\"},"
				"\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]%s},%s}",
				specs[k], cases[i]);
			cJSON *o = cJSON_Parse(json);
			assert_non_null(o);
			gs_buf_init(&j, 0);
			gs_buf_init(&p, 0);
			gs_buf_init(&enc, 0);
			if (pbe_msg(&enc, o, pbe_pod) < 0)
				fail_msg("case %zu/%zu: cannot encode %s", i, k, pbe_failed_key);
			if (gs_decode_pod(o, MAP_ANN, &a, err, sizeof(err)) < 0 ||
			    gs_decode_pod_pb(enc.data, enc.len, MAP_ANN, &b, err, sizeof(err)) < 0)
				fail_msg("case %zu/%zu: %s", i, k, err);
			dump_pod(&j, &a);
			dump_pod(&p, &b);
			if (strcmp(j.data, p.data) != 0)
				fail_msg("case %zu/%zu differ:\nJSON:     %s\nprotobuf: %s", i, k, j.data, p.data);
			if (strstr(cases[i], "node7")) /* read at all: not merely ignored by both */
				assert_string_equal(a.nominated_node, "node7");
			gs_pod_obj_free(&a);
			gs_pod_obj_free(&b);
			/* DELETED: partial in both. */
			gs_buf_reset(&j);
			gs_buf_reset(&p);
			cJSON *evj = cJSON_CreateObject();
			cJSON_AddStringToObject(evj, "type", "DELETED");
			cJSON_AddItemToObject(evj, "object", cJSON_Duplicate(o, 1));
			char *line = cJSON_PrintUnformatted(evj);
			gs_buf_reset(&enc);
			assert_int_equal(pbe_watch_event(&enc, evj, GS_OBJ_POD), 0);
			assert_int_equal(
				gs_decode_watch_event(line, strlen(line), GS_OBJ_POD, MAP_ANN, &ev, err, sizeof(err)),
				0);
			assert_int_equal(ev.pod.partial, 1);
			dump_event(&j, &ev);
			gs_decode_event_free(&ev);
			assert_int_equal(
				gs_decode_watch_event_pb(enc.data, enc.len, GS_OBJ_POD, MAP_ANN, &ev, err, sizeof(err)),
				0);
			dump_event(&p, &ev);
			gs_decode_event_free(&ev);
			if (strcmp(j.data, p.data) != 0)
				fail_msg("case %zu/%zu (DELETED) differ:\nJSON:     %s\nprotobuf: %s", i, k, j.data,
					 p.data);
			free(line);
			cJSON_Delete(evj);
			cJSON_Delete(o);
			gs_buf_free(&j);
			gs_buf_free(&p);
			gs_buf_free(&enc);
		}
	}
}

/* ---- hand-built protobuf ------------------------------------------------------------------------- */

struct w {
	uint8_t b[2048];
	size_t n;
};

static void w_varint(struct w *w, uint64_t v)
{
	do {
		w->b[w->n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static void w_bytes(struct w *w, uint32_t num, const void *p, size_t len)
{
	w_varint(w, (uint64_t)num << 3 | 2);
	w_varint(w, len);
	memcpy(w->b + w->n, p, len);
	w->n += len;
}

static void w_str(struct w *w, uint32_t num, const char *s)
{
	w_bytes(w, num, s, strlen(s));
}

static void w_msg(struct w *w, uint32_t num, const struct w *m)
{
	w_bytes(w, num, m->b, m->n);
}

static void w_int(struct w *w, uint32_t num, uint64_t v)
{
	w_varint(w, (uint64_t)num << 3);
	w_varint(w, v);
}

/* A pod with metadata (name, namespace, uid) and the given spec bytes. */
static void w_pod(struct w *pod, const struct w *spec)
{
	struct w meta = {0};
	w_str(&meta, 1, "web-0");
	w_str(&meta, 3, "default");
	w_str(&meta, 5, "u-1");
	w_msg(pod, 1, &meta);
	if (spec)
		w_msg(pod, 2, spec);
}

/* spec.schedulingGates (field 38, 1.26+): 1.20 cannot record one, so both encodings are built by hand. */
static void test_gates_hand_built(void **state)
{
	(void)state;
	struct w spec = {0}, g1 = {0}, g2 = {0}, pod = {0};
	char err[256] = "";
	w_str(&g1, 1, "example.com/quota");
	w_str(&g2, 1, "example.com/other");
	w_msg(&spec, 38, &g1);
	w_msg(&spec, 38, &g2);
	w_str(&spec, 19, "gpu-scheduler");
	w_pod(&pod, &spec);
	struct gs_pod_obj p, q;
	assert_int_equal(gs_decode_pod_pb(pod.b, pod.n, MAP_ANN, &p, err, sizeof(err)), 0);
	cJSON *j = cJSON_Parse("{\"metadata\":{\"name\":\"web-0\",\"namespace\":\"default\",\"uid\":\"u-1\"},"
			       "\"spec\":{\"schedulerName\":\"gpu-scheduler\",\"schedulingGates\":"
			       "[{\"name\":\"example.com/quota\"},{\"name\":\"example.com/other\"}]}}");
	assert_int_equal(gs_decode_pod(j, MAP_ANN, &q, err, sizeof(err)), 0);
	struct gs_buf a, b;
	gs_buf_init(&a, 0);
	gs_buf_init(&b, 0);
	dump_pod(&a, &p);
	dump_pod(&b, &q);
	assert_string_equal(a.data, b.data);
	assert_int_equal(p.n_gates, 2);
	assert_string_equal(p.first_gate, "example.com/quota");
	gs_buf_free(&a);
	gs_buf_free(&b);
	gs_pod_obj_free(&p);
	gs_pod_obj_free(&q);
	cJSON_Delete(j);
	/* No map annotation to read (NULL): the pod decodes, without a map. */
	struct w ann = {0}, meta = {0}, pod2 = {0};
	w_str(&ann, 1, MAP_ANN);
	w_str(&ann, 2, "0=node1:0");
	w_str(&meta, 1, "web-0");
	w_str(&meta, 3, "default");
	w_str(&meta, 5, "u-1");
	w_msg(&meta, 12, &ann);
	w_msg(&pod2, 1, &meta);
	assert_int_equal(gs_decode_pod_pb(pod2.b, pod2.n, NULL, &p, err, sizeof(err)), 0);
	assert_null(p.map_text);
	gs_pod_obj_free(&p);
	assert_int_equal(gs_decode_pod_pb(pod2.b, pod2.n, MAP_ANN, &p, err, sizeof(err)), 0);
	/* The map is not copied: map_text points at its bytes inside the message (objects.h). */
	assert_int_equal(p.map_len, 9);
	assert_memory_equal(p.map_text, "0=node1:0", 9);
	assert_true(p.map_text >= (const char *)pod2.b && p.map_text + p.map_len <= (const char *)pod2.b + pod2.n);
	assert_null(p.map_owned);
	gs_pod_obj_free(&p);
}

/* A watch frame: WatchEvent{1 type, 2 RawExtension{1 raw: "k8s\0" Unknown{2 raw: the pod}}}. */
static void w_event(struct w *ev, const char *type, const struct w *pod)
{
	struct w unk = {0}, env = {0}, ext = {0};
	w_msg(&unk, 2, pod);
	memcpy(env.b, "k8s\0", 4);
	env.n = 4;
	memcpy(env.b + env.n, unk.b, unk.n);
	env.n += unk.n;
	w_msg(&ext, 1, &env);
	w_str(ev, 1, type);
	w_msg(ev, 2, &ext);
}

struct asked {
	int calls, answer;
	char uid[64], node[64];
};

static int hint_bound(const char *uid, const char *node, size_t node_len, void *ud)
{
	struct asked *a = ud;
	a->calls++;
	snprintf(a->uid, sizeof(a->uid), "%s", uid);
	snprintf(a->node, sizeof(a->node), "%.*s", (int)node_len, node);
	return a->answer;
}

/* Two controller owner references, the first without a kind, in both encodings: the first counts and
 * nothing is written over (fuzz_decode found the JSON decoder leaking the first's strings; the
 * protobuf one had the same test). Under the sanitizers and valgrind a leak fails this test. */
static void test_two_controllers_both_encodings(void **state)
{
	static const char text[] =
		"{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"uid\":\"u\",\"ownerReferences\":["
		"{\"controller\":true,\"name\":\"first\",\"uid\":\"u1\"},"
		"{\"controller\":true,\"kind\":\"Job\",\"name\":\"second\",\"uid\":\"u2\"}]},"
		"\"spec\":{\"containers\":[{\"name\":\"c\"}]}}";
	struct gs_buf enc;
	struct gs_pod_obj a, b;
	char err[256] = "";
	cJSON *o = cJSON_Parse(text);

	assert_non_null(o);
	gs_buf_init(&enc, 0);
	assert_int_equal(pbe_msg(&enc, o, pbe_pod), 0);
	if (gs_decode_pod(o, MAP_ANN, &a, err, sizeof(err)) < 0)
		fail_msg("JSON: %s", err);
	if (gs_decode_pod_pb(enc.data, enc.len, MAP_ANN, &b, err, sizeof(err)) < 0)
		fail_msg("protobuf: %s", err);
	assert_null(a.owner_kind);
	assert_string_equal(a.owner_name, "first");
	assert_string_equal(a.owner_uid, "u1");
	assert_null(b.owner_kind);
	assert_string_equal(b.owner_name, "first");
	assert_string_equal(b.owner_uid, "u1");
	gs_pod_obj_free(&a);
	gs_pod_obj_free(&b);
	gs_buf_free(&enc);
	cJSON_Delete(o);
}

/* The all-or-nothing annotations and the map reference (sched/gpm.h), in both encodings: the same strings
 * in a full record, NULL when absent and in a DELETED event's partial record. */
static void test_gang_annotations_both_encodings(void **state)
{
	/* Each text in parentheses: one element made of several literals (clang's -Wstring-concatenation). */
	static const char *const texts[] = {
		("{\"metadata\":{\"name\":\"w-0\",\"namespace\":\"n\",\"uid\":\"u\",\"annotations\":{"
		 "\"gpu-scheduler.io/placement\":\"all-or-nothing\",\"gpu-scheduler.io/gang-timeout\":\"1h30m\","
		 "\"gpu-scheduler.io/gang-size\":\"4\",\"gpu-scheduler.io/map\":\"0=node1:0\","
		 "\"gpu-scheduler.io/placement-map\":\"ranks\",\"gpu-scheduler.io/placement-map-generation\":\"3\"}},"
		 "\"spec\":{\"containers\":[{\"name\":\"c\"}]}}"),
		("{\"metadata\":{\"name\":\"w-0\",\"namespace\":\"n\",\"uid\":\"u\",\"annotations\":{"
		 "\"gpu-scheduler.io/gang-timeout\":\"x\",\"gpu-scheduler.io/placement-map\":\"ranks\","
		 "\"gpu-scheduler.io/placement-map-generation\":\"12\"}},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}"),
		"{\"metadata\":{\"name\":\"w-0\",\"namespace\":\"n\",\"uid\":\"u\"},\"spec\":{}}",
	};
	static const char *const want[][5] = {{"all-or-nothing", "1h30m", "4", "ranks", "3"},
					      {NULL, "x", NULL, "ranks", "12"},
					      {NULL, NULL, NULL, NULL, NULL}};

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct gs_buf enc, dj, dp;
		struct gs_pod_obj a, b;
		struct gs_decode_event e;
		struct w pod = {0}, del = {0};
		char err[256] = "";
		cJSON *o = cJSON_Parse(texts[i]);

		assert_non_null(o);
		gs_buf_init(&enc, 0);
		gs_buf_init(&dj, 0);
		gs_buf_init(&dp, 0);
		assert_int_equal(pbe_msg(&enc, o, pbe_pod), 0);
		if (gs_decode_pod(o, MAP_ANN, &a, err, sizeof(err)) < 0)
			fail_msg("JSON: %s", err);
		if (gs_decode_pod_pb(enc.data, enc.len, MAP_ANN, &b, err, sizeof(err)) < 0)
			fail_msg("protobuf: %s", err);
		dump_pod(&dj, &a);
		dump_pod(&dp, &b);
		assert_string_equal(dj.data, dp.data);
		const char *got[5] = {b.placement, b.gang_timeout, b.gang_size, b.map_ref, b.map_ref_generation};
		for (int k = 0; k < 5; k++) {
			if (want[i][k])
				assert_string_equal(got[k], want[i][k]);
			else
				assert_null(got[k]);
		}

		assert_true(enc.len < sizeof(pod.b));
		memcpy(pod.b, enc.data, enc.len);
		pod.n = enc.len;
		w_event(&del, "DELETED", &pod);
		if (gs_decode_watch_event_pb(del.b, del.n, GS_OBJ_POD, MAP_ANN, &e, err, sizeof(err)) < 0)
			fail_msg("DELETED: %s", err);
		assert_int_equal(e.pod.partial, 1);
		assert_null(e.pod.placement);
		assert_null(e.pod.gang_timeout);
		assert_null(e.pod.gang_size);
		assert_null(e.pod.map_ref);
		assert_null(e.pod.map_ref_generation);
		gs_decode_event_free(&e);

		gs_pod_obj_free(&a);
		gs_pod_obj_free(&b);
		gs_buf_free(&enc);
		gs_buf_free(&dj);
		gs_buf_free(&dp);
		cJSON_Delete(o);
	}
}

/*
 * A pod the reader holds bound to its node is read partially: what can still change (phase, deletion,
 * node) and nothing else; a pod it does not hold, or one without spec.nodeName, is read whole; a
 * DELETED event is partial whatever the reader holds.
 */
static void test_hint_bound_partial(void **state)
{
	(void)state;
	struct w ann = {0}, meta = {0}, ctr = {0}, env = {0}, spec = {0}, status = {0}, pod = {0}, ev = {0};
	struct w shared = {0}, oref = {0}, qty = {0}, cpu = {0}, reqs = {0}, sidecar = {0}, cs = {0}, running = {0};
	struct w os = {0};
	struct asked a = {0};
	struct gs_decode_hint hint = {.bound = hint_bound, .ud = &a};
	struct gs_decode_event e;
	char err[256] = "";

	w_str(&ann, 1, MAP_ANN);
	w_str(&ann, 2, "0=node1:0");
	w_str(&meta, 1, "web-0");
	w_str(&meta, 3, "default");
	w_str(&meta, 5, "u-1");
	w_str(&meta, 6, "42");
	w_msg(&meta, 12, &ann);
	w_str(&shared, 1, "gpu-scheduler.io/allow-shared-devices");
	w_str(&shared, 2, "true");
	w_msg(&meta, 12, &shared);
	w_str(&oref, 1, "StatefulSet");
	w_str(&oref, 3, "web");
	w_str(&oref, 4, "o-2");
	w_int(&oref, 6, 1);
	w_msg(&meta, 13, &oref);
	w_str(&env, 1, "CUDA_VISIBLE_DEVICES");
	w_str(&env, 2, "0");
	w_str(&qty, 1, "3");
	w_str(&cpu, 1, "cpu");
	w_msg(&cpu, 2, &qty);
	w_msg(&reqs, 2, &cpu);
	w_str(&ctr, 1, "main");
	w_msg(&ctr, 7, &env);
	w_msg(&ctr, 8, &reqs);
	w_str(&sidecar, 1, "proxy");
	w_str(&sidecar, 24, "Always");
	w_msg(&spec, 20, &sidecar);
	w_msg(&spec, 2, &ctr);
	w_str(&spec, 10, "node1");
	w_str(&spec, 19, "gpu-scheduler");
	w_str(&os, 1, "linux");
	w_msg(&spec, 36, &os);
	w_msg(&spec, 40, &reqs);
	w_str(&cs, 1, "main");
	w_msg(&cs, 10, &cpu);
	w_msg(&cs, 2, &running);
	w_str(&status, 1, "Running");
	w_str(&status, 14, "Infeasible");
	w_str(&status, 11, "node7");
	w_msg(&status, 8, &cs);
	w_msg(&pod, 1, &meta);
	w_msg(&pod, 2, &spec);
	w_msg(&pod, 3, &status);
	w_event(&ev, "MODIFIED", &pod);

	/* Held: partial. */
	a.answer = 1;
	assert_int_equal(gs_decode_watch_event_pb_hint(ev.b, ev.n, GS_OBJ_POD, MAP_ANN, &hint, &e, err, sizeof(err)),
			 0);
	assert_int_equal(a.calls, 1);
	assert_string_equal(a.uid, "u-1");
	assert_string_equal(a.node, "node1");
	assert_int_equal(e.pod.partial, 1);
	assert_string_equal(e.pod.node_name, "node1");
	assert_string_equal(e.pod.scheduler_name, "gpu-scheduler");
	assert_string_equal(e.pod.resource_version, "42");
	assert_string_equal(e.resource_version, "42");
	assert_null(e.pod.map_text);
	assert_int_equal(e.pod.n_containers, 0);
	assert_int_equal(e.pod.cuda_state, GS_CUDA_UNSET);
	assert_int_equal(e.pod.terminal, 0);
	assert_int_equal(e.pod.running, 1); /* status.phase Running: what the mapped-GPU metric counts */
	/* What can still change for a bound pod, and what gs_checks_pod_requests reads, is there (objects.h). */
	assert_string_equal(e.pod.owner_kind, "StatefulSet");
	assert_string_equal(e.pod.owner_name, "web");
	assert_string_equal(e.pod.owner_uid, "o-2");
	assert_int_equal(e.pod.allow_shared, 1);
	assert_int_equal(e.pod.n_init, 1);
	assert_int_equal(e.pod.init_sidecar[0], 1);
	assert_int_equal(e.pod.n_ctr, 1);
	assert_int_equal(e.pod.ctr_req[0].milli_cpu, 3000);
	assert_int_equal(e.pod.ctr_status_set[0], 1);
	assert_int_equal(e.pod.ctr_status_req[0].milli_cpu, 3000);
	assert_int_equal(e.pod.resize_infeasible, 1);
	assert_int_equal(e.pod.stopped, 0);
	assert_int_equal(e.pod.has_pod_req, 1);
	assert_int_equal(e.pod.pod_req.milli_cpu, 3000);
	/* ...and the rest is not: no env, no os, no host ports. */
	assert_null(e.pod.os_name);
	assert_null(e.pod.cuda_value);
	gs_decode_event_free(&e);

	/* Not held: whole, as without a hint. */
	a.answer = 0;
	assert_int_equal(gs_decode_watch_event_pb_hint(ev.b, ev.n, GS_OBJ_POD, MAP_ANN, &hint, &e, err, sizeof(err)),
			 0);
	assert_int_equal(a.calls, 2);
	assert_int_equal(e.pod.partial, 0);
	assert_int_equal(e.pod.n_containers, 2);
	assert_int_equal(e.pod.cuda_state, GS_CUDA_MIXED); /* the sidecar does not set it */
	assert_int_equal(e.pod.map_len, 9);
	assert_string_equal(e.pod.os_name, "linux");
	assert_string_equal(e.pod.nominated_node, "node7"); /* status.nominatedNodeName */
	assert_int_equal(e.pod.init_sidecar[0], 1);
	assert_int_equal(e.pod.ctr_status_req[0].milli_cpu, 3000);
	gs_decode_event_free(&e);

	/* DELETED: partial without asking. */
	struct w del = {0};
	w_event(&del, "DELETED", &pod);
	assert_int_equal(gs_decode_watch_event_pb_hint(del.b, del.n, GS_OBJ_POD, MAP_ANN, &hint, &e, err, sizeof(err)),
			 0);
	assert_int_equal(a.calls, 2);
	assert_int_equal(e.type, GS_DECODE_EV_DELETED);
	assert_int_equal(e.pod.partial, 1);
	assert_string_equal(e.pod.uid, "u-1");
	gs_decode_event_free(&e);

	/* No spec.nodeName: nothing to ask, read whole. */
	struct w spec2 = {0}, pod2 = {0}, ev2 = {0};
	w_msg(&spec2, 2, &ctr);
	w_str(&spec2, 19, "gpu-scheduler");
	w_msg(&pod2, 1, &meta);
	w_msg(&pod2, 2, &spec2);
	w_event(&ev2, "ADDED", &pod2);
	a.answer = 1;
	assert_int_equal(gs_decode_watch_event_pb_hint(ev2.b, ev2.n, GS_OBJ_POD, MAP_ANN, &hint, &e, err, sizeof(err)),
			 0);
	assert_int_equal(a.calls, 2);
	assert_int_equal(e.pod.partial, 0);
	assert_int_equal(e.pod.n_containers, 1);
	gs_decode_event_free(&e);

	/* Held but terminal: partial, and says so. */
	struct w status3 = {0}, pod3 = {0}, ev3 = {0};
	w_str(&status3, 1, "Succeeded");
	w_msg(&pod3, 1, &meta);
	w_msg(&pod3, 2, &spec);
	w_msg(&pod3, 3, &status3);
	w_event(&ev3, "MODIFIED", &pod3);
	assert_int_equal(gs_decode_watch_event_pb_hint(ev3.b, ev3.n, GS_OBJ_POD, MAP_ANN, &hint, &e, err, sizeof(err)),
			 0);
	assert_int_equal(e.pod.partial, 1);
	assert_int_equal(e.pod.terminal, 1);
	assert_int_equal(e.pod.running, 0);
	gs_decode_event_free(&e);
}

/* Wrong wire types, truncations, NUL bytes, envelopes: each fails that object with a message. */
static void test_hostile_hand_built(void **state)
{
	(void)state;
	struct gs_pod_obj p;
	struct gs_node_obj n;
	char err[256];

	struct w spec = {0}, pod = {0};
	w_int(&spec, 10, 7); /* nodeName as a varint */
	w_pod(&pod, &spec);
	assert_int_equal(gs_decode_pod_pb(pod.b, pod.n, MAP_ANN, &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "pod default/web-0: spec.nodeName has wire type varint, not length-delimited");
	assert_null(p.name); /* nothing left to free */

	memset(&spec, 0, sizeof(spec));
	memset(&pod, 0, sizeof(pod));
	w_str(&spec, 25, "7"); /* priority as a string */
	w_pod(&pod, &spec);
	assert_int_equal(gs_decode_pod_pb(pod.b, pod.n, MAP_ANN, &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "pod default/web-0: spec.priority has wire type length-delimited, not varint");

	memset(&spec, 0, sizeof(spec));
	memset(&pod, 0, sizeof(pod));
	w_int(&spec, 25, (uint64_t)1 << 40); /* priority past int32 */
	w_pod(&pod, &spec);
	assert_int_equal(gs_decode_pod_pb(pod.b, pod.n, MAP_ANN, &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "pod default/web-0: spec.priority 1099511627776 is out of range");

	/* A negative priority comes sign-extended on 10 bytes. */
	memset(&spec, 0, sizeof(spec));
	memset(&pod, 0, sizeof(pod));
	w_int(&spec, 25, (uint64_t)(int64_t)-5);
	w_pod(&pod, &spec);
	assert_int_equal(gs_decode_pod_pb(pod.b, pod.n, MAP_ANN, &p, err, sizeof(err)), 0);
	assert_int_equal(p.priority, -5);
	assert_int_equal(p.preempt_never, 0);
	gs_pod_obj_free(&p);

	/* preemptionPolicy (field 31): "Never" only; another value or a wrong wire type is not it. */
	memset(&spec, 0, sizeof(spec));
	memset(&pod, 0, sizeof(pod));
	w_str(&spec, 31, "Never");
	w_pod(&pod, &spec);
	assert_int_equal(gs_decode_pod_pb(pod.b, pod.n, MAP_ANN, &p, err, sizeof(err)), 0);
	assert_int_equal(p.preempt_never, 1);
	gs_pod_obj_free(&p);
	memset(&spec, 0, sizeof(spec));
	memset(&pod, 0, sizeof(pod));
	w_str(&spec, 31, "PreemptLowerPriority");
	w_pod(&pod, &spec);
	assert_int_equal(gs_decode_pod_pb(pod.b, pod.n, MAP_ANN, &p, err, sizeof(err)), 0);
	assert_int_equal(p.preempt_never, 0);
	gs_pod_obj_free(&p);
	memset(&spec, 0, sizeof(spec));
	memset(&pod, 0, sizeof(pod));
	w_int(&spec, 31, 1);
	w_pod(&pod, &spec);
	assert_int_equal(gs_decode_pod_pb(pod.b, pod.n, MAP_ANN, &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "pod default/web-0: spec.preemptionPolicy has wire type varint, not length-delimited");

	/* Every truncation of a valid pod fails or decodes, never crashes; cut inside metadata it fails. */
	memset(&spec, 0, sizeof(spec));
	memset(&pod, 0, sizeof(pod));
	w_str(&spec, 10, "node1");
	w_pod(&pod, &spec);
	for (size_t cut = 0; cut < pod.n; cut++) {
		int r = gs_decode_pod_pb(pod.b, cut, MAP_ANN, &p, err, sizeof(err));
		if (r == 0)
			gs_pod_obj_free(&p);
		else
			assert_int_equal(r, -EINVAL);
		if (cut < 2 + 5 + 2 + 7 + 2 + 3 + 2)
			assert_int_equal(r, -EINVAL);
	}

	/* A node selector requirement with values, then garbage: refused, nothing written through the values
	 * array it could not size (found by fuzz_pb). */
	{
		struct w req = {0}, term = {0}, sel = {0}, na = {0}, aff = {0}, sp = {0}, pd = {0};
		w_str(&req, 1, "gpu");
		w_str(&req, 3, "a100");
		req.b[req.n++] = 0x0e; /* wire type 6 */
		w_msg(&term, 1, &req);
		w_msg(&sel, 1, &term);
		w_msg(&na, 1, &sel);
		w_msg(&aff, 1, &na);
		w_msg(&sp, 18, &aff);
		w_pod(&pd, &sp);
		assert_int_equal(gs_decode_pod_pb(pd.b, pd.n, MAP_ANN, &p, err, sizeof(err)), -EINVAL);
		assert_string_equal(
			err, "pod default/web-0: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnored"
			     "DuringExecution.nodeSelectorTerms[0].matchExpressions[0]: malformed protobuf at byte 11: "
			     "undefined wire type");
	}

	/* A NUL inside a string. */
	memset(&pod, 0, sizeof(pod));
	struct w meta = {0};
	w_bytes(&meta, 1, "we\0b", 4);
	w_msg(&pod, 1, &meta);
	assert_int_equal(gs_decode_pod_pb(pod.b, pod.n, MAP_ANN, &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "pod: metadata.name holds a NUL byte");

	/* A node without a name; a taint of the wrong shape. */
	memset(&pod, 0, sizeof(pod));
	assert_int_equal(gs_decode_node_pb(pod.b, 0, &n, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "node: metadata.name is missing");
	assert_int_equal(n.gpus, -1);
	struct w node = {0}, nmeta = {0}, nspec = {0};
	w_str(&nmeta, 1, "node1");
	w_int(&nspec, 5, 1);
	w_msg(&node, 1, &nmeta);
	w_msg(&node, 2, &nspec);
	assert_int_equal(gs_decode_node_pb(node.b, node.n, &n, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "node node1: spec.taints has wire type varint, not length-delimited");

	/* Envelopes: no magic; a contentEncoding; a list that is a Status. */
	const uint8_t *raw;
	size_t raw_len;
	char kind[32];
	assert_int_equal(
		gs_decode_unwrap_pb("{\"kind\":\"Pod\"}", 14, &raw, &raw_len, kind, sizeof(kind), err, sizeof(err)),
		-EINVAL);
	assert_string_equal(err, "object: not a Kubernetes protobuf object (no \"k8s\\0\" prefix)");
	struct w env = {0};
	memcpy(env.b, "k8s", 4);
	env.n = 4;
	w_str(&env, 3, "gzip");
	assert_int_equal(gs_decode_unwrap_pb(env.b, env.n, &raw, &raw_len, kind, sizeof(kind), err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "object: content encoding \"gzip\" is not supported");

	/* Watch events: unknown type, no type, an ADDED without an object. */
	struct gs_decode_event ev;
	struct w we = {0};
	w_str(&we, 1, "RENAMED");
	assert_int_equal(gs_decode_watch_event_pb(we.b, we.n, GS_OBJ_POD, MAP_ANN, &ev, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "watch event: unknown event type \"RENAMED\"");
	assert_int_equal(gs_decode_watch_event_pb(we.b, 0, GS_OBJ_POD, MAP_ANN, &ev, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "watch event: no type");
	memset(&we, 0, sizeof(we));
	w_str(&we, 1, "ADDED");
	assert_int_equal(gs_decode_watch_event_pb(we.b, we.n, GS_OBJ_POD, MAP_ANN, &ev, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "watch event: ADDED event without an object");
	/* An ERROR event whose Status code is no HTTP code. */
	struct w st = {0}, env2 = {0}, rawext = {0}, tm = {0};
	w_int(&st, 6, 5000);
	memcpy(env2.b, "k8s", 4);
	env2.n = 4;
	w_str(&tm, 2, "Status");
	w_msg(&env2, 1, &tm);
	w_msg(&env2, 2, &st);
	w_msg(&rawext, 1, &env2);
	memset(&we, 0, sizeof(we));
	w_str(&we, 1, "ERROR");
	w_msg(&we, 2, &rawext);
	assert_int_equal(gs_decode_watch_event_pb(we.b, we.n, GS_OBJ_POD, MAP_ANN, &ev, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "watch event: status code is not an HTTP code");

	assert_true(gs_decode_is_protobuf("application/vnd.kubernetes.protobuf"));
	assert_true(gs_decode_is_protobuf("application/vnd.kubernetes.protobuf;stream=watch"));
	assert_true(gs_decode_is_protobuf("Application/VND.Kubernetes.Protobuf; stream=watch"));
	assert_false(gs_decode_is_protobuf("application/json"));
	assert_false(gs_decode_is_protobuf("application/vnd.kubernetes.protobuf-x"));
	assert_false(gs_decode_is_protobuf(""));
	assert_false(gs_decode_is_protobuf(NULL));
}

static int dir_present(const char *dir)
{
	char path[256];
	FILE *f;
	snprintf(path, sizeof(path), "%spod-full-3.json", dir);
	if (!(f = fopen(path, "rb")))
		return 0;
	fclose(f);
	return 1;
}

/* Runs one group on every fixture directory present; at least one must be. */
static void each_dir(void (*fn)(void))
{
	int n = 0;
	for (size_t i = 0; i < sizeof(pair_dirs) / sizeof(pair_dirs[0]); i++) {
		if (!dir_present(pair_dirs[i]))
			continue;
		REC = pair_dirs[i];
		print_message("  fixtures: %s\n", REC);
		fn();
		n++;
	}
	if (n == 0)
		fail_msg("no paired fixtures (tests/fixtures/recorded or tests/fixtures/k8s-serializers)");
}

static void test_pods_both_encodings(void **state)
{
	(void)state;
	each_dir(pairs_pods_both_encodings_in);
}

static void test_nodes_both_encodings(void **state)
{
	(void)state;
	each_dir(pairs_nodes_both_encodings_in);
}

static void test_lists_both_encodings(void **state)
{
	(void)state;
	each_dir(pairs_lists_both_encodings_in);
}

static void test_watch_both_encodings(void **state)
{
	(void)state;
	each_dir(pairs_watch_both_encodings_in);
}

static void test_status_both_encodings(void **state)
{
	(void)state;
	status_dirs = 0;
	each_dir(pairs_status_both_encodings_in);
	assert_true(status_dirs > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pods_both_encodings),
		cmocka_unit_test(test_nodes_both_encodings),
		cmocka_unit_test(test_lists_both_encodings),
		cmocka_unit_test(test_watch_both_encodings),
		cmocka_unit_test(test_status_both_encodings),
		cmocka_unit_test(test_shapes_1_37),
		cmocka_unit_test(test_gates_hand_built),
		cmocka_unit_test(test_hostile_hand_built),
		cmocka_unit_test(test_hint_bound_partial),
		cmocka_unit_test(test_two_controllers_both_encodings),
		cmocka_unit_test(test_gang_annotations_both_encodings),
		cmocka_unit_test(test_json_fixtures_as_protobuf),
		cmocka_unit_test(test_parity_rules_both_encodings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
