/*
 * test_golden_sched.c: replays the placement transcripts in tests/golden/sched/ (llhttp style: events
 * in, decisions out) and compares, byte for byte, with what is written there.
 *
 * A transcript is a text file. Input lines are commands; after each `pull` the runner writes the
 * decisions the engine hands out, each on a line starting with "> ". The expected transcript is the
 * file itself: the runner rebuilds it from the commands alone (dropping the "> " lines it finds) and
 * the two must match. GS_GOLDEN_UPDATE=1 rewrites the files instead (review the diff before committing).
 *
 * Commands (fields separated by blanks; a map's lines are separated by '|'):
 *   config check_env=0|1 recreate=0|1         before anything else; a new engine
 *   node NAME [notready] [cordoned] [gpus=N|gpus=none]   upsert (4 GPUs unless said)
 *   node-delete NAME
 *   pod UID NS/NAME [key=value...]            upsert; keys: map= sched= node= owner= cuda= cuda-mixed
 *                                             label-index= job-index= rv= deleting terminal
 *   pod-delete UID
 *   bind-done UID ok|gone|retry
 *   time MS                                   advance the clock by MS
 *   pull                                      binds until none, then reports until none
 *   state UID                                 prints the pod's state, reason and attempts
 *   # comment, and empty lines, are kept as they are
 * Output lines:
 *   > bind NS/NAME node=NODE devices=DEVS index=I (SOURCE) line=L attempt=A
 *   > report NS/NAME REASON: MESSAGE [recreate]
 *   > state UID STATE [REASON] attempts=A
 *   > error: ...                              a command the engine refused (its return code)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "sched/sched.h"

#define GOLDEN_DIR_DEFAULT "tests/golden/sched"

struct replay {
	struct gs_sched *s;
	struct gs_sched_config cfg;
	int64_t now;
	struct gs_buf out;
};

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void emit(struct replay *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(struct replay *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	assert_int_equal(gs_buf_vprintf(&r->out, fmt, ap), 0);
	va_end(ap);
}

static void new_engine(struct replay *r)
{
	gs_sched_free(r->s);
	r->s = gs_sched_new(&r->cfg);
	assert_non_null(r->s);
}

/* Map text from the transcript form: '|' separates lines. */
static char *map_text(const char *v)
{
	char *t = strdup(v);
	for (char *p = t; *p; p++)
		if (*p == '|')
			*p = '\n';
	return t;
}

static void cmd_pod(struct replay *r, char **tok, int n)
{
	struct gs_pod_obj p;
	memset(&p, 0, sizeof(p));
	char *slash = strchr(tok[2], '/');
	assert_non_null(slash);
	*slash = '\0';
	p.uid = xstrdup(tok[1]);
	p.ns = xstrdup(tok[2]);
	p.name = xstrdup(slash + 1);
	p.scheduler_name = xstrdup("gpu-scheduler");
	p.n_containers = 1;
	for (int i = 3; i < n; i++) {
		char *eq = strchr(tok[i], '=');
		const char *k = tok[i], *v = eq ? eq + 1 : "";
		if (eq)
			*eq = '\0';
		if (!strcmp(k, "map")) {
			p.map_text = map_text(v);
		} else if (!strcmp(k, "sched")) {
			free(p.scheduler_name);
			p.scheduler_name = xstrdup(v);
		} else if (!strcmp(k, "node")) {
			p.node_name = xstrdup(v);
		} else if (!strcmp(k, "owner")) {
			p.owner_kind = xstrdup(v);
			p.owner_name = xstrdup("owner");
		} else if (!strcmp(k, "cuda")) {
			p.cuda_state = GS_CUDA_SAME;
			p.cuda_value = xstrdup(v);
		} else if (!strcmp(k, "cuda-mixed")) {
			p.cuda_state = GS_CUDA_MIXED;
		} else if (!strcmp(k, "label-index")) {
			p.label_pod_index = xstrdup(v);
		} else if (!strcmp(k, "job-index")) {
			p.job_index = xstrdup(v);
		} else if (!strcmp(k, "rv")) {
			p.resource_version = xstrdup(v);
		} else if (!strcmp(k, "deleting")) {
			p.deleting = 1;
		} else if (!strcmp(k, "terminal")) {
			p.terminal = 1;
		} else {
			fail_msg("unknown pod key %s", k);
		}
	}
	int rc = gs_sched_pod_upsert(r->s, &p, r->now);
	if (rc < 0)
		emit(r, "> error: pod_upsert %d\n", rc);
	gs_pod_obj_free(&p);
}

