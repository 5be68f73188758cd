/*
 * agent_run.c: the node agent's loop (agent_run.h). One libuv loop: the gRPC client to the kubelet,
 * the apiserver client (a watch of the node's pods, a GET of the Node at start, PATCHes), the health
 * server. Everything the annotation says is decided in build_and_publish(); the rest is plumbing.
 */
#include "k8s/agent_run.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <uv.h>

#include "core/alloc.h"
#include "core/backoff.h"
#include "core/closer.h"
#include "core/grpc.h"
#include "core/health.h"
#include "core/log.h"
#include "core/metrics.h"
#include "k8s/agent.h"
#include "k8s/agent_nvml.h"
#include "k8s/kube.h"
#include "k8s/watch.h"

#define KICK_DELAY_MS  200 /* a pod event -> a List this much later (events come in bursts) */
#define API_TIMEOUT_MS 15000
#define ERROR_TEXT_MAX 400 /* the error line's reason, cut here */

/* Why a List failed: the metric's reason label. */
enum kerr {
	KERR_SOCKET_MISSING, /* -ENOENT: no socket (kubelet not running, hostPath not mounted) */
	KERR_REFUSED,        /* -ECONNREFUSED: a socket file nobody listens on (kubelet restarting) */
	KERR_ACCESS,         /* -EACCES: not allowed to connect (the agent's user) */
	KERR_TIMEOUT,
	KERR_RESET,     /* the kubelet closed the connection before answering */
	KERR_STATUS,    /* a gRPC status other than OK */
	KERR_PROTOCOL,  /* not a gRPC answer, or over a cap */
	KERR_BAD_REPLY, /* an answer the decoder refused */
	KERR_OTHER,
	KERR_COUNT
};
static const char *const kerr_names[KERR_COUNT] = {
	"socket_missing", "refused", "access", "timeout", "reset", "status", "protocol", "bad_reply", "other",
};

struct agent {
	uv_loop_t loop;
	uv_timer_t tick, retry;
	uv_signal_t sigint, sigterm;
	struct gs_grpc_client *cl;
	struct gs_kube *kube;
	struct gs_watch *watch;
	struct gs_health *health;
	struct gs_metrics *metrics;
	struct gs_backoff backoff;
	const struct gs_agent_opts *o;
	char node_path[320];
	struct gs_closer closer; /* agent_stop: its handles, the watch, the servers, the kubelet client */
	int rc;

	/* the List loop */
	int started;          /* the Node was read: Lists run */
	int listing, again;   /* one List in flight, one more queued */
	int answering;        /* the last List was answered */
	uint64_t conns_seen;  /* the gRPC client's connections when the last answer came */
	int64_t settle_until; /* wall ms: the settle window ends */
	int64_t fail_since;   /* wall ms of the first failure of the current streak; 0: none */
	char fail_why[ERROR_TEXT_MAX + 1];
	char index_err[256];      /* the last index table problem logged */
	struct gs_agent_mig *mig; /* the MIG instances NVML gave (agent_nvml.h), read at mig_at */
	size_t n_mig;
	int64_t mig_at;    /* wall ms; 0: never */
	char mig_err[256]; /* the last NVML problem logged */

	/* what is published */
	struct gs_agent_devs base; /* the devices last published (or read at start): the settle base */
	char *published;           /* the annotation last written (or read at start); NULL: none */
	int64_t published_at;
	char *want;    /* the next text to write; NULL: nothing pending */
	char *sending; /* the text of the PATCH on its way */
	int patching;

	/* metrics */
	struct gs_counter lists_ok, lists_err, pubs_ok, pubs_err, conflicts;
	struct gs_counter kerr[KERR_COUNT];
	struct gs_gauge devices, index_gpus;
	int64_t last_ok_ms, start_ms;
};

/* agent_stop was called: what is in flight is being cancelled, nothing new starts. */
static int stopping(const struct agent *a)
{
	return gs_closer_closing(&a->closer);
}

