/*
 * main.c: wires the daemon. Parse and validate the configuration, load the kubeconfig, create the loop,
 * start the modules, run, and on SIGTERM/SIGINT tear them down in order.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include <mbedtls/platform_util.h>

#include "core/buf.h"
#include "core/health.h"
#include "core/hmap.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/options.h"
#include "k8s/authz.h"
#include "k8s/kube.h"
#include "k8s/controller.h"
#include "k8s/agent_cmd.h"
#include "k8s/explain_cmd.h"
#include "k8s/status_cmd.h"
#include "k8s/kubeconfig.h"
#include "k8s/certs.h"
#include "k8s/leader.h"
#include "lint/lint_cli.h"
#include "main_opts.h"
#include "webhook/server.h"

#define GS_SHUTDOWN_GRACE_MS 10000


struct daemon {
	uv_loop_t loop;
	uv_signal_t sigterm, sigint;
	uv_timer_t drain;       /* --shutdown-delay: the webhook's last seconds */
	uv_prepare_t log_flush; /* writes the turn's batch of log lines before the loop waits */
	struct gs_main_config cfg;
	struct gs_metrics *metrics;
	struct gs_kube *kube;
	struct gs_controller *ctrl;
	struct gs_health *health;
	struct gs_health *secure; /* --secure-addr */
	struct gs_authz *authz;   /* its gate, with its own apiserver client */
	int health_open;          /* of health and secure, those not closed yet */
	struct gs_webhook *webhook;
	struct gs_admission *admission;
	struct gs_webhook_stats wstats;
	struct gs_certs *certs;
	struct gs_leader *leader;
	int stopping;
	int exit_code;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: gpu-scheduler [OPTIONS]\n       gpu-scheduler explain [-n NAMESPACE] POD   (explain --help)\n"
		"       gpu-scheduler status [-n NAMESPACE] statefulset/NAME|job/NAME   (status --help)\n\n"
		"Binds pods to the node their gpu-scheduling-map annotation names, and injects\n"
		"CUDA_VISIBLE_DEVICES at pod creation through a mutating admission webhook.\n\n"
		"Subcommands: gpu-scheduler lint [OPTIONS] FILE... (gpu-scheduler lint --help)\n"
		"             gpu-scheduler agent --node NAME [OPTIONS]   the node agent, publishing which pod\n"
		"             holds which device as the kubelet says (gpu-scheduler agent --help)\n\n"
		"Options (a flag wins over its environment variable, which wins over the default):\n");
	gs_options_usage(f, gs_main_opts, gs_main_opts_n);
	fprintf(f, "  %-32s %s\n  %-32s %s\n", "--help", "this text", "--version", "print the version");
}

static int ready_cb(char *why, size_t whylen, void *ud)
{
	struct daemon *d = ud;
	if (d->stopping) {
		snprintf(why, whylen, "shutting down");
		return 0;
	}
	return gs_controller_ready(d->ctrl, why, whylen);
}

/* ---- shutdown ------------------------------------------------------------------------------------
 * Two chains, started together by the signal:
 *   the health server closes; then the controller stops (bindings in flight get a grace period), the
 *   leader releases the Lease, the apiserver client closes (in that order: each needs the next);
 *   the webhook drains for --shutdown-delay (answers close their connections, so the apiserver moves
 *   to the other replicas while the endpoints drop this one), then closes.
 * The certificate cycle closes at the signal too (its request in flight is answered or cancelled by
 * the client's close). The signal handles close once all three are done. */

static void finish(struct daemon *d)
{
	if (d->webhook || d->kube || d->certs || d->authz)
		return;
	uv_close((uv_handle_t *)&d->drain, NULL);
	uv_close((uv_handle_t *)&d->log_flush, NULL);
	uv_close((uv_handle_t *)&d->sigterm, NULL);
	uv_close((uv_handle_t *)&d->sigint, NULL);
	gs_log_info("shutdown complete");
}

