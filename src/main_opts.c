/*
 * main_opts.c: the option table and its validators (main_opts.h). The --help text is the table's.
 */
#include "main_opts.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "k8s/leader.h"
#include "sched/gang.h"
#include "sched/sched.h"

static int validate_name(const char *v, char *err, size_t errlen)
{
	/* A scheduler name is free text in Kubernetes, but ours appears in field selectors: keep it plain. */
	if (!*v || strlen(v) > 253 ||
	    strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._/") != strlen(v)) {
		snprintf(err, errlen, "\"%s\" must be 1-253 characters of letters, digits, '-', '.', '_' or '/'", v);
		return -EINVAL;
	}
	return 0;
}

static int validate_level(const char *v, char *err, size_t errlen)
{
	enum gs_log_level l;
	if (gs_log_level_parse(v, &l) < 0) {
		snprintf(err, errlen, "\"%s\" is not one of error, warn, info, debug, trace", v);
		return -EINVAL;
	}
	return 0;
}

static int validate_format(const char *v, char *err, size_t errlen)
{
	enum gs_log_format f;
	if (gs_log_format_parse(v, &f) < 0) {
		snprintf(err, errlen, "\"%s\" is not text or json", v);
		return -EINVAL;
	}
	return 0;
}

static int validate_readable(const char *v, char *err, size_t errlen)
{
	if (access(v, R_OK) != 0) {
		snprintf(err, errlen, "cannot read %s: %s", v, strerror(errno));
		return -EINVAL;
	}
	return 0;
}

/* v is a or b. */
static int one_of(const char *v, const char *a, const char *b, char *err, size_t errlen)
{
	if (strcmp(v, a) != 0 && strcmp(v, b) != 0) {
		snprintf(err, errlen, "\"%s\" must be %s or %s", v, a, b);
		return -EINVAL;
	}
	return 0;
}

static int validate_content_type(const char *v, char *err, size_t errlen)
{
	return one_of(v, "json", "protobuf", err, errlen);
}

static int validate_gang_limits(const char *v, char *err, size_t errlen)
{
	return gs_gang_limits_check(v, err, errlen);
}

static int validate_sharing(const char *v, char *err, size_t errlen)
{
	return one_of(v, "exclusive", "any", err, errlen);
}

/*
 * A label key as Kubernetes validates it: an optional DNS-1123 subdomain prefix (<= 253) and '/', then a
 * name of 1-63 alphanumerics, '-', '_' or '.', beginning and ending with an alphanumeric. "" turns
 * aliases off.
 */
static int validate_label_key(const char *v, char *err, size_t errlen)
{
	const char *slash = strchr(v, '/'), *name = slash ? slash + 1 : v;
	size_t plen = slash ? (size_t)(slash - v) : 0, nlen = strlen(name);
	int ok = 1;

	if (!*v)
		return 0;
	if (slash) {
		ok = plen > 0 && plen <= 253 && isalnum((unsigned char)v[0]) && isalnum((unsigned char)v[plen - 1]);
		for (size_t i = 0; ok && i < plen; i++)
			ok = islower((unsigned char)v[i]) || isdigit((unsigned char)v[i]) || v[i] == '-' || v[i] == '.';
	}
	ok = ok && nlen > 0 && nlen <= 63 && isalnum((unsigned char)name[0]) && isalnum((unsigned char)name[nlen - 1]);
	for (size_t i = 0; ok && i < nlen; i++)
		ok = isalnum((unsigned char)name[i]) || name[i] == '-' || name[i] == '_' || name[i] == '.';
	if (!ok) {
		snprintf(err, errlen,
			 "\"%s\" is not a label key ([prefix/]name: a DNS subdomain prefix, a name of 1-63 "
			 "letters, digits, '-', '_', '.'), nor empty",
			 v);
		return -EINVAL;
	}
	return 0;
}

/* HOST:PORT, or "" for off. */
static int validate_hostport_or_off(const char *v, char *err, size_t errlen)
{
	return *v ? gs_opt_validate_hostport(v, err, errlen) : 0;
}