static int64_t wall_ms(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static double m_since_list(void *ud)
{
	struct agent *a = ud;
	return (double)(wall_ms() - (a->last_ok_ms ? a->last_ok_ms : a->start_ms)) / 1000.0;
}

static void register_metrics(struct agent *a)
{
	struct gs_metrics *m = a->metrics = gs_metrics_new();
	static const char lists[] = "gpu_scheduler_agent_lists_total", lists_h[] = "PodResources List calls by result.";
	static const char pubs[] = "gpu_scheduler_agent_publishes_total",
			  pubs_h[] = "PATCHes of the node's devices-in-use annotation by result.";
	static char labels[KERR_COUNT][40];

	gs_metrics_process(m);
	gs_metrics_counter(m, lists, lists_h, "result=\"success\"", &a->lists_ok);
	gs_metrics_counter(m, lists, lists_h, "result=\"error\"", &a->lists_err);
	gs_metrics_counter(m, pubs, pubs_h, "result=\"success\"", &a->pubs_ok);
	gs_metrics_counter(m, pubs, pubs_h, "result=\"error\"", &a->pubs_err);
	gs_metrics_gauge(m, "gpu_scheduler_agent_devices_published",
			 "Device lines in the annotation last written (0 while it carries the error line).", NULL,
			 &a->devices);
	gs_metrics_gauge(m, "gpu_scheduler_agent_index_gpus",
			 "GPUs in the index table last written (0: no table, the driver directory missing).", NULL,
			 &a->index_gpus);
	gs_metrics_gauge_fn(m, "gpu_scheduler_agent_seconds_since_last_list",
			    "Seconds since the kubelet last answered a List (since the start when it never did).", NULL,
			    m_since_list, a);
	gs_metrics_counter(m, "gpu_scheduler_agent_device_conflicts_total",
			   "Device IDs the kubelet listed for two pods (the first kept, the other dropped).", NULL,
			   &a->conflicts);
	for (int i = 0; i < KERR_COUNT; i++) {
		snprintf(labels[i], sizeof labels[i], "reason=\"%s\"", kerr_names[i]);
		gs_metrics_counter(m, "gpu_scheduler_agent_kubelet_errors_total",
				   "Failed PodResources List calls by reason.", labels[i], &a->kerr[i]);
	}
}

/* ---- publishing ------------------------------------------------------------------------------------ */

static void patch_send(struct agent *a);
static void publish(struct agent *a, char *text, int64_t now);

/* The length of resp's body without its final newlines (one log line). */
static int body_len(const struct gs_http_response *resp)
{
	size_t n = resp->body ? strlen(resp->body) : 0;
	while (n && (resp->body[n - 1] == '\n' || resp->body[n - 1] == '\r'))
		n--;
	return n > 2000 ? 2000 : (int)n;
}

static void on_retry(uv_timer_t *t)
{
	struct agent *a = t->data;
	if (!stopping(a) && a->want)
		patch_send(a);
}

static void on_patched(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct agent *a = ud;
	struct gs_inuse *u = NULL;
	char why[256];

	a->patching = 0;
	if (err == -ECANCELED && stopping(a))
		return;
	if (err || resp->status / 100 != 2) {
		uint64_t delay = gs_backoff_next(&a->backoff);
		a->pubs_err.v++;
		gs_log_error("agent: node %s: PATCH of %s failed: %s%.*s (retrying in %llu ms)", a->o->node,
			     GS_INUSE_ANNOTATION, err ? "" : "HTTP error: ", err ? (int)strlen(msg) : body_len(resp),
			     err ? msg : resp->body, (unsigned long long)delay);
		if (a->want) /* a newer text came meanwhile: that one is retried */
			free(a->sending);
		else
			a->want = a->sending;
		a->sending = NULL;
		uv_timer_start(&a->retry, on_retry, delay, 0);
		return;
	}
	gs_backoff_reset(&a->backoff);
	a->pubs_ok.v++;
	free(a->published);
	a->published = a->sending;
	a->sending = NULL;
	if (gs_inuse_parse(a->published, strlen(a->published), &u, why, sizeof why) == 0) {
		a->published_at = u->at_ms;
		a->devices.v = (double)u->n_devs;
		a->index_gpus.v = (double)u->n_index;
		gs_inuse_free(u);
	}
	if (a->want) { /* came while this one was on its way: written if it still says something new */
		char *next = a->want;
		a->want = NULL;
		publish(a, next, wall_ms());
	}
}

/* Sends a->want (moved to a->sending). */
static void patch_send(struct agent *a)
{
	cJSON *j = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(j, "metadata"),
	      *ann = cJSON_AddObjectToObject(meta, "annotations");
	char *body;

	GS_ASSERT(a->want && !a->patching && !a->sending);
	if (!ann || !cJSON_AddStringToObject(ann, GS_INUSE_ANNOTATION, a->want) || !(body = cJSON_PrintUnformatted(j)))
		gs_oom(0);
	cJSON_Delete(j);
	a->sending = a->want;
	a->want = NULL;
	if (gs_kube_request(a->kube, "PATCH", a->node_path, body, "application/merge-patch+json", GS_KUBE_HIGH,
			    API_TIMEOUT_MS, on_patched, a) == 0)
		a->patching = 1;
	else /* only when closing */
		a->want = a->sending, a->sending = NULL;
	free(body);
}

/* text is the annotation to write (taken): written when its data differ or the heartbeat is due. */
static void publish(struct agent *a, char *text, int64_t now)
{
	if (a->patching || uv_is_active((uv_handle_t *)&a->retry)) {
		free(a->want); /* the newest text wins; it goes after the PATCH on its way or the retry */
		a->want = text;
		return;
	}
	if (a->published && gs_agent_same_data(a->published, text) &&
	    now - a->published_at < (int64_t)a->o->heartbeat_s * 1000) {
		free(text);
		return;
	}
	free(a->want);
	a->want = text;
	patch_send(a);
}

static const char **read_index(struct agent *a, size_t *n, struct gs_agent_gpu **gpus)
{
	char err[512] = "";
	int r = gs_agent_nvinfo_read(a->o->proc_dir, gpus, n, err, sizeof err);
	const char **ids;

	if (r < 0) {
		if (r != -ENOENT && strncmp(a->index_err, err, sizeof a->index_err - 1) != 0) {
			gs_log_warn("agent: no GPU index table: %s", err);
			snprintf(a->index_err, sizeof a->index_err, "%s", err);
		}
		*n = 0;
		return NULL;
	}
	a->index_err[0] = 0;
	ids = gs_xmalloc((*n ? *n : 1) * sizeof *ids);
	for (size_t i = 0; i < *n; i++)
		ids[i] = (*gpus)[i].uuid; /* read ordered them */
	return ids;
}

/* a->mig from NVML, at start and once a heartbeat (MIG instances change only when an administrator
 * reconfigures the GPU, which needs it idle); a problem is logged once, and leaves none. */
static void read_mig(struct agent *a, int64_t now)
{
	char err[256] = "";
	int r;

	if (!a->o->nvml_library || !*a->o->nvml_library ||
	    (a->mig_at && now - a->mig_at < (int64_t)a->o->heartbeat_s * 1000))
		return;
	a->mig_at = now;
	free(a->mig);
	if ((r = gs_agent_nvml_mig(a->o->nvml_library, &a->mig, &a->n_mig, err, sizeof err)) == 0) {
		a->mig_err[0] = 0;
		return;
	}
	if (strncmp(a->mig_err, err, sizeof a->mig_err - 1) != 0) {
		if (r == -ENOENT)
			gs_log_info("agent: no NVML (%s): MIG instances, if any, are not published", err);
		else
			gs_log_warn("agent: MIG instances not published: %s", err);
		snprintf(a->mig_err, sizeof a->mig_err, "%s", err);
	}
}

static int mig_cmp(const void *x, const void *y)
{
	return strcmp(((const struct gs_inuse_mig *)x)->id, ((const struct gs_inuse_mig *)y)->id);
}

/* The mig line's entries: each instance whose parent is a GPU of the table ids[0..n_ids), by ID. */
static struct gs_inuse_mig *mig_line(const struct agent *a, const char **ids, size_t n_ids, size_t *n)
{
	struct gs_inuse_mig *out = a->n_mig ? gs_xmalloc(a->n_mig * sizeof(*out)) : NULL;

	*n = 0;
	for (size_t k = 0; k < a->n_mig; k++)
		for (size_t i = 0; i < n_ids; i++)
			if (ids[i] && strcmp(ids[i], a->mig[k].parent) == 0)
				out[(*n)++] = (struct gs_inuse_mig){.id = a->mig[k].id, .parent = i};
	if (*n) /* qsort's base may not be NULL, even for none (out is without instances) */
		qsort(out, *n, sizeof(*out), mig_cmp);
	for (size_t k = 1; k < *n; k++)
		if (strcmp(out[k - 1].id, out[k].id) == 0) { /* one UUID twice: NVML is confused, say nothing */
			*n = 0;
			break;
		}
	return out;
}

/* The annotation for devs (NULL: the error line a->fail_why) as of now, then publish. */
static void build_and_publish(struct agent *a, const struct gs_agent_devs *devs, int64_t now)
{
	struct gs_agent_gpu *gpus = NULL;
	struct gs_inuse u = {.at_ms = now / 1000 * 1000};
	char err[256], why[ERROR_TEXT_MAX + 64];
	char *text;

	u.index = read_index(a, &u.n_index, &gpus);
	read_mig(a, now);
	u.mig = mig_line(a, u.index, u.n_index, &u.n_mig);
	if (devs) {
		u.devs = devs->devs;
		u.n_devs = devs->n;
	} else {
		snprintf(why, sizeof why, "no data from the kubelet: %s", a->fail_why);
		u.error = why;
	}
	text = gs_inuse_format(&u, err, sizeof err);
	if (!text) { /* over a limit: say so rather than publish a part */
		gs_log_error("agent: node %s: cannot publish: %s", a->o->node, err);
		snprintf(why, sizeof why, "the agent cannot publish the devices: %s", err);
		u.error = why;
		u.n_devs = 0;
		text = gs_inuse_format(&u, err, sizeof err);
		GS_ASSERT(text);
	}
	free(u.index);
	free(u.mig);
	free(gpus);
	publish(a, text, now);
}

/* ---- the List loop ------------------------------------------------------------------------------- */

static void list_start(struct agent *a);

static void on_tick(uv_timer_t *t)
{
	list_start(t->data);
}

static void kick(struct agent *a)
{
	if (!a->started || stopping(a))
		return;
	if (a->listing) {
		a->again = 1;
		return;
	}
	if (uv_timer_get_due_in(&a->tick) > KICK_DELAY_MS || !uv_is_active((uv_handle_t *)&a->tick))
		uv_timer_start(&a->tick, on_tick, KICK_DELAY_MS, 0);
}

static enum kerr classify(int err)
{
	switch (err) {
	case -ENOENT:
		return KERR_SOCKET_MISSING;
	case -ECONNREFUSED:
		return KERR_REFUSED;
	case -EACCES:
		return KERR_ACCESS;
	case -ETIMEDOUT:
		return KERR_TIMEOUT;
	case -ECONNRESET:
		return KERR_RESET;
	case GS_GRPC_ESTATUS:
		return KERR_STATUS;
	case -EPROTO:
	case -E2BIG:
		return KERR_PROTOCOL;
	default:
		return KERR_OTHER;
	}
}

static void on_conflict(const struct gs_podres_dev *kept, const struct gs_podres_dev *dropped, void *ud)
{
	struct agent *a = ud;
	gs_log_warn("agent: node %s: %s %s is listed for %s/%s and %s/%s: publishing the first", a->o->node,
		    kept->resource, kept->id, kept->ns, kept->pod, dropped->ns, dropped->pod);
}

static void answered(struct agent *a, const struct gs_podres_list *l, int64_t now)
{
	struct gs_agent_devs now_devs = {0}, merged = {0};
	struct gs_grpc_client_stats st;
	size_t conflicts;

	gs_grpc_client_stats(a->cl, &st);
	if (!a->answering || st.conns != a->conns_seen) {
		/* a (re)connection: the kubelet's first answers may omit what its checkpoint restores */
		a->settle_until = now + (int64_t)a->o->settle_s * 1000;
		gs_log_info("agent: %s: answering%s (%zu devices held by %zu pods); publishing what was published "
			    "too for %u s",
			    a->o->socket, a->fail_since ? " again" : "", l->n, l->pods, a->o->settle_s);
	}
	a->answering = 1;
	a->conns_seen = st.conns;
	a->fail_since = 0;
	a->last_ok_ms = now;
	gs_agent_collect(l, a->o->resources, &now_devs, &conflicts, on_conflict, a);
	a->conflicts.v += conflicts;
	if (now < a->settle_until) {
		gs_agent_union(&a->base, &now_devs, &merged);
		gs_agent_devs_free(&now_devs);
		now_devs = merged;
	}
	gs_agent_devs_free(&a->base);
	a->base = now_devs;
	build_and_publish(a, &a->base, now);
}

static void failed(struct agent *a, enum kerr why, const char *msg, int64_t now)
{
	a->kerr[why].v++;
	if (a->answering || !a->fail_since) {
		gs_log_error("agent: %s (%s); retrying every %u ms, the annotation says so after %u ms", msg,
			     kerr_names[why], a->o->interval_ms, a->o->interval_ms);
		a->fail_since = now;
	}
	a->answering = 0;
	snprintf(a->fail_why, sizeof a->fail_why, "%s", msg);
	for (char *p = a->fail_why; *p; p++) /* the annotation is printable ASCII */
		if (*p < ' ' || *p > '~')
			*p = '?';
	if (now - a->fail_since >= (int64_t)a->o->interval_ms)
		build_and_publish(a, NULL, now);
}

static void on_listed(int err, const struct gs_grpc_reply *r, void *ud)
{
	struct agent *a = ud;
	struct gs_podres_list l;
	char why[512];
	int64_t now = wall_ms();

	a->listing = 0;
	if (err == -ECANCELED && stopping(a))
		return;
	if (err == 0 && gs_podres_list_decode(r->msg, r->len, &l, why, sizeof why) == 0) {
		a->lists_ok.v++;
		answered(a, &l, now);
		gs_podres_list_free(&l);
	} else {
		a->lists_err.v++;
		if (err == 0) {
			char msg[600];
			snprintf(msg, sizeof msg, "%s: a List answer the agent cannot read: %s", a->o->socket, why);
			failed(a, KERR_BAD_REPLY, msg, now);
		} else {
			failed(a, classify(err), r->error, now);
		}
	}
	if (stopping(a))
		return;
	if (a->again) {
		a->again = 0;
		uv_timer_start(&a->tick, on_tick, KICK_DELAY_MS, 0);
	} else {
		uv_timer_start(&a->tick, on_tick, a->o->interval_ms, 0);
	}
}

static void list_start(struct agent *a)
{
	if (a->listing || stopping(a))
		return;
	uv_timer_stop(&a->tick);
	if (gs_grpc_call(a->cl, GS_PODRES_LIST_METHOD, NULL, 0, a->o->timeout_ms, on_listed, a) == 0)
		a->listing = 1;
}

/* ---- the node's pods, and the Node at start ------------------------------------------------------ */

static void pod_upsert(struct gs_watch *w, enum gs_obj_kind kind, const void *obj, void *ud)
{
	kick(ud);
}

static void pod_remove(struct gs_watch *w, enum gs_obj_kind kind, const char *key, void *ud)
{
	kick(ud);
}

static void get_node(struct agent *a);

static void on_get_retry(uv_timer_t *t)
{
	struct agent *a = t->data;
	if (!stopping(a))
		get_node(a);
}

/* The annotation at start: the settle base, and what need not be written again before the heartbeat. */
static void adopt(struct agent *a, const char *text)
{
	struct gs_inuse *u = NULL;
	char why[256];

	if (gs_inuse_parse(text, strlen(text), &u, why, sizeof why) < 0) {
		gs_log_warn("agent: node %s: the annotation %s there is unreadable (%s): replaced", a->o->node,
			    GS_INUSE_ANNOTATION, why);
		return;
	}
	for (size_t i = 0; i < u->n_devs; i++)
		gs_agent_devs_add(&a->base, &u->devs[i]);
	a->published = gs_xstrdup(text);
	a->published_at = u->at_ms;
	gs_log_info("agent: node %s: the annotation says %zu devices held%s (as of %lld s ago)", a->o->node, u->n_devs,
		    u->error ? ", with an error line" : "", (long long)((wall_ms() - u->at_ms) / 1000));
	gs_inuse_free(u);
}

static void on_node(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct agent *a = ud;
	if (err == -ECANCELED && stopping(a))
		return;
	if (err || resp->status != 200) {
		uint64_t delay = gs_backoff_next(&a->backoff);
		const char *why = err ? msg : resp->status == 404 ? "no such node" : resp->body;
		gs_log_error("agent: GET node %s: %.*s (retrying in %llu ms)", a->o->node,
			     err || resp->status == 404 ? (int)strlen(why) : body_len(resp), why,
			     (unsigned long long)delay);
		uv_timer_start(&a->retry, on_get_retry, delay, 0);
		return;
	}
	gs_backoff_reset(&a->backoff);
	cJSON *j = cJSON_ParseWithLength(resp->body, resp->body_len);
	const cJSON *ann = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "metadata"), "annotations"),
		GS_INUSE_ANNOTATION);
	if (cJSON_IsString(ann))
		adopt(a, ann->valuestring);
	cJSON_Delete(j);

	char selector[300];
	snprintf(selector, sizeof selector, "spec.nodeName=%s", a->o->node);
	struct gs_watch_opts wo = {
		.kind = GS_OBJ_POD,
		.path = "/api/v1/pods",
		.field_selector = selector,
		.seed = (uint64_t)wall_ms(),
		.metadata_only = 1, /* it only needs to know that pods come and go: no spec, no env */
	};
	struct gs_watch_handlers h = {.upsert = pod_upsert, .remove = pod_remove};
	gs_watch_start(&a->loop, a->kube, &wo, &h, a, &a->watch);
	a->started = 1;
	list_start(a);
}

