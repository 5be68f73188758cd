/*
 * agent_cmd.c: `gpu-scheduler agent` (agent_cmd.h): the flags; --once here (one List on its own loop,
 * printed), the daemon in agent_run.c.
 */
#include "k8s/agent_cmd.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/grpc.h"
#include "core/log.h"
#include "k8s/agent.h"
#include "k8s/agent_run.h"
#include "k8s/kubeconfig.h"
#include "k8s/podresources.h"

struct agent {
	uv_loop_t loop;
	uv_timer_t tick;
	uv_signal_t sigint, sigterm;
	struct gs_grpc_client *cl;
	const char *socket;
	unsigned timeout_ms;
	int rc, stopping;
};

static void agent_stop(struct agent *a)
{
	if (a->stopping)
		return;
	a->stopping = 1;
	gs_grpc_client_close(a->cl, NULL, NULL);
	uv_close((uv_handle_t *)&a->tick, NULL);
	uv_close((uv_handle_t *)&a->sigint, NULL);
	uv_close((uv_handle_t *)&a->sigterm, NULL);
}

static void agent_format(const struct gs_podres_list *l, struct gs_buf *out)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct gs_podres_dev *d = &l->devs[i];
		if (gs_buf_printf(out, "%s/%s %s %s %s\n", d->ns, d->pod, d->container, d->resource, d->id) < 0)
			gs_oom(0);
	}
}

static void agent_done(int err, const struct gs_grpc_reply *r, void *ud)
{
	struct agent *a = ud;
	struct gs_podres_list l;
	char why[512];
	if (err == -ECANCELED && a->stopping)
		return; /* the call in flight when a signal ended the agent */
	if (err == 0 && gs_podres_decode(r->msg, r->len, &l, why, sizeof why) == 0) {
		struct gs_buf text;
		gs_buf_init(&text, 0);
		agent_format(&l, &text);
		fputs(text.data ? text.data : "", stdout);
		fflush(stdout);
		gs_buf_free(&text);
		gs_podres_free(&l);
	} else {
		fprintf(stderr, "gpu-scheduler agent: %s\n", err ? r->error : why);
		a->rc = 1;
	}
	agent_stop(a);
}

static void agent_call(struct agent *a)
{
	int rc = gs_grpc_call(a->cl, GS_PODRES_LIST_METHOD, NULL, 0, a->timeout_ms, agent_done, a);
	if (rc < 0) { /* only bad arguments fail here */
		fprintf(stderr, "gpu-scheduler agent: %s\n", uv_strerror(rc));
		a->rc = 1;
		agent_stop(a);
	}
}

static void agent_signal(uv_signal_t *s, int signum)
{
	struct agent *a = s->data;
	a->rc = 0;
	agent_stop(a);
}

static int agent_usage(FILE *f)
{
	fprintf(f,
		"Usage: gpu-scheduler agent --node NAME [OPTIONS]   the node agent (a DaemonSet, docs/agent.md)\n"
		"       gpu-scheduler agent --once [--socket PATH] [--timeout-ms N]\n"
		"Asks the kubelet's PodResources API which pod holds which device, and publishes it on the\n"
		"node's annotation " GS_INUSE_ANNOTATION " for the scheduler. --once prints one\n"
		"List (NAMESPACE/POD CONTAINER RESOURCE ID per device) and exits.\n\n"
		"  --node NAME             the node this agent runs on (default: env NODE_NAME)\n"
		"  --kubeconfig PATH       apiserver access (default: the in-cluster service account)\n"
		"  --socket PATH           the kubelet's socket (default %s)\n"
		"  --interval-ms N         List every N ms (default 10000), and soon after the node's pod events\n"
		"  --timeout-ms N          deadline of one List (default 10000)\n"
		"  --heartbeat-s N         write the annotation again after N s even if unchanged (default 600)\n"
		"  --settle-s N            after (re)connecting to the kubelet, keep publishing what was\n"
		"                          published for N s too (default 30; 0: off)\n"
		"  --resources LIST        resource names, or prefixes ending in '/' (default %s)\n"
		"  --nvidia-proc-dir DIR   the driver's GPU list, for the GPU index table (default %s)\n"
		"  --addr HOST:PORT        /healthz and /metrics (default :10262)\n"
		"  --log-level LEVEL       error, warn, info (default), debug\n"
		"  --log-format FORMAT     text (default) or json\n",
		GS_PODRES_SOCKET, GS_AGENT_RESOURCES, GS_AGENT_NVIDIA_PROC_DIR);
	return f == stdout ? 0 : 2;
}