#define OPT(f) offsetof(struct gs_main_config, f)
const struct gs_opt gs_main_opts[] = {
	{"kubeconfig", "KUBECONFIG_PATH", GS_OPT_STRING, NULL, 0, 0, OPT(kubeconfig), validate_readable,
	 "kubeconfig file; without it, the in-cluster service account is used"},
	{"scheduler-name", "SCHEDULER_NAME", GS_OPT_STRING, "gpu-scheduler", 0, 0, OPT(scheduler_name), validate_name,
	 "schedule pods whose spec.schedulerName is this"},
	{"annotation", "GS_ANNOTATION", GS_OPT_STRING, "gpu-scheduling-map", 0, 0, OPT(annotation), validate_name,
	 "the annotation holding the scheduling map"},
	{"health-addr", "GS_HEALTH_ADDR", GS_OPT_STRING, "0.0.0.0:8080", 0, 0, OPT(health_addr),
	 gs_opt_validate_hostport, "plain HTTP address of /healthz, /livez and /readyz (open to all: no data)"},
	{"secure-addr", "GS_SECURE_ADDR", GS_OPT_STRING, "0.0.0.0:10259", 0, 0, OPT(secure_addr),
	 validate_hostport_or_off,
	 "HTTPS address of /metrics and /debug/ for bearer tokens the apiserver "
	 "authenticates (TokenReview) and authorizes (SubjectAccessReview, get on the path); probes too; "
	 "empty: off"},
	{"secure-cert-file", "GS_SECURE_CERT_FILE", GS_OPT_STRING, NULL, 0, 0, OPT(secure_cert_file), validate_readable,
	 "--secure-addr's serving certificate (PEM, read at start); without it, a self-signed "
	 "one made at start"},
	{"secure-private-key-file", "GS_SECURE_PRIVATE_KEY_FILE", GS_OPT_STRING, NULL, 0, 0, OPT(secure_key_file),
	 validate_readable, "--secure-addr's serving key (PEM, read at start)"},
	{"insecure-debug-and-metrics", "GS_INSECURE_DEBUG_AND_METRICS", GS_OPT_BOOL, "false", 0, 0, OPT(insecure_data),
	 NULL,
	 "also serve /metrics and /debug/ on --health-addr without credentials "
	 "(the old behaviour: anyone reaching the port reads every namespace's pods)"},
	{"kube-api-qps", "GS_KUBE_API_QPS", GS_OPT_INT, "0", 0, 1000000, OPT(qps), NULL,
	 "requests per second to the apiserver, 0 for unlimited"},
	{"kube-api-burst", "GS_KUBE_API_BURST", GS_OPT_INT, "0", 0, 1000000, OPT(burst), NULL,
	 "burst over --kube-api-qps (0: equal to the qps)"},
	{"kube-api-content-type", "GS_KUBE_API_CONTENT_TYPE", GS_OPT_STRING, "protobuf", 0, 0, OPT(content_type),
	 validate_content_type,
	 "protobuf: read pod and node lists and watches as protobuf (JSON if the apiserver answers JSON); json: JSON only"},
	{"max-inflight-binds", "GS_MAX_INFLIGHT_BINDS", GS_OPT_INT, "64", 1, 4096, OPT(max_inflight_binds), NULL,
	 "bindings in flight at once"},
	{"events", "GS_EVENTS", GS_OPT_BOOL, "true", 0, 0, OPT(events), NULL,
	 "record Scheduled and FailedScheduling events"},
	{"require-env", "GS_REQUIRE_ENV", GS_OPT_BOOL, "true", 0, 0, OPT(require_env), NULL,
	 "bind only pods whose containers carry the map's CUDA_VISIBLE_DEVICES (set by the webhook)"},
	{"recreate-unmutated", "GS_RECREATE_UNMUTATED", GS_OPT_BOOL, "true", 0, 0, OPT(recreate_unmutated), NULL,
	 "delete StatefulSet/Job pods the webhook missed so their controller recreates them"},
	{"device-sharing", "GS_DEVICE_SHARING", GS_OPT_STRING, "exclusive", 0, 0, OPT(device_sharing), validate_sharing,
	 "exclusive: a GPU held by a pod of one owner waits for it; any: never refuse (still counted)"},
	{"node-alias-label", "GS_NODE_ALIAS_LABEL", GS_OPT_STRING, "gpu-scheduler.io/node", 0, 0, OPT(node_alias_label),
	 validate_label_key,
	 "a map's node name that names no node means the one node with this label of that value "
	 "(empty: off)"},
	{"ignored-resources", "GS_IGNORED_RESOURCES", GS_OPT_STRING, "", 0, 0, OPT(ignored_resources), NULL,
	 "extended resources the fit does not check, comma-separated (kube-scheduler's NodeResourcesFit "
	 "ignoredResources)"},
	{"ignored-resource-groups", "GS_IGNORED_RESOURCE_GROUPS", GS_OPT_STRING, "", 0, 0, OPT(ignored_resource_groups),
	 NULL,
	 "groups of extended resources the fit does not check, comma-separated: example.com ignores "
	 "example.com/* (ignoredResourceGroups)"},
	{"gpu-resources", "GS_GPU_RESOURCES", GS_OPT_STRING, GS_SCHED_GPU_RESOURCES, 0, 0, OPT(gpu_resources), NULL,
	 "the device plugin's GPU resources, comma-separated names or prefixes ending in '/' or '*': their "
	 "pods' requests are the plugin's GPUs, and a replica (GPU-...::2) or a MIG instance the agent lists "
	 "under one holds its GPU"},
	{"agent-stale-after", "GS_AGENT_STALE_AFTER", GS_OPT_DURATION, "30m", 1000, 86400000, OPT(agent_stale_ms), NULL,
	 "the node agent's data unchanged for this long is stale and counted as none (its heartbeat is 10m)"},
	{"engine-audit", "GS_ENGINE_AUDIT", GS_OPT_BOOL, "false", 0, 0, OPT(engine_audit), NULL,
	 "for tests and debugging: check every invariant of the placement engine from scratch at each pass of "
	 "its loop (O(pods + nodes) each time); one that does not hold aborts the process, naming it"},
	{"mapped-gpu-series", "GS_MAPPED_GPU_SERIES", GS_OPT_INT, "10000", 0, 1000000, OPT(mapped_gpu_series), NULL,
	 "/metrics shows at most this many GPUs of running mapped pods in gpu_scheduler_mapped_gpu_info (one "
	 "series each); the rest are counted in gpu_scheduler_mapped_gpu_info_omitted (0: none shown)"},
	{"preemption", "GS_PREEMPTION", GS_OPT_BOOL, "true", 0, 0, OPT(preemption), NULL,
	 "a pod waiting on its mapped node for what pods of lower priority hold there takes their place: they are "
	 "deleted and it is nominated to the node (docs/sched.md, \"Preemption\"); false: it waits"},
	{"gang-placeholders", "GS_GANG_PLACEHOLDERS", GS_OPT_BOOL, "false", 0, 0, OPT(gang_placeholders), NULL,
	 "while an all-or-nothing gang gathers, a placeholder pod on each fitting member's node holds its requests "
	 "for every other scheduler (docs/sched.md, \"Placeholders\")"},
	{"max-gang-timeout", "GS_MAX_GANG_TIMEOUT", GS_OPT_DURATION, "1h", 1000, 2592000000, OPT(max_gang_timeout_ms),
	 NULL,
	 "an all-or-nothing gang's gang-timeout is cut to this: a gang that cannot complete releases what it "
	 "reserved at the latest this long after it began gathering (its annotation may ask up to 720h)"},
	{"gang-reservations-per-namespace", "GS_GANG_RESERVATIONS_PER_NAMESPACE", GS_OPT_INT, "256", 0,
	 GS_GANG_LIMIT_MAX, OPT(gang_members_per_ns), NULL,
	 "the all-or-nothing gangs of one namespace hold at most this many members reserved at once; a gang that "
	 "would pass it waits GANG_LIMIT, holding nothing (0: no bound; docs/sched.md, \"Budgets\")"},
	{"gang-reserved-gpus-per-namespace", "GS_GANG_RESERVED_GPUS_PER_NAMESPACE", GS_OPT_INT, "256", 0,
	 GS_GANG_LIMIT_MAX, OPT(gang_gpus_per_ns), NULL,
	 "the same bound for the GPUs their map entries name (0: no bound)"},
	{"gang-reservation-limits", "GS_GANG_RESERVATION_LIMITS", GS_OPT_STRING, "", 0, 0, OPT(gang_limits),
	 validate_gang_limits,
	 "per-namespace bounds in place of the two above: NAMESPACE=MEMBERS/GPUS,... (e.g. "
	 "train=1024/4096,ci=8/8; 0: no bound)"},
	{"placement-map-memory", "GS_PLACEMENT_MAP_MEMORY", GS_OPT_BYTES, "96Mi", 1 << 20, 1L << 40, OPT(gpm_bytes),
	 NULL,
	 "GPUPlacementMaps the scheduler holds, every namespace's together, at most this much memory (their text "
	 "and parse); one that would pass it is not held: its status and its pods say so (docs/sched.md, \"Memory\")"},
	{"placement-map-memory-per-namespace", "GS_PLACEMENT_MAP_MEMORY_PER_NAMESPACE", GS_OPT_BYTES, "16Mi", 64 << 10,
	 1L << 40, OPT(gpm_bytes_per_ns), NULL,
	 "the same bound for the GPUPlacementMaps of each namespace: one tenant cannot take the others' share"},
	{"map-cache-memory", "GS_MAP_CACHE_MEMORY", GS_OPT_BYTES, "16Mi", 0, 1L << 40, OPT(map_cache_bytes), NULL,
	 "parsed maps no pod uses any more are kept for reuse up to this much memory, the least recently used "
	 "let go first"},
	{"placeholder-image", "GS_PLACEHOLDER_IMAGE", GS_OPT_STRING, "registry.k8s.io/pause:3.9", 0, 0,
	 OPT(placeholder_image), NULL, "the image placeholder pods run (a pause image the nodes have)"},
	{"no-webhook", "GS_NO_WEBHOOK", GS_OPT_BOOL, "false", 0, 0, OPT(no_webhook), NULL,
	 "do not serve the admission webhook"},
	{"webhook-addr", "GS_WEBHOOK_ADDR", GS_OPT_STRING, "0.0.0.0:8443", 0, 0, OPT(webhook_addr),
	 gs_opt_validate_hostport, "HTTPS address of the admission webhook (POST /mutate)"},
	{"tolerate-dedicated-taint", "GS_TOLERATE_DEDICATED_TAINT", GS_OPT_BOOL, "false", 0, 0, OPT(tolerate_dedicated),
	 NULL,
	 "the webhook adds a toleration of the taint gpu-scheduler.io/dedicated:NoSchedule (dedicated GPU nodes) "
	 "to every pod it sets CUDA_VISIBLE_DEVICES for"},
	{"webhook-max-connections", "GS_WEBHOOK_MAX_CONNECTIONS", GS_OPT_INT, "256", 1, 65536, OPT(webhook_max_conns),
	 NULL,
	 "open webhook connections at most; over it the oldest idle or unfinished one of the address "
	 "holding the most is closed"},
	{"webhook-max-connections-per-source", "GS_WEBHOOK_MAX_CONNECTIONS_PER_SOURCE", GS_OPT_INT, "0", 0, 65536,
	 OPT(webhook_max_conns_per_source), NULL,
	 "open webhook connections per client address at most (0: --webhook-max-connections)"},
	{"tls-cert-file", "GS_TLS_CERT_FILE", GS_OPT_STRING, NULL, 0, 0, OPT(tls_cert_file), validate_readable,
	 "webhook serving certificate (PEM), reloaded when it changes"},
	{"tls-private-key-file", "GS_TLS_PRIVATE_KEY_FILE", GS_OPT_STRING, NULL, 0, 0, OPT(tls_key_file),
	 validate_readable, "webhook serving key (PEM), reloaded when it changes"},
	{"webhook-client-ca-file", "GS_WEBHOOK_CLIENT_CA_FILE", GS_OPT_STRING, NULL, 0, 0, OPT(webhook_client_ca_file),
	 validate_readable,
	 "only clients with a certificate of this CA (PEM) reach the webhook: the apiserver, given one by its "
	 "AdmissionConfiguration (docs/deploy.md, \"Who may call the webhook\"); read at start"},
	{"webhook-self-signed", "GS_WEBHOOK_SELF_SIGNED", GS_OPT_BOOL, "false", 0, 0, OPT(self_signed), NULL,
	 "make and renew the webhook certificate, kept in --webhook-secret, CA put in --webhook-config-name"},
	{"namespace", "POD_NAMESPACE", GS_OPT_STRING, "kube-system", 0, 0, OPT(namespace_), validate_name,
	 "the scheduler's namespace (its webhook Service and Secret)"},
	{"webhook-secret", "GS_WEBHOOK_SECRET", GS_OPT_STRING, "gpu-scheduler-webhook-tls", 0, 0, OPT(webhook_secret),
	 validate_name, "self-signed mode: the Secret holding the webhook's CA and certificate"},
	{"webhook-service", "GS_WEBHOOK_SERVICE", GS_OPT_STRING, "gpu-scheduler", 0, 0, OPT(webhook_service),
	 validate_name, "self-signed mode: the webhook Service the certificate names"},
	{"webhook-config-name", "GS_WEBHOOK_CONFIG_NAME", GS_OPT_STRING, "gpu-scheduler", 0, 0,
	 OPT(webhook_config_name), validate_name,
	 "self-signed mode: the MutatingWebhookConfiguration whose caBundle is kept current"},
	{"leader-elect", "GS_LEADER_ELECT", GS_OPT_BOOL, "true", 0, 0, OPT(leader_elect), NULL,
	 "run as one of several replicas: only the holder of a Lease binds (the others serve the webhook)"},
	{"leader-elect-lease-duration", "GS_LEADER_ELECT_LEASE_DURATION", GS_OPT_DURATION, "15s", 1000, 3600000,
	 OPT(le_lease_ms), NULL, "how long a follower waits after the leader's last renewal before taking over"},
	{"leader-elect-renew-deadline", "GS_LEADER_ELECT_RENEW_DEADLINE", GS_OPT_DURATION, "10s", 500, 3600000,
	 OPT(le_renew_ms), NULL, "a leader that has not renewed for this long stops binding at once"},
	{"leader-elect-retry-period", "GS_LEADER_ELECT_RETRY_PERIOD", GS_OPT_DURATION, "2s", 100, 3600000,
	 OPT(le_retry_ms), NULL, "how often the Lease is tried or renewed"},
	{"leader-elect-resource-name", "GS_LEADER_ELECT_RESOURCE_NAME", GS_OPT_STRING, "gpu-scheduler", 0, 0,
	 OPT(le_name), validate_name, "the Lease's name"},
	{"leader-elect-resource-namespace", "GS_LEADER_ELECT_RESOURCE_NAMESPACE", GS_OPT_STRING, NULL, 0, 0,
	 OPT(le_namespace), validate_name, "the Lease's namespace (default: --namespace)"},
	{"debug-endpoints", "GS_DEBUG_ENDPOINTS", GS_OPT_BOOL, "true", 0, 0, OPT(debug_endpoints), NULL,
	 "serve /debug/pods/NS/NAME and /debug/pending (why a pod waits) on --secure-addr"},
	{"shutdown-delay", "GS_SHUTDOWN_DELAY", GS_OPT_DURATION, "0s", 0, 300000, OPT(shutdown_delay_ms), NULL,
	 "on SIGTERM, keep serving the webhook this long, every answer closing its connection, while the "
	 "Service's endpoints drop this replica (bindings stop and the Lease is released at once)"},
	{"log-level", "GS_LOG_LEVEL", GS_OPT_STRING, "info", 0, 0, OPT(log_level), validate_level,
	 "error, warn, info, debug or trace"},
	{"log-format", "GS_LOG_FORMAT", GS_OPT_STRING, "text", 0, 0, OPT(log_format), validate_format, "text or json"},
};
const size_t gs_main_opts_n = sizeof(gs_main_opts) / sizeof(gs_main_opts[0]);

int gs_main_opts_check(const struct gs_main_config *cfg, char *err, size_t errlen)
{
	if (!cfg->no_webhook && !cfg->self_signed && (!cfg->tls_cert_file || !cfg->tls_key_file)) {
		snprintf(err, errlen,
			 "the webhook needs --tls-cert-file and --tls-private-key-file "
			 "(or use --webhook-self-signed, or turn it off with --no-webhook)");
		return -EINVAL;
	}
	if (!cfg->secure_cert_file != !cfg->secure_key_file) {
		snprintf(err, errlen, "--secure-cert-file and --secure-private-key-file go together");
		return -EINVAL;
	}
	if (cfg->leader_elect && !gs_leader_durations_ok(cfg->le_lease_ms, cfg->le_renew_ms, cfg->le_retry_ms)) {
		snprintf(err, errlen,
			 "--leader-elect-lease-duration (%ld ms) must exceed --leader-elect-renew-deadline "
			 "(%ld ms), which must exceed 1.2 x --leader-elect-retry-period (%ld ms)",
			 cfg->le_lease_ms, cfg->le_renew_ms, cfg->le_retry_ms);
		return -EINVAL;
	}
	return 0;
}
