/*
 * engine.c: gpu-scheduler-engine-bench, the placement engine alone (src/sched), no apiserver: how many
 * decisions per second and how many bytes per pod it keeps, with and without pods of other schedulers.
 * The same records the daemon feeds it, built in memory instead of decoded.
 *
 *   build/gpu-scheduler-engine-bench [--pods 10000] [--nodes 1000] [--foreign 0] [--map-lines 1000]
 *
 * Pods come in StatefulSet-like groups of --map-lines sharing one map (pod i: node bn-(i mod nodes),
 * GPU (i div nodes) mod 8, allow-shared-devices, each its own owner, like bench.c's "sts" shape).
 * Foreign pods are bound at once (10m cpu, 16Mi), spread over the nodes. Phases, each timed:
 *   nodes   node upserts (8 GPUs, 64 cpu, 512Gi, 1000 pods)
 *   foreign pod upserts of the foreign pods
 *   pending pod upserts of our pods
 *   bind    every decision pulled, each answered GS_BIND_OK (the engine's part of a binding)
 *   watched the watch's MODIFIED with spec.nodeName for each of ours
 * Memory: bytes malloc holds (mallinfo2's uordblks) after each phase, minus before the engine; per
 * pod. Deterministic: same inputs, same decisions; run it under `valgrind --tool=callgrind` for
 * instruction counts that do not depend on the machine's load.
 */
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "core/log.h"
#include "sched/sched.h"

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static size_t heap_bytes(void)
{
	return mallinfo2().uordblks;
}

struct phase {
	const char *name;
	int64_t ns;
	size_t bytes;
	int n;
};

static void pod_init(struct gs_pod_obj *p, char *uid, char *name, const char *sched, char *map)
{
	memset(p, 0, sizeof(*p));
	p->uid = uid;
	p->ns = "bench";
	p->name = name;
	p->scheduler_name = (char *)sched;
	p->map_text = map;
	p->map_len = map ? strlen(map) : 0;
	p->n_containers = 1;
}