static int agent_uint(const char *s, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || *s == '-' || v < min || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int agent_once(const char *socket, unsigned timeout_ms)
{
	static struct agent a;
	struct gs_grpc_client_opts o = {0};
	memset(&a, 0, sizeof a); /* static for its size and the handles' lifetime; fresh on every call (tests) */
	a.socket = socket;
	a.timeout_ms = timeout_ms;
	signal(SIGPIPE, SIG_IGN);
	o.path = a.socket;
	uv_loop_init(&a.loop);
	if (gs_grpc_client_new(&a.loop, &o, &a.cl) < 0) {
		fprintf(stderr, "gpu-scheduler agent: --socket %s: not a usable unix socket path\n", a.socket);
		uv_loop_close(&a.loop);
		return 2;
	}
	uv_timer_init(&a.loop, &a.tick);
	a.tick.data = &a;
	uv_signal_init(&a.loop, &a.sigint);
	uv_signal_init(&a.loop, &a.sigterm);
	a.sigint.data = a.sigterm.data = &a;
	uv_signal_start(&a.sigint, agent_signal, SIGINT);
	uv_signal_start(&a.sigterm, agent_signal, SIGTERM);
	agent_call(&a);
	uv_run(&a.loop, UV_RUN_DEFAULT);
	GS_ASSERT(uv_loop_close(&a.loop) == 0);
	return a.rc;
}

/* "--flag: 1..N" on stderr, exit code 2 */
static int bad(const char *flag, unsigned min, unsigned max)
{
	fprintf(stderr, "gpu-scheduler agent: %s: %u..%u\n", flag, min, max);
	return 2;
}

int gs_agent_cmd(int argc, char **argv)
{
	static const struct option longs[] = {
		{"socket", required_argument, NULL, 's'},
		{"once", no_argument, NULL, '1'},
		{"print", no_argument, NULL, 'p'},
		{"interval-ms", required_argument, NULL, 'i'},
		{"timeout-ms", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{"node", required_argument, NULL, 'n'},
		{"kubeconfig", required_argument, NULL, 'k'},
		{"heartbeat-s", required_argument, NULL, 'H'},
		{"settle-s", required_argument, NULL, 'S'},
		{"resources", required_argument, NULL, 'r'},
		{"nvidia-proc-dir", required_argument, NULL, 'd'},
		{"addr", required_argument, NULL, 'a'},
		{"log-level", required_argument, NULL, 'l'},
		{"log-format", required_argument, NULL, 'f'},
		{NULL, 0, NULL, 0},
	};
	struct gs_agent_opts o = {
		.node = getenv("NODE_NAME"),
		.socket = GS_PODRES_SOCKET,
		.resources = GS_AGENT_RESOURCES,
		.proc_dir = GS_AGENT_NVIDIA_PROC_DIR,
		.addr = ":10262",
		.interval_ms = 10000,
		.timeout_ms = 10000,
		.heartbeat_s = 600,
		.settle_s = 30,
	};
	const char *kubeconfig = NULL;
	enum gs_log_level level = GS_LOG_INFO;
	enum gs_log_format format = GS_LOG_TEXT;
	struct gs_kubeconfig kc;
	char err[512];
	int c, once = 0, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		switch (c) {
		case 's':
			o.socket = optarg;
			break;
		case '1':
			once = 1;
			break;
		case 'p':
			break; /* --once prints; kept for old command lines */
		case 'n':
			o.node = optarg;
			break;
		case 'k':
			kubeconfig = optarg;
			break;
		case 'r':
			o.resources = optarg;
			break;
		case 'd':
			o.proc_dir = optarg;
			break;
		case 'a':
			o.addr = optarg;
			break;
		case 'i':
			if (agent_uint(optarg, 1, 86400000u, &o.interval_ms) < 0)
				return bad("--interval-ms", 1, 86400000u);
			break;
		case 't':
			if (agent_uint(optarg, 1, GS_GRPC_MAX_DEADLINE_MS, &o.timeout_ms) < 0)
				return bad("--timeout-ms", 1, GS_GRPC_MAX_DEADLINE_MS);
			break;
		case 'H':
			if (agent_uint(optarg, 1, 86400, &o.heartbeat_s) < 0)
				return bad("--heartbeat-s", 1, 86400);
			break;
		case 'S':
			if (agent_uint(optarg, 0, 86400, &o.settle_s) < 0)
				return bad("--settle-s", 0, 86400);
			break;
		case 'l':
			if (gs_log_level_parse(optarg, &level) < 0)
				return fprintf(stderr,
					       "gpu-scheduler agent: --log-level: error, warn, info, debug, trace\n"),
				       2;
			break;
		case 'f':
			if (gs_log_format_parse(optarg, &format) < 0)
				return fprintf(stderr, "gpu-scheduler agent: --log-format: text or json\n"), 2;
			break;
		case 'h':
			return agent_usage(stdout);
		default:
			return agent_usage(stderr);
		}
	}
	if (optind != argc)
		return agent_usage(stderr);
	if (once)
		return agent_once(o.socket, o.timeout_ms);
	if (!o.node || !*o.node)
		return fprintf(stderr, "gpu-scheduler agent: --node (or env NODE_NAME) is required\n"), 2;
	if (!*o.resources)
		return fprintf(stderr, "gpu-scheduler agent: --resources: empty\n"), 2;
	gs_log_setup(level, format);
	r = kubeconfig ? gs_kubeconfig_load(kubeconfig, &kc, err, sizeof err)
		       : gs_kubeconfig_in_cluster(NULL, &kc, err, sizeof err);
	if (r < 0) {
		gs_log_error("agent: %s", err);
		return 1;
	}
	o.kc = &kc;
	r = gs_agent_run(&o);
	gs_kubeconfig_free(&kc);
	return r;
}
