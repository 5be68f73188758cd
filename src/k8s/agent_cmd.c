/*
 * agent_cmd.c: `gpu-scheduler agent` (agent_cmd.h): a poll of the kubelet's PodResources socket on one
 * loop, the gRPC client underneath; the list is kept as its printed text, so "changed" is a string
 * compare (a few KiB at most per node).
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
#include "k8s/podresources.h"

struct agent {
	uv_loop_t loop;
	uv_timer_t tick;
	uv_signal_t sigint, sigterm;
	struct gs_grpc_client *cl;
	const char *socket;
	unsigned interval_ms, timeout_ms;
	int once, print, rc, stopping;
	char *last;          /* the last list, as printed; NULL before the first success */
	int last_failed;     /* the last call failed (logged once per failure streak) */
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

static void agent_got(struct agent *a, const struct gs_podres_list *l)
{
	struct gs_buf text;
	gs_buf_init(&text, 0);
	agent_format(l, &text);
	int changed = !a->last || strcmp(a->last, text.data ? text.data : "") != 0;
	if (a->once || (changed && a->print))
		fputs(text.data ? text.data : "", stdout), fflush(stdout);
	if (!a->once && changed)
		gs_log_info("agent: %s: %zu devices held by %zu pods (%zu containers)%s", a->socket, l->n, l->pods,
			    l->containers, a->last ? ", changed" : "");
	if (a->last_failed && !a->once)
		gs_log_info("agent: %s: answering again", a->socket);
	a->last_failed = 0;
	free(a->last);
	a->last = gs_xstrdup(text.data ? text.data : "");
	gs_buf_free(&text);
}

static void agent_call(struct agent *a);

static void agent_tick(uv_timer_t *t)
{
	agent_call(t->data);
}

static void agent_done(int err, const struct gs_grpc_reply *r, void *ud)
{
	struct agent *a = ud;
	struct gs_podres_list l;
	char why[512];
	if (err == -ECANCELED && a->stopping)
		return; /* the call in flight when a signal ended the agent */
	if (err == 0 && gs_podres_decode(r->msg, r->len, &l, why, sizeof why) == 0) {
		agent_got(a, &l);
		gs_podres_free(&l);
	} else {
		if (err)
			snprintf(why, sizeof why, "%s", r->error);
		if (a->once)
			fprintf(stderr, "gpu-scheduler agent: %s\n", why);
		else if (!a->last_failed)
			gs_log_error("agent: %s (retrying every %u ms)", why, a->interval_ms);
		a->last_failed = 1;
		a->rc = 1;
	}
	if (a->once)
		agent_stop(a);
	else if (!a->stopping)
		uv_timer_start(&a->tick, agent_tick, a->interval_ms, 0);
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
	fprintf(f, "Usage: gpu-scheduler agent [--socket PATH] [--once] [--print] [--interval-ms N] [--timeout-ms N]\n"
		   "Calls the kubelet's PodResources List (default socket %s) and prints the devices held.\n",
		GS_PODRES_SOCKET);
	return f == stdout ? 0 : 2;
}

static int agent_uint(const char *s, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || v == 0 || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

int gs_agent_cmd(int argc, char **argv)
{
	static const struct option longs[] = {
		{"socket", required_argument, NULL, 's'},    {"once", no_argument, NULL, '1'},
		{"print", no_argument, NULL, 'p'},           {"interval-ms", required_argument, NULL, 'i'},
		{"timeout-ms", required_argument, NULL, 't'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static struct agent a;
	struct gs_grpc_client_opts o = {0};
	int c;
	memset(&a, 0, sizeof a); /* static for its size and the handles' lifetime; fresh on every call (tests) */
	a.socket = GS_PODRES_SOCKET;
	a.interval_ms = 10000;
	a.timeout_ms = 10000;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		switch (c) {
		case 's': a.socket = optarg; break;
		case '1': a.once = 1; break;
		case 'p': a.print = 1; break;
		case 'i':
			if (agent_uint(optarg, 86400000u, &a.interval_ms) < 0)
				return fprintf(stderr, "gpu-scheduler agent: --interval-ms: 1..86400000\n"), 2;
			break;
		case 't':
			if (agent_uint(optarg, GS_GRPC_MAX_DEADLINE_MS, &a.timeout_ms) < 0)
				return fprintf(stderr, "gpu-scheduler agent: --timeout-ms: 1..%u\n", GS_GRPC_MAX_DEADLINE_MS), 2;
			break;
		case 'h': return agent_usage(stdout);
		default: return agent_usage(stderr);
		}
	}
	if (optind != argc)
		return agent_usage(stderr);
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
	if (!a.once)
		gs_log_info("agent: polling %s every %u ms", a.socket, a.interval_ms);
	agent_call(&a);
	uv_run(&a.loop, UV_RUN_DEFAULT);
	free(a.last);
	GS_ASSERT(uv_loop_close(&a.loop) == 0);
	return a.rc;
}
