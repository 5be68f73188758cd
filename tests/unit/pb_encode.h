/*
 * pb_encode.h: JSON (cJSON) -> Kubernetes protobuf, for tests only, so that the hand-written JSON
 * fixtures of tests/fixtures/json run through the protobuf decoders too.
 *
 * A schema table per message (the fields decode.c and decode_pb.c read, and a few more so that the
 * bytes look like the apiserver's): JSON key, field number, kind. Keys the schema does not know are
 * left out, JSON null is left out; a number where a string belongs becomes a varint (the wrong wire
 * type, as the JSON has the wrong type); any other wrong JSON type fails the encoding (the hostile JSON
 * cases belong to test_decode.c). The field numbers are the generated.proto ones; the recorded
 * pairs (tests/fixtures/recorded) check them against a real apiserver, this file only reuses them.
 */
#ifndef GS_TEST_PB_ENCODE_H
#define GS_TEST_PB_ENCODE_H

#include <stdint.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "k8s/decode.h"

enum pbe_kind {
	PBE_STR,      /* string */
	PBE_INT,      /* varint from a JSON number */
	PBE_BOOL,
	PBE_TIME,     /* metav1.Time {1 seconds, 2 nanos} from RFC 3339 */
	PBE_MAP_STR,  /* map<string,string> */
	PBE_MAP_QTY,  /* map<string,Quantity{1 string}> */
	PBE_STRS,     /* repeated string */
	PBE_MSG,      /* embedded message (sub) */
	PBE_MSGS,     /* repeated message (sub) */
	PBE_OPAQUE,   /* a message whose content is not read: an empty one */
};

struct pbe_field {
	const char *key;
	uint32_t num;
	enum pbe_kind kind;
	const struct pbe_field *sub;
};

#define PBE_END {NULL, 0, 0, NULL}