static void on_kube_closed(void *ud)
{
	struct daemon *d = ud;
	d->kube = NULL;
	gs_controller_free(d->ctrl);
	d->ctrl = NULL;
	finish(d);
}

static void on_leader_stopped(void *ud)
{
	struct daemon *d = ud;
	d->leader = NULL;
	gs_kube_close(d->kube, on_kube_closed, d);
}

/* Bindings in flight are done: hand the Lease over now, so the next replica need not wait for it. */
static void on_ctrl_stopped(void *ud)
{
	struct daemon *d = ud;
	if (d->leader)
		gs_leader_stop(d->leader, on_leader_stopped, d);
	else
		on_leader_stopped(d);
}

/* /metrics reads the controller and the client: they stop only once nothing serves it. */
static void on_health_closed(void *ud)
{
	struct daemon *d = ud;
	if (d->health_open > 0 && --d->health_open > 0)
		return;
	d->health = d->secure = NULL;
	gs_controller_stop(d->ctrl, GS_SHUTDOWN_GRACE_MS, on_ctrl_stopped, d);
}

static void on_authz_closed(void *ud)
{
	struct daemon *d = ud;
	d->authz = NULL;
	finish(d);
}

static void on_certs_closed(void *ud)
{
	struct daemon *d = ud;
	d->certs = NULL;
	finish(d);
}

static void on_webhook_closed(void *ud)
{
	struct daemon *d = ud;
	d->webhook = NULL;
	finish(d);
}

static void on_drained(uv_timer_t *t)
{
	struct daemon *d = t->data;
	gs_log_info("webhook: drained, closing");
	gs_webhook_close(d->webhook, on_webhook_closed, d);
}

static void on_signal(uv_signal_t *s, int signum)
{
	struct daemon *d = s->data;
	if (d->stopping) {
		gs_log_warn("second %s: exiting at once", strsignal(signum));
		_exit(1);
	}
	d->stopping = 1;
	gs_log_info("%s: stopping (bindings in flight get %d s to finish)", strsignal(signum),
		    GS_SHUTDOWN_GRACE_MS / 1000);
	if (d->certs) /* closed once its request (if any) is answered, or cancelled by the client's close */
		gs_certs_close(d->certs, on_certs_closed, d);
	if (d->webhook && d->cfg.shutdown_delay_ms > 0) {
		gs_log_info("webhook: serving %ld ms more, each answer closing its connection (--shutdown-delay)",
			    d->cfg.shutdown_delay_ms);
		gs_webhook_drain(d->webhook);
		uv_timer_start(&d->drain, on_drained, (uint64_t)d->cfg.shutdown_delay_ms, 0);
	} else if (d->webhook) {
		gs_webhook_close(d->webhook, on_webhook_closed, d);
	}
	/* Both servers close in this turn, before either answers again: /metrics renders series of both. */
	d->health_open = !!d->health + !!d->secure;
	if (d->health)
		gs_health_close(d->health, on_health_closed, d);
	if (d->secure)
		gs_health_close(d->secure, on_health_closed, d);
	if (!d->health_open)
		on_health_closed(d);
	if (d->authz) /* its reviews in flight are cancelled: the secure port's last gates answer 503 */
		gs_authz_close(d->authz, on_authz_closed, d);
}

/* ---- startup ------------------------------------------------------------------------------------ */

/*
 * Open files: the soft limit up to the hard one, as the Go runtime does for kube-scheduler, so the
 * connection caps (webhook, health, the apiserver pool) are what bounds descriptors, not a 1024 soft
 * limit. Logged either way.
 */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		gs_log_warn("open files: getrlimit: %s", strerror(errno));
		return;
	}
	rlim_t was = rl.rlim_cur;
	if (rl.rlim_cur != rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
			gs_log_warn("open files: cannot raise the limit from %llu to %llu: %s", (unsigned long long)was,
				    (unsigned long long)rl.rlim_max, strerror(errno));
			return;
		}
	}
	gs_log_info("open files limit %llu (soft limit was %llu)", (unsigned long long)rl.rlim_cur,
		    (unsigned long long)was);
}