static void cmd_pull(struct replay *r)
{
	struct gs_bind_decision d;
	while (gs_sched_next_bind(r->s, r->now, &d))
		emit(r, "> bind %s/%s node=%s devices=%s index=%ld (%s) line=%d attempt=%u\n", d.ns, d.name, d.node,
		     d.devices, d.index, gs_index_source_name(d.index_source), d.map_line, d.attempt);
	struct gs_report rep;
	while (gs_sched_next_report(r->s, r->now, &rep))
		emit(r, "> report %s/%s %s: %s%s\n", rep.ns, rep.name, gs_wait_reason_name(rep.reason), rep.message,
		     rep.recreate ? " [recreate]" : "");
}

static void run_line(struct replay *r, char *line)
{
	char *tok[32];
	int n = 0;
	for (char *t = strtok(line, " \t"); t && n < 32; t = strtok(NULL, " \t"))
		tok[n++] = t;
	if (n == 0 || tok[0][0] == '#')
		return;
	const char *c = tok[0];
	if (!strcmp(c, "config")) {
		for (int i = 1; i < n; i++) {
			if (!strncmp(tok[i], "check_env=", 10))
				r->cfg.check_env = atoi(tok[i] + 10);
			else if (!strncmp(tok[i], "recreate=", 9))
				r->cfg.recreate_unmutated = atoi(tok[i] + 9);
		}
		new_engine(r);
	} else if (!strcmp(c, "node")) {
		struct gs_node_obj nd = {.name = tok[1], .ready = 1, .gpus = 4};
		for (int i = 2; i < n; i++) {
			if (!strcmp(tok[i], "notready"))
				nd.ready = 0;
			else if (!strcmp(tok[i], "cordoned"))
				nd.unschedulable = 1;
			else if (!strcmp(tok[i], "gpus=none"))
				nd.gpus = -1;
			else if (!strncmp(tok[i], "gpus=", 5))
				nd.gpus = atoll(tok[i] + 5);
		}
		int rc = gs_sched_node_upsert(r->s, &nd, r->now);
		if (rc < 0)
			emit(r, "> error: node_upsert %d\n", rc);
	} else if (!strcmp(c, "node-delete")) {
		int rc = gs_sched_node_delete(r->s, tok[1], r->now);
		if (rc < 0)
			emit(r, "> error: node_delete %d\n", rc);
	} else if (!strcmp(c, "pod")) {
		assert_true(n >= 3);
		cmd_pod(r, tok, n);
	} else if (!strcmp(c, "pod-delete")) {
		int rc = gs_sched_pod_delete(r->s, tok[1], r->now);
		if (rc < 0)
			emit(r, "> error: pod_delete %d\n", rc);
	} else if (!strcmp(c, "bind-done")) {
		enum gs_bind_result res = !strcmp(tok[2], "ok") ? GS_BIND_OK : !strcmp(tok[2], "gone") ? GS_BIND_GONE
												  : GS_BIND_RETRY;
		int rc = gs_sched_bind_done(r->s, tok[1], res, r->now);
		if (rc < 0)
			emit(r, "> error: bind_done %d\n", rc);
	} else if (!strcmp(c, "time")) {
		r->now += atoll(tok[1]);
	} else if (!strcmp(c, "pull")) {
		cmd_pull(r);
	} else if (!strcmp(c, "state")) {
		struct gs_sched_pod_info pi;
		if (gs_sched_pod_info(r->s, tok[1], &pi) < 0)
			emit(r, "> state %s unknown\n", tok[1]);
		else
			emit(r, "> state %s %s%s%s attempts=%u\n", tok[1], gs_pod_state_name(pi.state),
			     pi.state == GS_POD_WAITING ? " " : "",
			     pi.state == GS_POD_WAITING ? gs_wait_reason_name(pi.reason) : "", pi.attempts);
	} else {
		fail_msg("unknown command %s", c);
	}
}