static void get_node(struct agent *a)
{
	if (gs_kube_request(a->kube, "GET", a->node_path, NULL, NULL, GS_KUBE_HIGH, API_TIMEOUT_MS, on_node, a) < 0)
		gs_log_error("agent: GET node %s: cannot send", a->o->node);
}

/* ---- start and stop ------------------------------------------------------------------------------ */

/* The closer's close_cb: every other part is closed. */
static void closed(void *ud)
{
	struct agent *a = ud;
	if (a->kube) {
		gs_kube_close(a->kube, NULL, NULL); /* last: the watch and the PATCH ran on it */
		a->kube = NULL;
	}
}

/* The close protocol (core/closer.h) with no release: the agent is static, gs_agent_run frees the rest. */
static void agent_stop(struct agent *a)
{
	if (stopping(a))
		return;
	gs_closer_start(&a->closer, NULL, closed, a);
	if (a->watch) {
		gs_closer_hold(&a->closer);
		gs_watch_stop(a->watch, gs_closer_drop_cb, &a->closer);
	}
	if (a->health) {
		gs_closer_hold(&a->closer);
		gs_health_close(a->health, gs_closer_drop_cb, &a->closer);
	}
	gs_closer_hold(&a->closer);
	gs_grpc_client_close(a->cl, gs_closer_drop_cb, &a->closer);
	gs_closer_uv(&a->closer, (uv_handle_t *)&a->tick);
	gs_closer_uv(&a->closer, (uv_handle_t *)&a->retry);
	gs_closer_uv(&a->closer, (uv_handle_t *)&a->sigint);
	gs_closer_uv(&a->closer, (uv_handle_t *)&a->sigterm);
	gs_closer_arm(&a->closer);
}