static uint64_t random_seed(void)
{
	uint64_t seed = 0;
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	return seed;
}

static int webhook_start(struct daemon *d, const char *cert_pem, const char *key_pem)
{
	char err[512] = "";
	struct gs_webhook_opts wo = {
		.addr = d->cfg.webhook_addr,
		.cert_file = cert_pem ? NULL : d->cfg.tls_cert_file,
		.key_file = cert_pem ? NULL : d->cfg.tls_key_file,
		.cert_pem = cert_pem,
		.key_pem = key_pem,
		.admission = d->admission,
		.stats = &d->wstats,
		.max_conns = (unsigned)d->cfg.webhook_max_conns,
		.max_conns_per_source = (unsigned)d->cfg.webhook_max_conns_per_source,
		.client_ca_file = d->cfg.webhook_client_ca_file,
	};
	int r = gs_webhook_start(&d->loop, &wo, &d->webhook, err, sizeof(err));
	if (r < 0) {
		gs_log_error("webhook: %s", err);
		return r;
	}
	gs_log_info("admission webhook on https://%s/mutate%s%s", d->cfg.webhook_addr,
		    d->cfg.webhook_client_ca_file ? ", for clients with a certificate of " : "",
		    d->cfg.webhook_client_ca_file ? d->cfg.webhook_client_ca_file : "");
	return 0;
}

/* ---- leader election ----------------------------------------------------------------------------- */

static int may_renew(void *ud)
{
	struct daemon *d = ud;
	return !d->leader || gs_leader_leading(d->leader);
}

static void on_leading(int leading, void *ud)
{
	struct daemon *d = ud;
	if (!leading || d->stopping)
		return;
	if (d->ctrl)
		gs_controller_kick(d->ctrl); /* caches are warm: bind what waits now */
	if (d->certs)
		gs_certs_poke(d->certs); /* a renewal may be ours to make */
}

/* 1 while this replica binds: it holds the Lease, or runs alone (--leader-elect=false). */
static double m_leader(void *ud)
{
	struct daemon *d = ud;
	if (!d->cfg.leader_elect)
		return !d->stopping;
	return d->leader && gs_leader_leading(d->leader);
}

/* What /readyz answers, as a series: 1 for 200, 0 for 503. */
static double m_ready(void *ud)
{
	struct daemon *d = ud;
	char why[256];
	return d->ctrl && ready_cb(why, sizeof(why), d) == 1;
}

static struct gs_leader_stats leader_stats(void *ud)
{
	struct gs_leader_stats st = {0};
	struct daemon *d = ud;
	if (d->leader)
		gs_leader_stats(d->leader, &st);
	return st;
}

static double m_leader_acquired(void *ud)
{
	return (double)leader_stats(ud).acquired;
}

static double m_leader_lost(void *ud)
{
	return (double)leader_stats(ud).lost;
}

/* This replica's identity in the Lease: its pod name (POD_NAME, else the host name) and a random
 * suffix, so a restarted pod of the same name is another holder. */
