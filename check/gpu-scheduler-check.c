/*
 * gpu-scheduler-check: the test service. Every interval it prints one line with the node it runs on
 * and the CUDA_VISIBLE_DEVICES it was given, so `kubectl logs` shows where the scheduler put it:
 *
 *   2026-11-22T10:00:00Z node=node4 CUDA_VISIBLE_DEVICES=3 pod=gpu-scheduler-check-4
 *
 * The node comes from NODE_NAME (the downward API), else the hostname. Options: --interval SECONDS
 * (env CHECK_INTERVAL, default 10), --once (print one line and exit, for tests). SIGTERM and SIGINT
 * end it at once with status 0. libc only; linked statically.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int parse_interval(const char *s, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 86400)
		return -1;
	*out = v;
	return 0;
}

static void report(void)
{
	char host[256] = "unknown", ts[32];
	const char *node = getenv("NODE_NAME");
	const char *cuda = getenv("CUDA_VISIBLE_DEVICES");
	const char *pod = getenv("POD_NAME");
	time_t now = time(NULL);
	struct tm tm;

	if (!node || !*node) {
		if (gethostname(host, sizeof(host) - 1) != 0)
			strcpy(host, "unknown");
		node = host;
	}
	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("%s node=%s CUDA_VISIBLE_DEVICES=%s", ts, node, cuda ? cuda : "unset");
	if (pod && *pod)
		printf(" pod=%s", pod);
	putchar('\n');
	fflush(stdout);
}

int main(int argc, char **argv)
{
	long interval = 10;
	int once = 0;
	const char *env = getenv("CHECK_INTERVAL");

	if (env && *env && parse_interval(env, &interval) < 0) {
		fprintf(stderr, "gpu-scheduler-check: CHECK_INTERVAL=%s is not a number of seconds (1..86400)\n", env);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--once") == 0) {
			once = 1;
		} else if (strcmp(argv[i], "--interval") == 0 && i + 1 < argc) {
			if (parse_interval(argv[++i], &interval) < 0) {
				fprintf(stderr, "gpu-scheduler-check: --interval %s is not a number of seconds (1..86400)\n",
					argv[i]);
				return 2;
			}
		} else if (strcmp(argv[i], "--help") == 0) {
			printf("Usage: gpu-scheduler-check [--interval SECONDS] [--once]\n"
			       "Prints the node name and CUDA_VISIBLE_DEVICES every interval (env CHECK_INTERVAL).\n");
			return 0;
		} else {
			fprintf(stderr, "gpu-scheduler-check: unknown argument %s (see --help)\n", argv[i]);
			return 2;
		}
	}

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: the sleep below returns at once */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	while (!stop) {
		report();
		if (once)
			break;
		struct timespec left = {.tv_sec = interval, .tv_nsec = 0};
		while (!stop && nanosleep(&left, &left) != 0 && errno == EINTR)
			;
	}
	return 0;
}
