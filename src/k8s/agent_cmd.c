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
#include "core/closer.h"
#include "core/grpc.h"
#include "core/log.h"
#include "k8s/agent.h"
#include "k8s/agent_nvml.h"
#include "k8s/agent_run.h"
#include "k8s/kubeconfig.h"
#include "k8s/podresources.h"

struct agent {
	uv_loop_t loop;
	uv_signal_t sigint, sigterm;
	struct gs_grpc_client *cl;
	const char *socket;
	unsigned timeout_ms;
	int rc;
	struct gs_closer closer; /* agent_stop */
};

/* The close protocol (core/closer.h) with no release and no close_cb: the agent is static, and
 * agent_once's uv_run returns once every part is closed. */
static void agent_stop(struct agent *a)
{
	if (gs_closer_closing(&a->closer))
		return;
	gs_closer_start(&a->closer, NULL, NULL, NULL);
	gs_closer_hold(&a->closer);
	gs_grpc_client_close(a->cl, gs_closer_drop_cb, &a->closer);
	gs_closer_uv(&a->closer, (uv_handle_t *)&a->sigint);
	gs_closer_uv(&a->closer, (uv_handle_t *)&a->sigterm);
	gs_closer_arm(&a->closer);
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
	if (err == -ECANCELED && gs_closer_closing(&a->closer))
		return; /* the call in flight when a signal ended the agent */
	if (err == 0 && gs_podres_list_decode(r->msg, r->len, &l, why, sizeof why) == 0) {
		struct gs_buf text;
		gs_buf_init(&text, 0);
		agent_format(&l, &text);
		fputs(text.data ? text.data : "", stdout);
		fflush(stdout);
		gs_buf_free(&text);
		gs_podres_list_free(&l);
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
		"  --nvml-library PATH     the driver's NVML, for its MIG instances (default %s; \"\": none)\n"
		"  --addr HOST:PORT        /healthz and /metrics (default :10262)\n"
		"  --log-level LEVEL       error, warn, info (default), debug\n"
		"  --log-format FORMAT     text (default) or json\n",
		GS_PODRES_SOCKET, GS_AGENT_RESOURCES, GS_AGENT_NVIDIA_PROC_DIR, GS_AGENT_NVML_LIBRARY);
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

/* The command line, parsed. */
struct agent_args {
	struct gs_agent_opts o;
	const char *kubeconfig;
	enum gs_log_level level;
	enum gs_log_format format;
	int once;
};

/* One option of getopt_long's (c, optarg) into x: -1 to go on, else the exit code (the message written). */
static int agent_opt(int c, struct agent_args *x)
{
	switch (c) {
	case 's':
		x->o.socket = optarg;
		break;
	case '1':
		x->once = 1;
		break;
	case 'p':
		break; /* --once prints; kept for old command lines */
	case 'n':
		x->o.node = optarg;
		break;
	case 'k':
		x->kubeconfig = optarg;
		break;
	case 'r':
		x->o.resources = optarg;
		break;
	case 'd':
		x->o.proc_dir = optarg;
		break;
	case 'N':
		x->o.nvml_library = optarg;
		break;
	case 'a':
		x->o.addr = optarg;
		break;
	case 'i':
		if (agent_uint(optarg, 1, 86400000u, &x->o.interval_ms) < 0)
			return bad("--interval-ms", 1, 86400000u);
		break;
	case 't':
		if (agent_uint(optarg, 1, GS_GRPC_MAX_DEADLINE_MS, &x->o.timeout_ms) < 0)
			return bad("--timeout-ms", 1, GS_GRPC_MAX_DEADLINE_MS);
		break;
	case 'H':
		if (agent_uint(optarg, 1, 86400, &x->o.heartbeat_s) < 0)
			return bad("--heartbeat-s", 1, 86400);
		break;
	case 'S':
		if (agent_uint(optarg, 0, 86400, &x->o.settle_s) < 0)
			return bad("--settle-s", 0, 86400);
		break;
	case 'l':
		if (gs_log_level_parse(optarg, &x->level) < 0)
			return fprintf(stderr, "gpu-scheduler agent: --log-level: error, warn, info, debug, trace\n"),
			       2;
		break;
	case 'f':
		if (gs_log_format_parse(optarg, &x->format) < 0)
			return fprintf(stderr, "gpu-scheduler agent: --log-format: text or json\n"), 2;
		break;
	case 'h':
		return agent_usage(stdout);
	default:
		return agent_usage(stderr);
	}
	return -1;
}

/* The daemon, once the command line is valid: its log, the apiserver's access, gs_agent_run. */
static int agent_daemon(struct agent_args *x)
{
	struct gs_kubeconfig kc;
	char err[512];
	int r;

	gs_log_setup(x->level, x->format);
	r = x->kubeconfig ? gs_kubeconfig_load(x->kubeconfig, &kc, err, sizeof err)
			  : gs_kubeconfig_in_cluster(NULL, &kc, err, sizeof err);
	if (r < 0) {
		gs_log_error("agent: %s", err);
		return 1;
	}
	x->o.kc = &kc;
	r = gs_agent_run(&x->o);
	gs_kubeconfig_free(&kc);
	return r;
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
		{"nvml-library", required_argument, NULL, 'N'},
		{"addr", required_argument, NULL, 'a'},
		{"log-level", required_argument, NULL, 'l'},
		{"log-format", required_argument, NULL, 'f'},
		{NULL, 0, NULL, 0},
	};
	const struct gs_agent_opts defaults = {
		.node = getenv("NODE_NAME"),
		.socket = GS_PODRES_SOCKET,
		.resources = GS_AGENT_RESOURCES,
		.proc_dir = GS_AGENT_NVIDIA_PROC_DIR,
		.nvml_library = GS_AGENT_NVML_LIBRARY,
		.addr = ":10262",
		.interval_ms = 10000,
		.timeout_ms = 10000,
		.heartbeat_s = 600,
		.settle_s = 30,
	};
	struct agent_args x = {.o = defaults, .level = GS_LOG_INFO, .format = GS_LOG_TEXT};
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1)
		if ((r = agent_opt(c, &x)) >= 0)
			return r;
	if (optind != argc)
		return agent_usage(stderr);
	if (x.once)
		return agent_once(x.o.socket, x.o.timeout_ms);
	if (!x.o.node || !*x.o.node)
		return fprintf(stderr, "gpu-scheduler agent: --node (or env NODE_NAME) is required\n"), 2;
	if (!*x.o.resources)
		return fprintf(stderr, "gpu-scheduler agent: --resources: empty\n"), 2;
	return agent_daemon(&x);
}