static void identity(char *out, size_t size)
{
	char host[128] = "gpu-scheduler";
	const char *pod = getenv("POD_NAME");
	size_t i;

	if (pod && *pod)
		snprintf(host, sizeof(host), "%s", pod);
	else
		gethostname(host, sizeof(host) - 1);
	for (i = 0; host[i]; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.", host[i]))
			host[i] = '-';
	snprintf(out, size, "%.128s_%08x", host, (unsigned)(random_seed() & 0xffffffffu));
}

static int leader_start(struct daemon *d)
{
	char id[160], err[256] = "";
	struct gs_leader_opts lo = {
		.ns = d->cfg.le_namespace ? d->cfg.le_namespace : d->cfg.namespace_,
		.name = d->cfg.le_name,
		.identity = id,
		.lease_ms = d->cfg.le_lease_ms,
		.renew_deadline_ms = d->cfg.le_renew_ms,
		.retry_ms = d->cfg.le_retry_ms,
		.on_change = on_leading,
		.ud = d,
		.seed = random_seed(),
	};
	identity(id, sizeof(id));
	int r = gs_leader_start(&d->loop, d->kube, &lo, &d->leader, err, sizeof(err));
	if (r < 0) {
		gs_log_error("%s", err[0] ? err : uv_strerror(r));
		return r;
	}
	return 0;
}

/* Self-signed mode: a pair is ready (the first, or a renewal). */
static void on_pair(const char *cert, const char *key, int64_t not_after, void *ud)
{
	struct daemon *d = ud;
	char err[256];
	if (d->stopping)
		return;
	if (!d->webhook) {
		if (webhook_start(d, cert, key) < 0) {
			/* the address is taken or the pair is bad: nothing will get better by waiting */
			d->exit_code = 1;
			uv_kill(getpid(), SIGTERM);
		}
		return;
	}
	if (gs_webhook_set_pair(d->webhook, cert, key, err, sizeof(err)) < 0)
		gs_log_error("webhook: the renewed certificate does not load, keeping the old one: %s", err);
	else
		gs_log_info("webhook: serving the renewed certificate");
}

/* --secure-addr's pair: the files, else a self-signed one made now (as kube-scheduler does). */
static int secure_tls(struct daemon *d, struct gs_tls_config **tls)
{
	static const char *const names[] = {"localhost", "127.0.0.1", NULL};
	char err[512] = "", *cert = NULL, *key = NULL;
	size_t cert_len = 0, key_len = 0;
	int64_t now = (int64_t)time(NULL);
	int r;

	if (d->cfg.secure_cert_file) {
		r = gs_buf_read_file(d->cfg.secure_cert_file, GS_WEBHOOK_CERT_MAX, &cert, &cert_len);
		if (r == 0)
			r = gs_buf_read_file(d->cfg.secure_key_file, GS_WEBHOOK_CERT_MAX, &key, &key_len);
		if (r < 0)
			snprintf(err, sizeof(err), "reading the pair: %s", uv_strerror(r));
	} else {
		struct gs_tls_cert_req req = {
			.common_name = "gpu-scheduler",
			.dns_names = names,
			.not_before = now - 3600,
			.not_after = now + 365 * 86400,
		};
		r = gs_tls_generate(&req, NULL, NULL, &cert, &key, err, sizeof(err));
		cert_len = cert ? strlen(cert) : 0;
		key_len = key ? strlen(key) : 0;
	}
	if (r == 0)
		r = gs_tls_server_config_new(cert, cert_len, key, key_len, tls, err, sizeof(err));
	if (r < 0)
		gs_log_error("--secure-addr: %s", err);
	if (key)
		mbedtls_platform_zeroize(key, key_len);
	free(cert);
	free(key);
	return r;
}

/*
 * The plain port: probes, and the data only with --insecure-debug-and-metrics. The secure port: the
 * probes and the data, behind the apiserver's TokenReview and SubjectAccessReview (k8s/authz.h).
 */
static int servers_start(struct daemon *d, const struct gs_kubeconfig *kc)
{
	char err[512] = "";
	struct gs_tls_config *tls = NULL;
	struct gs_health_opts ho = {
		.addr = d->cfg.health_addr,
		.metrics = d->metrics,
		.serve_metrics = d->cfg.insecure_data,
		.ready = ready_cb,
		.ud = d,
	};
	int r;

	if ((r = gs_health_start_opts(&d->loop, &ho, &d->health)) < 0) {
		gs_log_error("--health-addr %s: %s", d->cfg.health_addr, uv_strerror(r));
		return r;
	}
	if (d->cfg.debug_endpoints && d->cfg.insecure_data)
		gs_health_route(d->health, "/debug/", gs_controller_debug, d->ctrl);
	gs_log_info("health and readiness on http://%s%s", d->cfg.health_addr,
		    d->cfg.insecure_data ? ", metrics and explanations too, WITHOUT credentials "
					   "(--insecure-debug-and-metrics)"
					 : "");
	if (!*d->cfg.secure_addr)
		return 0;
	struct gs_authz_opts ao = {.kc = kc, .metrics = d->metrics, .user_agent = "gpu-scheduler/" GS_VERSION};
	if ((r = gs_authz_new(&d->loop, &ao, &d->authz, err, sizeof(err))) < 0) {
		gs_log_error("secure port: apiserver client: %s", err);
		return r;
	}
	if ((r = secure_tls(d, &tls)) < 0)
		return r;
	ho.addr = d->cfg.secure_addr;
	ho.name = "secure";
	ho.tls = tls;
	ho.serve_metrics = 1;
	ho.gate = gs_authz_gate;
	ho.gate_ud = d->authz;
	r = gs_health_start_opts(&d->loop, &ho, &d->secure);
	gs_tls_config_unref(tls);
	if (r < 0) {
		gs_log_error("--secure-addr %s: %s", d->cfg.secure_addr, uv_strerror(r));
		return r;
	}
	if (d->cfg.debug_endpoints)
		gs_health_route(d->secure, "/debug/", gs_controller_debug, d->ctrl);
	gs_log_info("metrics%s on https://%s for authorized bearer tokens (%s certificate)",
		    d->cfg.debug_endpoints ? " and explanations under /debug/" : "", d->cfg.secure_addr,
		    d->cfg.secure_cert_file ? "file" : "self-signed");
	return 0;
}

/* The registry, the process's series and the daemon's own (leadership, readiness). */
static void daemon_metrics(struct daemon *d)
{
	d->metrics = gs_metrics_new();
	gs_metrics_process(d->metrics);
	gs_metrics_gauge_fn(d->metrics, "gpu_scheduler_leader",
			    "1 while this replica binds: it holds the Lease (or runs with --leader-elect=false).", NULL,
			    m_leader, d);
	/* Registered with or without leader election (0 without), so dashboards find the series. */
	gs_metrics_counter_fn(d->metrics, "gpu_scheduler_leader_changes_total",
			      "Times this replica became the leader, or stopped being it.", "to=\"leader\"",
			      m_leader_acquired, d);
	gs_metrics_counter_fn(d->metrics, "gpu_scheduler_leader_changes_total",
			      "Times this replica became the leader, or stopped being it.", "to=\"follower\"",
			      m_leader_lost, d);
	gs_metrics_gauge_fn(d->metrics, "gpu_scheduler_ready",
			    "1 while /readyz answers 200 (caches synced, apiserver answering).", NULL, m_ready, d);
}

static int controller_start(struct daemon *d)
{
	struct gs_controller_opts co = {
		.scheduler_name = d->cfg.scheduler_name,
		.annotation = d->cfg.annotation,
		.max_inflight_binds = (unsigned)d->cfg.max_inflight_binds,
		.check_env = d->cfg.require_env,
		.recreate_unmutated = d->cfg.recreate_unmutated,
		.device_sharing_any = strcmp(d->cfg.device_sharing, "any") == 0,
		.node_alias_label = d->cfg.node_alias_label,
		.ignored_resources = d->cfg.ignored_resources,
		.ignored_resource_groups = d->cfg.ignored_resource_groups,
		.gpu_resources = d->cfg.gpu_resources,
		.agent_stale_ms = d->cfg.agent_stale_ms,
		.max_gang_timeout_ms = d->cfg.max_gang_timeout_ms,
		.gang_members_per_ns = d->cfg.gang_members_per_ns,
		.gang_gpus_per_ns = d->cfg.gang_gpus_per_ns,
		.gang_limits = d->cfg.gang_limits,
		.map_cache_bytes = (size_t)d->cfg.map_cache_bytes,
		.gpm_bytes = (size_t)d->cfg.gpm_bytes,
		.gpm_bytes_per_ns = (size_t)d->cfg.gpm_bytes_per_ns,
		.gang_placeholders = d->cfg.gang_placeholders,
		.preemption = d->cfg.preemption,
		.placeholder_image = d->cfg.placeholder_image,
		.engine_audit = d->cfg.engine_audit,
		.mapped_gpu_series = d->cfg.mapped_gpu_series,
		.events = d->cfg.events,
		.leader = d->leader,
		.seed = random_seed(),
	};
	int r = gs_controller_start(&d->loop, d->kube, d->metrics, &co, &d->ctrl);
	if (r < 0)
		gs_log_error("scheduler: cannot start: %s", uv_strerror(r));
	return r;
}

/* The admission decision, and the webhook: served now with the certificate files, or once the
 * self-signed pair is ready (on_pair). */
static int webhook_setup(struct daemon *d)
{
	struct gs_admission_opts ao = {
		.scheduler_name = d->cfg.scheduler_name,
		.annotation = d->cfg.annotation,
		.node_allows = gs_controller_node_allows,
		.node_allows_ud = d->ctrl,
		.node_gpus = gs_controller_node_gpus,
		.node_gpus_ud = d->ctrl,
		.map_lookup = gs_controller_map_lookup,
		.map_lookup_ud = d->ctrl,
		.tolerate_dedicated = d->cfg.tolerate_dedicated,
	};
	int r;

	if ((r = gs_admission_new(&ao, &d->admission)) < 0) {
		gs_log_error("webhook: %s", uv_strerror(r));
		return r;
	}
	gs_webhook_stats_init(&d->wstats);
	gs_webhook_stats_register(&d->wstats, d->metrics);
	if (!d->cfg.self_signed)
		return webhook_start(d, NULL, NULL);
	struct gs_certs_opts co = {
		.ns = d->cfg.namespace_,
		.secret = d->cfg.webhook_secret,
		.service = d->cfg.webhook_service,
		.config_name = d->cfg.webhook_config_name,
		.on_pair = on_pair,
		.may_renew = d->leader ? may_renew : NULL,
		.ud = d,
	};
	if ((r = gs_certs_start(&d->loop, d->kube, &co, &d->certs)) < 0) {
		gs_log_error("webhook: self-signed mode: %s", uv_strerror(r));
		return r;
	}
	gs_log_info("webhook: self-signed mode, certificate in Secret %s/%s; serving once it is ready",
		    d->cfg.namespace_, d->cfg.webhook_secret);
	return 0;
}

static int start(struct daemon *d, struct gs_kubeconfig *kc)
{
	char err[512] = "";
	int r;

	daemon_metrics(d);
	struct gs_kube_opts ko = {
		.kc = kc,
		.max_conns = (unsigned)d->cfg.max_inflight_binds + 8,
		.qps = (double)d->cfg.qps,
		.burst = (unsigned)(d->cfg.burst ? d->cfg.burst : d->cfg.qps),
		.user_agent = "gpu-scheduler/" GS_VERSION,
		.protobuf = strcmp(d->cfg.content_type, "protobuf") == 0,
	};
	if ((r = gs_kube_new(&d->loop, &ko, &d->kube, err, sizeof(err))) < 0) {
		gs_log_error("apiserver client: %s", err);
		return r;
	}
	if (d->cfg.leader_elect && (r = leader_start(d)) < 0)
		return r;
	if ((r = controller_start(d)) < 0 || (r = servers_start(d, kc)) < 0)
		return r;
	return d->cfg.no_webhook ? 0 : webhook_setup(d);
}

/* The loop and the handles main owns: the signals (closed last, docs/architecture.md) and the drain. */
static void on_log_flush(uv_prepare_t *p)
{
	(void)p;
	gs_log_flush();
}

/* The log's batch goes out once per turn: a prepare started before any other and never stopped stays
 * last of the prepares (libuv runs the newest first), so it writes what the pump logged too, just
 * before the loop waits (log.h, gs_log_batch). */
static void loop_init(struct daemon *d)
{
	uv_loop_init(&d->loop);
	uv_prepare_init(&d->loop, &d->log_flush);
	uv_prepare_start(&d->log_flush, on_log_flush);
	gs_log_batch(1);
	uv_signal_init(&d->loop, &d->sigterm);
	uv_signal_init(&d->loop, &d->sigint);
	uv_timer_init(&d->loop, &d->drain);
	d->sigterm.data = d->sigint.data = d->drain.data = d;
	uv_signal_start(&d->sigterm, on_signal, SIGTERM);
	uv_signal_start(&d->sigint, on_signal, SIGINT);
}

int main(int argc, char **argv)
{
	static struct daemon d;
	struct gs_kubeconfig kc;
	char err[512] = "";
	enum gs_log_level level;
	enum gs_log_format format;
	int r;

	if (argc > 1 && strcmp(argv[1], "explain") == 0)
		return gs_explain_cmd(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "status") == 0)
		return gs_status_cmd(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "agent") == 0)
		return gs_agent_cmd(argc - 1, argv + 1);
	memset(&kc, 0, sizeof(kc));
	/* Subcommands: the first argument names one (flags of the daemon all start with '-'). */
	if (argc > 1 && strcmp(argv[1], "lint") == 0)
		return gs_lint_main(argc - 1, argv + 1);
	r = gs_options_parse(gs_main_opts, gs_main_opts_n, argc, argv, &d.cfg, err, sizeof(err));
	if (r == GS_OPTIONS_HELP) {
		usage(stdout);
		return 0;
	}
	if (r == GS_OPTIONS_VERSION) {
		printf("gpu-scheduler %s\n", GS_VERSION);
		return 0;
	}
	if (r < 0 || gs_main_opts_check(&d.cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "gpu-scheduler: %s\n", err);
		return 2;
	}
	gs_log_level_parse(d.cfg.log_level, &level);
	gs_log_format_parse(d.cfg.log_format, &format);
	gs_log_setup(level, format);
	gs_hmap_set_seed(random_seed());
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();

	if (d.cfg.kubeconfig)
		r = gs_kubeconfig_load(d.cfg.kubeconfig, &kc, err, sizeof(err));
	else
		r = gs_kubeconfig_in_cluster(NULL, &kc, err, sizeof(err));
	if (r < 0) {
		gs_log_error("%s", err);
		return 1;
	}
	gs_log_info("gpu-scheduler %s: scheduler %s, annotation %s, node alias label %s, apiserver %s", GS_VERSION,
		    d.cfg.scheduler_name, d.cfg.annotation,
		    d.cfg.node_alias_label && *d.cfg.node_alias_label ? d.cfg.node_alias_label : "(off)", kc.server);

	loop_init(&d);

	if (start(&d, &kc) < 0) {
		/* A startup failure is fatal; the handles already made die with the process. */
		gs_kubeconfig_free(&kc);
		return 1;
	}
	gs_kubeconfig_free(&kc);

	uv_run(&d.loop, UV_RUN_DEFAULT);
	r = uv_loop_close(&d.loop);
	if (r != 0)
		gs_log_warn("event loop closed with handles still open: %s", uv_strerror(r));
	gs_metrics_free(d.metrics);
	if (d.admission) {
		gs_admission_free(d.admission);
		gs_webhook_stats_free(&d.wstats);
	}
	return d.exit_code;
}