/* Replays one transcript; returns the rebuilt text in out. */
static void replay_file(const char *path, struct gs_buf *expected, struct gs_buf *got)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	struct replay r;
	memset(&r, 0, sizeof(r));
	gs_sched_config_init(&r.cfg);
	r.cfg.seed = 1;
	r.now = 1000000;
	gs_buf_init(&r.out, 0);
	new_engine(&r);

	char line[8192];
	while (fgets(line, sizeof(line), f)) {
		assert_int_equal(gs_buf_append_str(expected, line), 0);
		if (!strncmp(line, "> ", 2))
			continue;
		assert_int_equal(gs_buf_append_str(&r.out, line), 0);
		line[strcspn(line, "\n")] = '\0';
		run_line(&r, line);
	}
	fclose(f);
	assert_int_equal(gs_buf_append(got, r.out.data ? r.out.data : "", r.out.len), 0);
	gs_buf_free(&r.out);
	gs_sched_free(r.s);
}

static void print_diff(const char *exp, const char *got)
{
	int ln = 1;
	while (*exp || *got) {
		const char *e = strchr(exp, '\n'), *g = strchr(got, '\n');
		size_t el = e ? (size_t)(e - exp) : strlen(exp), gl = g ? (size_t)(g - got) : strlen(got);
		if (el != gl || memcmp(exp, got, el)) {
			print_error("line %d:\n  expected: %.*s\n  got:      %.*s\n", ln, (int)el, exp, (int)gl, got);
			return;
		}
		exp += el + (e ? 1 : 0);
		got += gl + (g ? 1 : 0);
		ln++;
	}
}

static void test_transcript(void **state)
{
	const char *path = *state;
	struct gs_buf exp, got;
	gs_buf_init(&exp, 0);
	gs_buf_init(&got, 0);
	replay_file(path, &exp, &got);
	const char *e = exp.data ? exp.data : "", *g = got.data ? got.data : "";
	if (getenv("GS_GOLDEN_UPDATE")) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(g, f);
		fclose(f);
	} else if (strcmp(e, g) != 0) {
		print_error("%s differs from the engine's transcript\n", path);
		print_diff(e, g);
		gs_buf_free(&exp);
		gs_buf_free(&got);
		fail();
	}
	gs_buf_free(&exp);
	gs_buf_free(&got);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
	const char *dir = getenv("GS_GOLDEN_DIR") ? getenv("GS_GOLDEN_DIR") : GOLDEN_DIR_DEFAULT;
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "test_golden_sched: cannot open %s (run from the repository root): %s\n", dir,
			strerror(errno));
		return 1;
	}
	char *paths[256];
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)) && n < 256) {
		size_t l = strlen(de->d_name);
		if (l > 4 && !strcmp(de->d_name + l - 4, ".txt")) {
			char *p = malloc(strlen(dir) + l + 2);
			sprintf(p, "%s/%s", dir, de->d_name);
			paths[n++] = p;
		}
	}
	closedir(d);
	qsort(paths, n, sizeof(paths[0]), cmp_str);
	struct CMUnitTest *tests = calloc(n ? n : 1, sizeof(*tests));
	for (size_t i = 0; i < n; i++) {
		tests[i].name = paths[i];
		tests[i].test_func = test_transcript;
		tests[i].initial_state = paths[i];
	}
	int rc = n ? _cmocka_run_group_tests("golden_sched", tests, n, NULL, NULL) : 1;
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(tests);
	return rc;
}