int main(int argc, char **argv)
{
	int pods = 10000, nodes = 1000, foreign = 0, lines = 1000, o;
	static const struct option lo[] = {{"pods", 1, 0, 'p'},      {"nodes", 1, 0, 'n'}, {"foreign", 1, 0, 'f'},
					   {"map-lines", 1, 0, 'm'}, {"help", 0, 0, 'h'},  {0, 0, 0, 0}};
	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 'p': pods = atoi(optarg); break;
		case 'n': nodes = atoi(optarg); break;
		case 'f': foreign = atoi(optarg); break;
		case 'm': lines = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: gpu-scheduler-engine-bench [--pods N] [--nodes M] [--foreign F] [--map-lines L]\n");
			return o == 'h' ? 0 : 2;
		}
	}
	if (pods < 1 || nodes < 1 || foreign < 0 || lines < 1)
		return 2;
	gs_log_setup(GS_LOG_WARN, GS_LOG_TEXT);

	/* The maps, one per group, as the annotation text. */
	int groups = (pods + lines - 1) / lines;
	char **maps = calloc((size_t)groups, sizeof(*maps));
	for (int g = 0; g < groups; g++) {
		struct gs_buf b;
		gs_buf_init(&b, 0);
		for (int j = 0; j < lines && g * lines + j < pods; j++) {
			int i = g * lines + j;
			gs_buf_printf(&b, "%d=bn-%d:%d\n", j, i % nodes, (i / nodes) % 8);
		}
		maps[g] = strdup(b.data);
		gs_buf_free(&b);
	}

	size_t base = heap_bytes();
	struct gs_sched_config cfg;
	gs_sched_config_init(&cfg);
	cfg.check_env = 0;
	struct gs_sched *s = gs_sched_new(&cfg);
	struct phase ph[5];
	char uid[64], name[64], node[64];
	struct gs_bind_decision d;
	int64_t t;

	/* nodes */
	t = now_ns();
	for (int i = 0; i < nodes; i++) {
		struct gs_res_ext gpu = {"nvidia.com/gpu", 8};
		struct gs_node_obj n = {.ready = 1, .gpus = 8};
		snprintf(node, sizeof(node), "bn-%d", i);
		n.name = node;
		n.alloc = (struct gs_resources){.milli_cpu = 64000, .memory = 512LL << 30, .pods = 1000, .n_ext = 1, .ext = &gpu};
		gs_sched_node_upsert(s, &n, 0);
	}
	ph[0] = (struct phase){"nodes", now_ns() - t, heap_bytes() - base, nodes};

	/* foreign pods, bound */
	t = now_ns();
	for (int i = 0; i < foreign; i++) {
		struct gs_resources req = {.milli_cpu = 10, .memory = 16 << 20};
		struct gs_pod_obj p;
		snprintf(uid, sizeof(uid), "f0000000-0000-4000-8000-%012d", i);
		snprintf(name, sizeof(name), "f-%d", i);
		snprintf(node, sizeof(node), "bn-%d", i % nodes);
		pod_init(&p, uid, name, "default-scheduler", NULL);
		p.node_name = node;
		p.n_ctr = 1;
		p.ctr_req = &req;
		gs_sched_pod_upsert(s, &p, 0);
	}
	ph[1] = (struct phase){"foreign", now_ns() - t, heap_bytes() - base, foreign};

	/* pending pods of ours */
	t = now_ns();
	for (int i = 0; i < pods; i++) {
		struct gs_pod_obj p;
		snprintf(uid, sizeof(uid), "00000000-0000-4000-8000-%012d", i);
		snprintf(name, sizeof(name), "g%d-%d", i / lines, i % lines);
		pod_init(&p, uid, name, "gpu-scheduler", maps[i / lines]);
		p.allow_shared = 1;
		gs_sched_pod_upsert(s, &p, 0);
	}
	ph[2] = (struct phase){"pending", now_ns() - t, heap_bytes() - base, pods};

	/* every decision, answered OK */
	int bound = 0;
	t = now_ns();
	while (gs_sched_next_bind(s, 0, &d)) {
		snprintf(uid, sizeof(uid), "%s", d.uid);
		gs_sched_bind_done(s, uid, GS_BIND_OK, 0);
		bound++;
	}
	ph[3] = (struct phase){"bind", now_ns() - t, heap_bytes() - base, bound};

	/* the watch shows them bound */
	t = now_ns();
	for (int i = 0; i < pods; i++) {
		struct gs_pod_obj p;
		char assigned[160];
		snprintf(uid, sizeof(uid), "00000000-0000-4000-8000-%012d", i);
		snprintf(name, sizeof(name), "g%d-%d", i / lines, i % lines);
		snprintf(node, sizeof(node), "bn-%d", i % nodes);
		snprintf(assigned, sizeof(assigned), "%s:%d", node, (i / nodes) % 8);
		pod_init(&p, uid, name, "gpu-scheduler", maps[i / lines]);
		p.allow_shared = 1;
		p.node_name = node;
		p.assigned = assigned;
		gs_sched_pod_upsert(s, &p, 0);
	}
	ph[4] = (struct phase){"watched", now_ns() - t, heap_bytes() - base, pods};

	struct gs_sched_stats st;
	gs_sched_stats(s, &st);
	printf("%d pods of ours (%d map lines a group), %d nodes, %d foreign pods: %d bound, %zu uses, %zu devices held\n",
	       pods, lines, nodes, foreign, bound, st.uses, st.devices_held);
	printf("%-8s %8s %10s %12s %12s\n", "phase", "items", "us/item", "heap MiB", "heap B/pod");
	for (int k = 0; k < 5; k++) {
		int all = pods + foreign;
		printf("%-8s %8d %10.2f %12.2f %12.0f\n", ph[k].name, ph[k].n,
		       ph[k].n ? (double)ph[k].ns / 1000.0 / ph[k].n : 0.0, (double)ph[k].bytes / (1 << 20),
		       all ? (double)ph[k].bytes / all : 0.0);
	}
	gs_sched_free(s);
	for (int g = 0; g < groups; g++)
		free(maps[g]);
	free(maps);
	return bound == pods ? 0 : 1;
}