static void on_signal(uv_signal_t *s, int signum)
{
	struct agent *a = s->data;
	gs_log_info("agent: %s: stopping", strsignal(signum));
	agent_stop(a);
}

static int valid_node(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > 253)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '.'))
			return 0;
	return 1;
}

int gs_agent_run(const struct gs_agent_opts *o)
{
	static struct agent a;
	struct gs_grpc_client_opts go = {.path = o->socket};
	struct gs_kube_opts ko = {.kc = o->kc, .max_conns = 2, .user_agent = "gpu-scheduler-agent"};
	char err[512];
	int r;

	memset(&a, 0, sizeof a);
	a.o = o;
	a.rc = 0;
	a.start_ms = wall_ms();
	if (!valid_node(o->node)) {
		gs_log_error("agent: --node %s: not a node name", o->node);
		return 1;
	}
	snprintf(a.node_path, sizeof a.node_path, "/api/v1/nodes/%s", o->node);
	signal(SIGPIPE, SIG_IGN);
	uv_loop_init(&a.loop);
	register_metrics(&a);
	if (gs_grpc_client_new(&a.loop, &go, &a.cl) < 0) {
		gs_log_error("agent: --socket %s: not a usable unix socket path", o->socket);
		r = 1;
		goto early;
	}
	if ((r = gs_kube_new(&a.loop, &ko, &a.kube, err, sizeof err)) < 0) {
		gs_log_error("agent: apiserver client: %s", err);
		gs_grpc_client_close(a.cl, NULL, NULL);
		r = 1;
		goto early;
	}
	if ((r = gs_health_start(&a.loop, o->addr, a.metrics, NULL, NULL, &a.health)) < 0) {
		gs_log_error("agent: --addr %s: %s", o->addr, uv_strerror(r));
		a.health = NULL;
		a.rc = 1;
	}
	gs_backoff_init(&a.backoff, 800, 30000, (uint64_t)a.start_ms);
	uv_timer_init(&a.loop, &a.tick);
	uv_timer_init(&a.loop, &a.retry);
	a.tick.data = a.retry.data = &a;
	uv_signal_init(&a.loop, &a.sigint);
	uv_signal_init(&a.loop, &a.sigterm);
	a.sigint.data = a.sigterm.data = &a;
	uv_signal_start(&a.sigint, on_signal, SIGINT);
	uv_signal_start(&a.sigterm, on_signal, SIGTERM);
	if (a.rc) {
		agent_stop(&a);
	} else {
		gs_log_info("agent: node %s, kubelet %s every %u ms, resources %s, heartbeat %u s, settle %u s, "
			    "GPU index from %s, apiserver %s, /healthz and /metrics on %s",
			    o->node, o->socket, o->interval_ms, o->resources, o->heartbeat_s, o->settle_s, o->proc_dir,
			    gs_kube_server(a.kube), o->addr);
		get_node(&a);
	}
	uv_run(&a.loop, UV_RUN_DEFAULT);
	r = a.rc;
early:
	uv_run(&a.loop, UV_RUN_DEFAULT);
	GS_ASSERT(uv_loop_close(&a.loop) == 0);
	gs_agent_devs_free(&a.base);
	free(a.published);
	free(a.want);
	free(a.sending);
	free(a.mig);
	gs_metrics_free(a.metrics);
	return r;
}
