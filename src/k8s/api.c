#include "k8s/api.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "k8s/decode.h"
#include "k8s/decode_gpm.h"
#include "sched/checks.h"
#include "sched/gang.h"

/* Names and messages come from users: every request body is a bounded JSON document. */
#define GS_API_BODY_MAX (64 * 1024)

enum gs_api_result gs_api_classify(int err, const struct gs_http_response *resp)
{
	if (err || !resp)
		return GS_API_RETRY;
	if (resp->status >= 200 && resp->status < 300)
		return GS_API_OK;
	if (resp->status == 404 || resp->status == 409)
		return GS_API_GONE;
	if (resp->status == 429 || resp->status >= 500)
		return GS_API_RETRY;
	return GS_API_REJECTED;
}

int gs_api_bind_already_on(const struct gs_http_response *resp, const char *node)
{
	static const char said[] = "is already assigned to node \"";
	char *reason = NULL, *message = NULL;
	const char *at;
	size_t n = strlen(node);
	int code = 0, yes = 0;

	if (!resp || resp->status != 409 || !resp->body || n == 0)
		return 0;
	gs_decode_status(resp->body, resp->body_len, &code, &reason, &message);
	if (message && (at = strstr(message, said)) != NULL) {
		at += sizeof(said) - 1;
		/* The name, its closing quote, and nothing after: Go's %q of a DNS subdomain needs no escapes. */
		yes = strncmp(at, node, n) == 0 && at[n] == '"' && at[n + 1] == '\0';
	}
	free(reason);
	free(message);
	return yes;
}

void gs_api_time(int64_t ms, char *out, size_t outlen)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, outlen, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int pod_path(char *out, size_t outlen, const struct gs_api_pod_ref *pod, const char *sub)
{
	/* Namespaces and pod names are DNS labels/subdomains: no escaping needed, but refuse anything else. */
	for (const char *s = pod->ns; *s; s++)
		if (*s == '/' || *s == '?' || *s == '%' || *s == '#')
			return -EINVAL;
	for (const char *s = pod->name; *s; s++)
		if (*s == '/' || *s == '?' || *s == '%' || *s == '#')
			return -EINVAL;
	int n = snprintf(out, outlen, "/api/v1/namespaces/%s/pods/%s%s", pod->ns, pod->name, sub);
	return n < 0 || (size_t)n >= outlen ? -E2BIG : 0;
}

static int api_send(struct gs_kube *k, const char *method, const char *path, struct gs_buf *body,
		    const char *content_type, enum gs_kube_prio prio, gs_kube_done_cb done, void *ud)
{
	return gs_kube_request(k, method, path, body->data, content_type, prio, 0, done, ud);
}