static const struct pbe_field pbe_owner[] = {
	{"apiVersion", 5, PBE_STR, NULL}, {"kind", 1, PBE_STR, NULL},       {"name", 3, PBE_STR, NULL},
	{"uid", 4, PBE_STR, NULL},        {"controller", 6, PBE_BOOL, NULL}, {"blockOwnerDeletion", 7, PBE_BOOL, NULL},
	PBE_END,
};
static const struct pbe_field pbe_meta[] = {
	{"name", 1, PBE_STR, NULL},
	{"generateName", 2, PBE_STR, NULL},
	{"namespace", 3, PBE_STR, NULL},
	{"uid", 5, PBE_STR, NULL},
	{"resourceVersion", 6, PBE_STR, NULL},
	{"generation", 7, PBE_INT, NULL},
	{"creationTimestamp", 8, PBE_TIME, NULL},
	{"deletionTimestamp", 9, PBE_TIME, NULL},
	{"labels", 11, PBE_MAP_STR, NULL},
	{"annotations", 12, PBE_MAP_STR, NULL},
	{"ownerReferences", 13, PBE_MSGS, pbe_owner},
	{"finalizers", 14, PBE_STRS, NULL},
	PBE_END,
};
static const struct pbe_field pbe_port[] = {
	{"name", 1, PBE_STR, NULL},     {"hostPort", 2, PBE_INT, NULL}, {"containerPort", 3, PBE_INT, NULL},
	{"protocol", 4, PBE_STR, NULL}, {"hostIP", 5, PBE_STR, NULL},   PBE_END,
};
static const struct pbe_field pbe_env[] = {
	{"name", 1, PBE_STR, NULL}, {"value", 2, PBE_STR, NULL}, {"valueFrom", 3, PBE_OPAQUE, NULL}, PBE_END,
};
static const struct pbe_field pbe_resreq[] = {
	{"limits", 1, PBE_MAP_QTY, NULL}, {"requests", 2, PBE_MAP_QTY, NULL}, PBE_END,
};
static const struct pbe_field pbe_container[] = {
	{"name", 1, PBE_STR, NULL},          {"image", 2, PBE_STR, NULL}, {"command", 3, PBE_STRS, NULL},
	{"args", 4, PBE_STRS, NULL},         {"ports", 6, PBE_MSGS, pbe_port}, {"env", 7, PBE_MSGS, pbe_env},
	{"resources", 8, PBE_MSG, pbe_resreq}, {"imagePullPolicy", 14, PBE_STR, NULL},
	{"restartPolicy", 24, PBE_STR, NULL}, /* 1.28+ */
	PBE_END,
};
static const struct pbe_field pbe_req[] = {
	{"key", 1, PBE_STR, NULL}, {"operator", 2, PBE_STR, NULL}, {"values", 3, PBE_STRS, NULL}, PBE_END,
};
static const struct pbe_field pbe_term[] = {
	{"matchExpressions", 1, PBE_MSGS, pbe_req}, {"matchFields", 2, PBE_MSGS, pbe_req}, PBE_END,
};
static const struct pbe_field pbe_nodesel[] = {{"nodeSelectorTerms", 1, PBE_MSGS, pbe_term}, PBE_END};
static const struct pbe_field pbe_nodeaff[] = {
	{"requiredDuringSchedulingIgnoredDuringExecution", 1, PBE_MSG, pbe_nodesel},
	{"preferredDuringSchedulingIgnoredDuringExecution", 2, PBE_OPAQUE, NULL},
	PBE_END,
};
static const struct pbe_field pbe_affinity[] = {
	{"nodeAffinity", 1, PBE_MSG, pbe_nodeaff}, {"podAffinity", 2, PBE_OPAQUE, NULL},
	{"podAntiAffinity", 3, PBE_OPAQUE, NULL}, PBE_END,
};
static const struct pbe_field pbe_toleration[] = {
	{"key", 1, PBE_STR, NULL},    {"operator", 2, PBE_STR, NULL},          {"value", 3, PBE_STR, NULL},
	{"effect", 4, PBE_STR, NULL}, {"tolerationSeconds", 5, PBE_INT, NULL}, PBE_END,
};
static const struct pbe_field pbe_gate[] = {{"name", 1, PBE_STR, NULL}, PBE_END};
/* Fields newer than 1.20: numbers of staging/src/k8s.io/api/core/v1/generated.proto as of 1.34 (see decode_pb.c). */
static const struct pbe_field pbe_podos[] = {{"name", 1, PBE_STR, NULL}, PBE_END};
static const struct pbe_field pbe_podspec[] = {
	{"initContainers", 20, PBE_MSGS, pbe_container},
	{"containers", 2, PBE_MSGS, pbe_container},
	{"restartPolicy", 3, PBE_STR, NULL},
	{"terminationGracePeriodSeconds", 4, PBE_INT, NULL},
	{"nodeSelector", 7, PBE_MAP_STR, NULL},
	{"serviceAccountName", 8, PBE_STR, NULL},
	{"nodeName", 10, PBE_STR, NULL},
	{"affinity", 18, PBE_MSG, pbe_affinity},
	{"schedulerName", 19, PBE_STR, NULL},
	{"tolerations", 22, PBE_MSGS, pbe_toleration},
	{"priorityClassName", 24, PBE_STR, NULL},
	{"priority", 25, PBE_INT, NULL},
	{"overhead", 32, PBE_MAP_QTY, NULL},
	{"os", 36, PBE_MSG, pbe_podos},
	{"schedulingGates", 38, PBE_MSGS, pbe_gate},
	{"resources", 40, PBE_MSG, pbe_resreq},
	PBE_END,
};
/* The states' content is not read: their presence is. */
static const struct pbe_field pbe_ctrstate[] = {
	{"waiting", 1, PBE_OPAQUE, NULL}, {"running", 2, PBE_OPAQUE, NULL}, {"terminated", 3, PBE_OPAQUE, NULL}, PBE_END,
};
static const struct pbe_field pbe_ctrstatus[] = {
	{"name", 1, PBE_STR, NULL},
	{"state", 2, PBE_MSG, pbe_ctrstate},
	{"lastState", 3, PBE_MSG, pbe_ctrstate},
	{"ready", 4, PBE_BOOL, NULL},
	{"restartCount", 5, PBE_INT, NULL},
	{"image", 6, PBE_STR, NULL},
	{"imageID", 7, PBE_STR, NULL},
	{"containerID", 8, PBE_STR, NULL},
	{"started", 9, PBE_BOOL, NULL},
	{"allocatedResources", 10, PBE_MAP_QTY, NULL}, /* 1.27+ */
	{"resources", 11, PBE_MSG, pbe_resreq},        /* 1.27+ */
	PBE_END,
};
static const struct pbe_field pbe_podcond[] = {
	{"type", 1, PBE_STR, NULL},
	{"status", 2, PBE_STR, NULL},
	{"lastProbeTime", 3, PBE_TIME, NULL},
	{"lastTransitionTime", 4, PBE_TIME, NULL},
	{"reason", 5, PBE_STR, NULL},
	{"message", 6, PBE_STR, NULL},
	PBE_END,
};
static const struct pbe_field pbe_podstatus[] = {
	{"phase", 1, PBE_STR, NULL},
	{"conditions", 2, PBE_MSGS, pbe_podcond},
	{"hostIP", 5, PBE_STR, NULL},
	{"startTime", 7, PBE_TIME, NULL},
	{"containerStatuses", 8, PBE_MSGS, pbe_ctrstatus},
	{"qosClass", 9, PBE_STR, NULL},
	{"initContainerStatuses", 10, PBE_MSGS, pbe_ctrstatus},
	{"nominatedNodeName", 11, PBE_STR, NULL},
	{"resize", 14, PBE_STR, NULL}, /* 1.27-1.32 */
	PBE_END,
};
static const struct pbe_field pbe_pod[] = {
	{"metadata", 1, PBE_MSG, pbe_meta}, {"spec", 2, PBE_MSG, pbe_podspec}, {"status", 3, PBE_MSG, pbe_podstatus},
	PBE_END,
};
static const struct pbe_field pbe_taint[] = {
	{"key", 1, PBE_STR, NULL}, {"value", 2, PBE_STR, NULL}, {"effect", 3, PBE_STR, NULL},
	{"timeAdded", 4, PBE_TIME, NULL}, PBE_END,
};
static const struct pbe_field pbe_nodespec[] = {
	{"podCIDR", 1, PBE_STR, NULL}, {"unschedulable", 4, PBE_BOOL, NULL}, {"taints", 5, PBE_MSGS, pbe_taint},
	PBE_END,
};
static const struct pbe_field pbe_nodecond[] = {
	{"type", 1, PBE_STR, NULL}, {"status", 2, PBE_STR, NULL}, {"lastHeartbeatTime", 3, PBE_TIME, NULL},
	{"reason", 5, PBE_STR, NULL}, {"message", 6, PBE_STR, NULL}, PBE_END,
};
static const struct pbe_field pbe_nodestatus[] = {
	{"capacity", 1, PBE_MAP_QTY, NULL}, {"allocatable", 2, PBE_MAP_QTY, NULL}, {"phase", 3, PBE_STR, NULL},
	{"conditions", 4, PBE_MSGS, pbe_nodecond}, PBE_END,
};
static const struct pbe_field pbe_node[] = {
	{"metadata", 1, PBE_MSG, pbe_meta}, {"spec", 2, PBE_MSG, pbe_nodespec}, {"status", 3, PBE_MSG, pbe_nodestatus},
	PBE_END,
};
static const struct pbe_field pbe_listmeta[] = {
	{"selfLink", 1, PBE_STR, NULL}, {"resourceVersion", 2, PBE_STR, NULL}, {"continue", 3, PBE_STR, NULL}, PBE_END,
};
static const struct pbe_field pbe_podlist[] = {
	{"metadata", 1, PBE_MSG, pbe_listmeta}, {"items", 2, PBE_MSGS, pbe_pod}, PBE_END,
};
static const struct pbe_field pbe_nodelist[] = {
	{"metadata", 1, PBE_MSG, pbe_listmeta}, {"items", 2, PBE_MSGS, pbe_node}, PBE_END,
};
static const struct pbe_field pbe_status[] = {
	{"metadata", 1, PBE_MSG, pbe_listmeta}, {"status", 2, PBE_STR, NULL}, {"message", 3, PBE_STR, NULL},
	{"reason", 4, PBE_STR, NULL}, {"code", 6, PBE_INT, NULL}, PBE_END,
};