int gs_api_bind(struct gs_kube *k, const struct gs_api_pod_ref *pod, const char *node, const char *devices,
		int (*may_send)(void *ud), gs_kube_done_cb done, void *ud)
{
	char path[768], assigned[512];
	struct gs_buf b;
	int r;

	if ((r = pod_path(path, sizeof(path), pod, "/binding")) < 0)
		return r;
	snprintf(assigned, sizeof(assigned), "%s:%s", node, devices);
	gs_buf_init(&b, GS_API_BODY_MAX);
	r = gs_buf_append_str(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":");
	r = r ? r : gs_buf_append_json_str(&b, pod->name);
	r = r ? r : gs_buf_append_str(&b, ",\"namespace\":");
	r = r ? r : gs_buf_append_json_str(&b, pod->ns);
	r = r ? r : gs_buf_append_str(&b, ",\"uid\":");
	r = r ? r : gs_buf_append_json_str(&b, pod->uid);
	r = r ? r : gs_buf_append_str(&b, ",\"annotations\":{\"" GS_ASSIGNED_ANNOTATION "\":");
	r = r ? r : gs_buf_append_json_str(&b, assigned);
	r = r ? r : gs_buf_append_str(&b, "}},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":");
	r = r ? r : gs_buf_append_json_str(&b, node);
	r = r ? r : gs_buf_append_str(&b, "}}");
	if (r == 0) {
		struct gs_kube_req req = {
			.method = "POST",
			.path = path,
			.body = b.data,
			.body_len = b.len,
			.prio = GS_KUBE_HIGH,
			.may_send = may_send,
		};
		r = gs_kube_send(k, &req, done, ud, NULL);
	}
	gs_buf_free(&b);
	return r;
}

const char *gs_api_version_of(const char *kind)
{
	static const char *const apps[] = {"StatefulSet", "ReplicaSet", "Deployment", "DaemonSet"};

	if (!kind)
		return "v1";
	for (size_t i = 0; i < sizeof(apps) / sizeof(apps[0]); i++)
		if (strcmp(kind, apps[i]) == 0)
			return "apps/v1";
	if (strcmp(kind, GS_GPM_KIND) == 0)
		return GS_GPM_GROUP "/" GS_GPM_VERSION;
	return strcmp(kind, "Job") == 0 ? "batch/v1" : "v1";
}

int gs_api_event(struct gs_kube *k, const struct gs_api_pod_ref *pod, enum gs_event_type type, const char *reason,
		 const char *message, const char *component, int64_t now_ms, gs_kube_done_cb done, void *ud)
{
	char path[512], ts[40], gen[300];
	struct gs_buf b;
	int r;

	if (snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events", pod->ns) >= (int)sizeof(path))
		return -E2BIG;
	gs_api_time(now_ms, ts, sizeof(ts));
	snprintf(gen, sizeof(gen), "%s.", pod->name);
	gs_buf_init(&b, GS_API_BODY_MAX);
	r = gs_buf_append_str(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"generateName\":");
	r = r ? r : gs_buf_append_json_str(&b, gen);
	r = r ? r : gs_buf_append_str(&b, ",\"namespace\":");
	r = r ? r : gs_buf_append_json_str(&b, pod->ns);
	r = r ? r : gs_buf_append_str(&b, "},\"involvedObject\":{\"apiVersion\":");
	r = r ? r : gs_buf_append_json_str(&b, gs_api_version_of(pod->kind));
	r = r ? r : gs_buf_append_str(&b, ",\"kind\":");
	r = r ? r : gs_buf_append_json_str(&b, pod->kind ? pod->kind : "Pod");
	r = r ? r : gs_buf_append_str(&b, ",\"namespace\":");
	r = r ? r : gs_buf_append_json_str(&b, pod->ns);
	r = r ? r : gs_buf_append_str(&b, ",\"name\":");
	r = r ? r : gs_buf_append_json_str(&b, pod->name);
	r = r ? r : gs_buf_append_str(&b, ",\"uid\":");
	r = r ? r : gs_buf_append_json_str(&b, pod->uid);
	r = r ? r : gs_buf_append_str(&b, "},\"reason\":");
	r = r ? r : gs_buf_append_json_str(&b, reason);
	r = r ? r : gs_buf_append_str(&b, ",\"message\":");
	r = r ? r : gs_buf_append_json_str(&b, message);
	r = r ? r
	      : gs_buf_printf(&b,
			      ",\"type\":\"%s\",\"count\":1,\"firstTimestamp\":\"%s\",\"lastTimestamp\":\"%s\","
			      "\"source\":{\"component\":",
			      type == GS_EVENT_WARNING ? "Warning" : "Normal", ts, ts);
	r = r ? r : gs_buf_append_json_str(&b, component);
	r = r ? r : gs_buf_append_str(&b, "},\"reportingComponent\":");
	r = r ? r : gs_buf_append_json_str(&b, component);
	r = r ? r : gs_buf_append_str(&b, "}");
	if (r == 0)
		r = api_send(k, "POST", path, &b, NULL, GS_KUBE_LOW, done, ud);
	gs_buf_free(&b);
	return r;
}

/* "limits":{...} of a placeholder: its extended resources (hugepages-* among them) again, as the
 * apiserver requires of resources it cannot overcommit (limits set, equal to requests); cpu, memory
 * and ephemeral-storage stay requests only. */
static int ph_limits(struct gs_buf *b, const struct gs_placeholder *ph)
{
	int r = 0;

	if (!ph->n_ext)
		return 0;
	r |= gs_buf_append_str(b, ",\"limits\":{");
	for (size_t i = 0; i < ph->n_ext; i++) {
		r |= gs_buf_printf(b, "%s", i ? "," : "");
		r |= gs_buf_append_json_str(b, ph->ext_name[i]);
		r |= gs_buf_printf(b, ":\"%lld\"", (long long)ph->ext_value[i]);
	}
	return r | gs_buf_append_str(b, "}");
}

/* "requests":{...} of a placeholder: what its member asks of the node. */
static int ph_requests(struct gs_buf *b, const struct gs_placeholder *ph)
{
	int r = gs_buf_append_str(b, "\"requests\":{");
	const char *sep = "";

	if (ph->cpu_milli > 0) {
		r |= gs_buf_printf(b, "\"cpu\":\"%lldm\"", (long long)ph->cpu_milli);
		sep = ",";
	}
	if (ph->memory > 0) {
		r |= gs_buf_printf(b, "%s\"memory\":\"%lld\"", sep, (long long)ph->memory);
		sep = ",";
	}
	if (ph->ephemeral > 0) {
		r |= gs_buf_printf(b, "%s\"ephemeral-storage\":\"%lld\"", sep, (long long)ph->ephemeral);
		sep = ",";
	}
	for (size_t i = 0; i < ph->n_ext; i++) {
		r |= gs_buf_printf(b, "%s", sep);
		r |= gs_buf_append_json_str(b, ph->ext_name[i]);
		r |= gs_buf_printf(b, ":\"%lld\"", (long long)ph->ext_value[i]);
		sep = ",";
	}
	return r | gs_buf_append_str(b, "}");
}

static int ph_tolerations(struct gs_buf *b, const struct gs_placeholder *ph)
{
	int r = gs_buf_append_str(b, ",\"tolerations\":[");

	for (int i = 0; i < ph->n_tolerations; i++) {
		const struct gs_toleration *t = &ph->tolerations[i];
		r |= gs_buf_printf(b, "%s{\"operator\":\"%s\"", i ? "," : "", t->exists ? "Exists" : "Equal");
		if (t->key && *t->key) {
			r |= gs_buf_append_str(b, ",\"key\":");
			r |= gs_buf_append_json_str(b, t->key);
		}
		if (!t->exists && t->value) {
			r |= gs_buf_append_str(b, ",\"value\":");
			r |= gs_buf_append_json_str(b, t->value);
		}
		if (t->effect != GS_EFFECT_ALL)
			r |= gs_buf_printf(b, ",\"effect\":\"%s\"", gs_taint_effect_name(t->effect));
		if (t->seconds >= 0)
			r |= gs_buf_printf(b, ",\"tolerationSeconds\":%lld", (long long)t->seconds);
		r |= gs_buf_append_str(b, "}");
	}
	return r | gs_buf_append_str(b, "]");
}

int gs_api_placeholder_create(struct gs_kube *k, const struct gs_placeholder *ph, const char *image,
			      const char *scheduler_name, gs_kube_done_cb done, void *ud)
{
	char path[512];
	struct gs_buf b;
	int r;

	if (snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ph->ns) >= (int)sizeof(path) ||
	    strpbrk(ph->ns, "/?%#"))
		return -EINVAL;
	gs_buf_init(&b, GS_API_BODY_MAX);
	r = gs_buf_append_str(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":");
	r |= gs_buf_append_json_str(&b, ph->name);
	r |= gs_buf_append_str(&b, ",\"namespace\":");
	r |= gs_buf_append_json_str(&b, ph->ns);
	r |= gs_buf_append_str(
		&b,
		",\"labels\":{\"gpu-scheduler.io/placeholder\":\"true\"},\"annotations\":{\"" GS_GANG_PLACEHOLDER_FOR
		"\":");
	r |= gs_buf_append_json_str(&b, ph->member_uid);
	r |= gs_buf_append_str(&b, "},\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":");
	r |= gs_buf_append_json_str(&b, ph->member_name);
	r |= gs_buf_append_str(&b, ",\"uid\":");
	r |= gs_buf_append_json_str(&b, ph->member_uid);
	r |= gs_buf_append_str(&b, ",\"controller\":true}]},\"spec\":{\"nodeName\":");
	r |= gs_buf_append_json_str(&b, ph->node);
	r |= gs_buf_append_str(&b, ",\"schedulerName\":");
	r |= gs_buf_append_json_str(&b, scheduler_name);
	r |= gs_buf_append_str(&b, ",\"terminationGracePeriodSeconds\":0,\"automountServiceAccountToken\":false,"
				   "\"enableServiceLinks\":false");
	r |= ph_tolerations(&b, ph);
	r |= gs_buf_append_str(&b, ",\"containers\":[{\"name\":\"hold\",\"image\":");
	r |= gs_buf_append_json_str(&b, image);
	r |= gs_buf_append_str(&b, ",\"resources\":{");
	r |= ph_requests(&b, ph);
	r |= ph_limits(&b, ph);
	r |= gs_buf_append_str(&b, "}}]}}");
	if (r == 0)
		r = api_send(k, "POST", path, &b, NULL, GS_KUBE_LOW, done, ud);
	else
		r = -E2BIG;
	gs_buf_free(&b);
	return r;
}

int gs_api_placeholder_delete(struct gs_kube *k, const char *ns, const char *name, const char *uid,
			      enum gs_kube_prio prio, gs_kube_done_cb done, void *ud)
{
	struct gs_api_pod_ref pod = {.ns = ns, .name = name};
	char path[768];
	struct gs_buf b;
	int r;

	if ((r = pod_path(path, sizeof(path), &pod, "")) < 0)
		return r;
	gs_buf_init(&b, GS_API_BODY_MAX);
	r = gs_buf_append_str(&b, "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\",\"gracePeriodSeconds\":0");
	if (uid) {
		r = r ? r : gs_buf_append_str(&b, ",\"preconditions\":{\"uid\":");
		r = r ? r : gs_buf_append_json_str(&b, uid);
		r = r ? r : gs_buf_append_str(&b, "}");
	}
	r = r ? r : gs_buf_append_str(&b, "}");
	if (r == 0)
		r = api_send(k, "DELETE", path, &b, NULL, prio, done, ud);
	gs_buf_free(&b);
	return r;
}

/*
 * A strategic merge patch of the pod's status, its uid in the body (a re-created pod of the name is
 * refused, never patched): {"metadata":{"uid":UID},"status":{"conditions":[{"type":TYPE,"status":
 * STATUS,"reason":REASON,"lastProbeTime":null,"lastTransitionTime":TS,"message":MESSAGE}]}} with a
 * condition (type not NULL), else {"metadata":{"uid":UID},"status":{"nominatedNodeName":NODE}} (message
 * is the node).
 */
static int pod_status_patch(struct gs_kube *k, const struct gs_api_pod_ref *pod, const char *type, const char *status,
			    const char *reason, const char *message, int64_t now_ms, gs_kube_done_cb done, void *ud)
{
	char path[768], ts[40];
	struct gs_buf b;
	int r;

	if ((r = pod_path(path, sizeof(path), pod, "/status")) < 0)
		return r;
	gs_api_time(now_ms, ts, sizeof(ts));
	gs_buf_init(&b, GS_API_BODY_MAX);
	r = gs_buf_append_str(&b, "{\"metadata\":{\"uid\":");
	r = r ? r : gs_buf_append_json_str(&b, pod->uid);
	if (!type)
		r = r ? r : gs_buf_append_str(&b, "},\"status\":{\"nominatedNodeName\":");
	else
		r = r ? r
		      : gs_buf_printf(&b,
				      "},\"status\":{\"conditions\":[{\"type\":\"%s\",\"status\":\"%s\","
				      "\"reason\":\"%s\",\"lastProbeTime\":null,\"lastTransitionTime\":\"%s\","
				      "\"message\":",
				      type, status, reason, ts);
	r = r ? r : gs_buf_append_json_str(&b, message);
	r = r ? r : gs_buf_append_str(&b, type ? "}]}}" : "}}");
	if (r == 0)
		r = api_send(k, "PATCH", path, &b, "application/strategic-merge-patch+json", GS_KUBE_LOW, done, ud);
	gs_buf_free(&b);
	return r;
}

int gs_api_unschedulable(struct gs_kube *k, const struct gs_api_pod_ref *pod, const char *message, int64_t now_ms,
			 gs_kube_done_cb done, void *ud)
{
	return pod_status_patch(k, pod, "PodScheduled", "False", "Unschedulable", message, now_ms, done, ud);
}

int gs_api_disruption_target(struct gs_kube *k, const struct gs_api_pod_ref *pod, const char *message, int64_t now_ms,
			     gs_kube_done_cb done, void *ud)
{
	return pod_status_patch(k, pod, "DisruptionTarget", "True", "PreemptionByScheduler", message, now_ms, done, ud);
}

int gs_api_nominate(struct gs_kube *k, const struct gs_api_pod_ref *pod, const char *node, gs_kube_done_cb done,
		    void *ud)
{
	return pod_status_patch(k, pod, NULL, NULL, NULL, node, 0, done, ud);
}

int gs_api_delete_pod(struct gs_kube *k, const struct gs_api_pod_ref *pod, gs_kube_done_cb done, void *ud)
{
	char path[768];
	struct gs_buf b;
	int r;

	if ((r = pod_path(path, sizeof(path), pod, "")) < 0)
		return r;
	gs_buf_init(&b, GS_API_BODY_MAX);
	r = gs_buf_append_str(&b, "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\",\"preconditions\":{\"uid\":");
	r = r ? r : gs_buf_append_json_str(&b, pod->uid);
	r = r ? r : gs_buf_append_str(&b, "}}");
	if (r == 0)
		r = api_send(k, "DELETE", path, &b, NULL, GS_KUBE_LOW, done, ud);
	gs_buf_free(&b);
	return r;
}

/* ---- GPUPlacementMap status -------------------------------------------------------------------- */

/* The schema's cap on messages (characters; bytes here, cut where no UTF-8 sequence is split). */
#define GS_API_GPM_MESSAGE_MAX 1000

static int append_capped(struct gs_buf *b, const char *s)
{
	char cut[GS_API_GPM_MESSAGE_MAX + 1];
	size_t n = strlen(s);

	if (n <= GS_API_GPM_MESSAGE_MAX)
		return gs_buf_append_json_str(b, s);
	n = GS_API_GPM_MESSAGE_MAX;
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--; /* s[n] continues a sequence: cut before the sequence starts */
	memcpy(cut, s, n);
	cut[n] = '\0';
	return gs_buf_append_json_str(b, cut);
}

/* The reason most waiting pods give (the first of equals, in the enum's order); NONE when none waits. */
static enum gs_wait_reason gpm_top_reason(const struct gs_gpm_status *st)
{
	enum gs_wait_reason top = GS_WAIT_NONE;
	for (int w = GS_WAIT_NONE + 1; w < GS_WAIT__COUNT; w++)
		if (st->waiting_by[w] > (top == GS_WAIT_NONE ? 0 : st->waiting_by[top]))
			top = (enum gs_wait_reason)w;
	return top;
}

/* "reasons":[...] and, when a pod waits, "topReason" and "oldestWaiting":{...} (absent is removed: the
 * patch replaces the status whole). */
static int gpm_waiting_json(const struct gs_gpm_status *st, struct gs_buf *b)
{
	enum gs_wait_reason top = gpm_top_reason(st);
	const char *sep = "";
	int r = gs_buf_append_str(b, ",\"reasons\":[");

	for (int w = GS_WAIT_NONE + 1; r == 0 && w < GS_WAIT__COUNT; w++) {
		if (!st->waiting_by[w])
			continue;
		r = gs_buf_printf(b, "%s{\"reason\":\"%s\",\"count\":%zu}", sep,
				  gs_wait_reason_name((enum gs_wait_reason)w), st->waiting_by[w]);
		sep = ",";
	}
	r = r ? r : gs_buf_append_str(b, "]");
	if (top != GS_WAIT_NONE)
		r = r ? r : gs_buf_printf(b, ",\"topReason\":\"%s\"", gs_wait_reason_name(top));
	if (st->oldest_index < 0 || !st->oldest_name)
		return r;
	r = r ? r : gs_buf_printf(b, ",\"oldestWaiting\":{\"index\":%ld,\"pod\":", st->oldest_index);
	r = r ? r : gs_buf_append_json_str(b, st->oldest_name);
	r = r ? r : gs_buf_printf(b, ",\"reason\":\"%s\",\"message\":", gs_wait_reason_name(st->oldest_reason));
	r = r ? r : append_capped(b, st->oldest_message ? st->oldest_message : "");
	return r ? r : gs_buf_append_str(b, "}");
}

/* "conditions":[{Ready}] */
static int gpm_ready_json(const struct gs_gpm_status *st, int64_t transition_ms, struct gs_buf *b)
{
	enum gs_wait_reason top = gpm_top_reason(st);
	char ts[40], msg[GS_API_GPM_MESSAGE_MAX + 1];
	const char *reason;

	gs_api_time(transition_ms, ts, sizeof(ts));
	if (st->ready) {
		reason = "Placed";
		snprintf(msg, sizeof(msg), "every entry's pod is placed (%zu of %zu)", st->placed, st->entries);
	} else if (st->refused) {
		reason = "NotHeld";
		snprintf(msg, sizeof(msg), "%s", st->refused);
	} else if (st->map_error) {
		reason = "MapInvalid";
		snprintf(msg, sizeof(msg), "%s", st->map_error);
	} else if (st->waiting) {
		reason = "Waiting";
		snprintf(msg, sizeof(msg), "%zu of %zu entries placed, %zu pod(s) waiting (most for %s)", st->placed,
			 st->entries, st->waiting, gs_wait_reason_name(top));
	} else {
		reason = "Incomplete";
		snprintf(msg, sizeof(msg), "%zu of %zu entries placed; the other entries have no pod of ours yet",
			 st->placed, st->entries);
	}
	int r = gs_buf_printf(b,
			      ",\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\",\"reason\":\"%s\","
			      "\"lastTransitionTime\":\"%s\",\"observedGeneration\":%lld,\"message\":",
			      st->ready ? "True" : "False", reason, ts, (long long)st->observed_generation);
	r = r ? r : append_capped(b, msg);
	return r ? r : gs_buf_append_str(b, "}]");
}

int gs_api_gpm_status_body(const struct gs_gpm_status *st, int64_t transition_ms, struct gs_buf *b)
{
	int r;

	if (!st->uid || !*st->uid)
		return -EINVAL;
	r = gs_buf_append_str(b, "[{\"op\":\"test\",\"path\":\"/metadata/uid\",\"value\":");
	r = r ? r : gs_buf_append_json_str(b, st->uid);
	r = r ? r
	      : gs_buf_printf(b,
			      "},{\"op\":\"add\",\"path\":\"/status\",\"value\":{\"observedGeneration\":%lld,"
			      "\"entries\":%zu,\"placed\":%zu,\"waiting\":%zu",
			      (long long)st->observed_generation, st->entries, st->placed, st->waiting);
	r = r ? r : gpm_waiting_json(st, b);
	r = r ? r : gpm_ready_json(st, transition_ms, b);
	return r ? r : gs_buf_append_str(b, "}}]");
}

int gs_api_gpm_status(struct gs_kube *k, const struct gs_gpm_status *st, int64_t transition_ms,
		      int (*may_send)(void *ud), gs_kube_done_cb done, void *ud)
{
	struct gs_api_pod_ref ref = {.ns = st->ns, .name = st->name};
	char path[768];
	struct gs_buf b;
	int r;

	if ((r = pod_path(path, sizeof(path), &ref, "")) < 0) /* the same check of both names */
		return r;
	r = snprintf(path, sizeof(path), "/apis/gpu-scheduler.io/v1alpha1/namespaces/%s/gpuplacementmaps/%s/status",
		     st->ns, st->name);
	if (r < 0 || (size_t)r >= sizeof(path))
		return -E2BIG;
	gs_buf_init(&b, GS_API_BODY_MAX);
	r = gs_api_gpm_status_body(st, transition_ms, &b);
	if (r == 0) {
		struct gs_kube_req req = {
			.method = "PATCH",
			.path = path,
			.body = b.data,
			.body_len = b.len,
			.content_type = "application/json-patch+json",
			.prio = GS_KUBE_LOW,
			.may_send = may_send,
		};
		r = gs_kube_send(k, &req, done, ud, NULL);
	}
	gs_buf_free(&b);
	return r;
}

int gs_api_gpm_uid_mismatch(const struct gs_http_response *resp)
{
	static const char generic[] = "the server rejected our request due to an error in our request";
	char *reason = NULL, *message = NULL;
	int code = 0, yes;

	if (!resp || resp->status != 422 || !resp->body)
		return 0;
	gs_decode_status(resp->body, resp->body_len, &code, &reason, &message);
	yes = reason && strcmp(reason, "Invalid") == 0 && message && strcmp(message, generic) == 0;
	free(reason);
	free(message);
	return yes;
}