/* The kubelet's PodResources v1 List reply (k8s/podresources.h has the .proto), with one field of a later
 * kubelet per level (topology, cpu_ids) that the decoder must skip. */
static const struct pbe_field pbe_pr_dev[] = {
	{"resource_name", 1, PBE_STR, NULL}, {"device_ids", 2, PBE_STRS, NULL}, {"topology", 3, PBE_OPAQUE, NULL},
	PBE_END,
};
static const struct pbe_field pbe_pr_ctr[] = {
	{"name", 1, PBE_STR, NULL}, {"devices", 2, PBE_MSGS, pbe_pr_dev}, {"cpu_ids", 3, PBE_INT, NULL}, PBE_END,
};
static const struct pbe_field pbe_pr_pod[] = {
	{"name", 1, PBE_STR, NULL}, {"namespace", 2, PBE_STR, NULL}, {"containers", 3, PBE_MSGS, pbe_pr_ctr}, PBE_END,
};
static const struct pbe_field pbe_pr_list[] = {{"pod_resources", 1, PBE_MSGS, pbe_pr_pod}, PBE_END};

static void pbe_varint(struct gs_buf *b, uint64_t v)
{
	uint8_t x[10];
	int n = 0;
	do {
		x[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	gs_buf_append(b, x, (size_t)n);
}

static void pbe_tag(struct gs_buf *b, uint32_t num, int wire)
{
	pbe_varint(b, (uint64_t)num << 3 | (uint64_t)wire);
}

static void pbe_bytes(struct gs_buf *b, uint32_t num, const void *p, size_t len)
{
	pbe_tag(b, num, 2);
	pbe_varint(b, len);
	gs_buf_append(b, p, len);
}

static int pbe_msg(struct gs_buf *b, const cJSON *obj, const struct pbe_field *schema);

/* The key whose value did not fit the schema, for the test's message. */
static const char *pbe_failed_key = "";

/* One embedded message as field num of b. */
static int pbe_sub(struct gs_buf *b, uint32_t num, const cJSON *obj, const struct pbe_field *schema)
{
	struct gs_buf m;
	int r;
	gs_buf_init(&m, 0);
	r = pbe_msg(&m, obj, schema);
	if (r == 0)
		pbe_bytes(b, num, m.data ? m.data : "", m.len);
	gs_buf_free(&m);
	return r;
}

/* A map entry {1 key, 2 value}; value as a string, or as a Quantity {1 string} when qty. */
static void pbe_entry(struct gs_buf *b, uint32_t num, const char *k, const char *v, int qty)
{
	struct gs_buf e, q;
	gs_buf_init(&e, 0);
	gs_buf_init(&q, 0);
	pbe_bytes(&e, 1, k, strlen(k));
	if (qty) {
		pbe_bytes(&q, 1, v, strlen(v));
		pbe_bytes(&e, 2, q.data ? q.data : "", q.len);
	} else {
		pbe_bytes(&e, 2, v, strlen(v));
	}
	pbe_bytes(b, num, e.data, e.len);
	gs_buf_free(&e);
	gs_buf_free(&q);
}

static int pbe_field_val(struct gs_buf *b, const struct pbe_field *f, const cJSON *v)
{
	const cJSON *x;
	int64_t ms;
	switch (f->kind) {
	case PBE_STR:
		if (cJSON_IsNumber(v)) {
			/* A number where a string belongs (a hostile fixture): the wrong wire type, as the
			 * JSON has the wrong type; both decoders must refuse it. */
			pbe_tag(b, f->num, 0);
			pbe_varint(b, (uint64_t)(int64_t)v->valuedouble);
			return 0;
		}
		if (!cJSON_IsString(v))
			return -1;
		pbe_bytes(b, f->num, v->valuestring, strlen(v->valuestring));
		return 0;
	case PBE_INT:
		if (!cJSON_IsNumber(v))
			return -1;
		pbe_tag(b, f->num, 0);
		pbe_varint(b, (uint64_t)(int64_t)v->valuedouble);
		return 0;
	case PBE_BOOL:
		if (!cJSON_IsBool(v))
			return -1;
		pbe_tag(b, f->num, 0);
		pbe_varint(b, cJSON_IsTrue(v));
		return 0;
	case PBE_TIME: {
		struct gs_buf t;
		if (!cJSON_IsString(v) || gs_decode_time(v->valuestring, &ms) < 0)
			return -1;
		gs_buf_init(&t, 0);
		pbe_tag(&t, 1, 0);
		pbe_varint(&t, (uint64_t)(ms / 1000));
		if (ms % 1000) { /* a hand-written fraction: JSON keeps the milliseconds, so must nanos */
			pbe_tag(&t, 2, 0);
			pbe_varint(&t, (uint64_t)(ms % 1000) * 1000000);
		}
		pbe_bytes(b, f->num, t.data, t.len);
		gs_buf_free(&t);
		return 0;
	}
	case PBE_MAP_STR:
	case PBE_MAP_QTY:
		if (!cJSON_IsObject(v))
			return -1;
		cJSON_ArrayForEach(x, v) {
			if (cJSON_IsNull(x))
				continue;
			if (!cJSON_IsString(x))
				return -1;
			pbe_entry(b, f->num, x->string, x->valuestring, f->kind == PBE_MAP_QTY);
		}
		return 0;
	case PBE_STRS:
		if (!cJSON_IsArray(v))
			return -1;
		cJSON_ArrayForEach(x, v) {
			if (!cJSON_IsString(x))
				return -1;
			pbe_bytes(b, f->num, x->valuestring, strlen(x->valuestring));
		}
		return 0;
	case PBE_MSG:
		return cJSON_IsObject(v) ? pbe_sub(b, f->num, v, f->sub) : -1;
	case PBE_MSGS:
		if (!cJSON_IsArray(v))
			return -1;
		cJSON_ArrayForEach(x, v)
			if (!cJSON_IsObject(x) || pbe_sub(b, f->num, x, f->sub) < 0)
				return -1;
		return 0;
	case PBE_OPAQUE:
		pbe_bytes(b, f->num, "", 0);
		return 0;
	}
	return -1;
}

/* The fields of obj in schema order (the order Go's code writes them in: by field number, mostly). */
static int pbe_msg(struct gs_buf *b, const cJSON *obj, const struct pbe_field *schema)
{
	for (const struct pbe_field *f = schema; f->key; f++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, f->key);
		if (!v || cJSON_IsNull(v))
			continue;
		if (pbe_field_val(b, f, v) < 0) {
			if (!pbe_failed_key[0])
				pbe_failed_key = f->key;
			return -1;
		}
	}
	return 0;
}

/* "k8s\0" + Unknown{1 typeMeta{1 apiVersion "v1", 2 kind}, 2 raw: obj}. */
__attribute__((unused)) static int pbe_envelope(struct gs_buf *b, const cJSON *obj, const struct pbe_field *schema, const char *kind)
{
	struct gs_buf tm, raw;
	int r;
	gs_buf_init(&tm, 0);
	gs_buf_init(&raw, 0);
	gs_buf_append(b, "k8s", 4);
	pbe_bytes(&tm, 1, "v1", 2);
	pbe_bytes(&tm, 2, kind, strlen(kind));
	pbe_bytes(b, 1, tm.data, tm.len);
	r = pbe_msg(&raw, obj, schema);
	pbe_bytes(b, 2, raw.data ? raw.data : "", raw.len);
	gs_buf_free(&tm);
	gs_buf_free(&raw);
	return r;
}

/* A watch line {"type", "object"} as a WatchEvent frame body (without its 4-byte length). */
__attribute__((unused)) static int pbe_watch_event(struct gs_buf *b, const cJSON *line, enum gs_obj_kind kind)
{
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(line, "type");
	const cJSON *obj = cJSON_GetObjectItemCaseSensitive(line, "object");
	struct gs_buf env, ext;
	int r = 0;
	if (!cJSON_IsString(type))
		return -1;
	pbe_bytes(b, 1, type->valuestring, strlen(type->valuestring));
	if (!cJSON_IsObject(obj))
		return 0;
	gs_buf_init(&env, 0);
	gs_buf_init(&ext, 0);
	if (strcmp(type->valuestring, "ERROR") == 0)
		r = pbe_envelope(&env, obj, pbe_status, "Status");
	else
		r = pbe_envelope(&env, obj, kind == GS_OBJ_POD ? pbe_pod : pbe_node, kind == GS_OBJ_POD ? "Pod" : "Node");
	pbe_bytes(&ext, 1, env.data, env.len);
	pbe_bytes(b, 2, ext.data, ext.len);
	gs_buf_free(&env);
	gs_buf_free(&ext);
	return r;
}

#endif
