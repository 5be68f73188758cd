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
 *   config check_env=0|1 recreate=0|1 sharing=exclusive|any alias=LABEL|off placeholders=0|1 preemption=0|1
 *          ignored-resources=A,B ignored-groups=G,H gang-members=N gang-gpus=N gang-limits=NS=M/G,...
 *          gpu-resources=R,PREFIX/           the device plugin's GPU resources (GS_SCHED_GPU_RESOURCES unless said)
 *                                             before anything else; a new engine (alias: the node alias
 *                                             label, gpu-scheduler.io/node unless said; ignored-*: the
 *                                             fit's ignored extended resources and groups; gang-*: the
 *                                             namespaces' gang budgets, 0 none)
 *   node NAME [notready] [cordoned] [gpus=N|gpus=none] [capacity=N]
 *                                             upsert (4 GPUs unless said; capacity: nvidia.com/gpu
 *                                             capacity, above the allocatable gpus=)
 *        [allowed=NS1,NS2]                    the allowed-namespaces annotation ("allowed=" lists none)
 *        [boot=ID]                            status.nodeInfo.bootID (a reboot changes it)
 *        [inuse=TEXT]                         the node agent's devices-in-use annotation (sched/inuse.h):
 *                                             '|' ends a line, '~' is a blank, NOW the clock's time
 *        [label=K=V] [taint=K[=V]:EFFECT] [cpu=Q] [mem=Q] [eph=Q] [pods=N] [res=NAME=N]
 *                                             labels, taints and allocatable (repeatable keys)
 *   node-delete NAME
 *   pod UID NS/NAME [key=value...]            upsert; keys: map= sched= node= owner=KIND[/NAME] cuda= cuda-mixed
 *                                             label-index= job-index= rv= deleting terminal stopped os=
 *                                             running (status.phase Running)
 *        req=cpu=Q,memory=Q,NAME=N            one regular container's requests (repeat: more containers)
 *        init=...  overhead=...               an init container's requests; spec.overhead
 *        port=N[/UDP|/SCTP][@IP]              a host port
 *        sel=K=V                              a nodeSelector pair
 *        label=K=V                            a label of the pod (metadata.labels)
 *        aff=K:OP:V1,V2;field:metadata.name:In:N   one required nodeSelectorTerm (repeat: ORed terms)
 *        tol=K=V:EFFECT[:SECS] | tol=K:Exists[:EFFECT[:SECS]]   a toleration (K may be empty)
 *        prio=N gate=NAME owner-uid=UID shared assigned=NODE:DEVS created=MS
 *        never nominated=NODE                 spec.preemptionPolicy Never; status.nominatedNodeName
 *        placement=V gang-timeout=D gang-size=N   the all-or-nothing annotations (sched/gang.h)
 *        placeholder-for=UID                  a placeholder pod holding a node for gang member UID
 *        map-ref=NAME map-ref-gen=G           gpu-scheduler.io/placement-map and its -generation (sched/gpm.h)
 *   pod-delete UID
 *   placeholder-made MEMBER-UID NS/NAME UID   the reply to a placeholder's create named its uid
 *                                             (gs_sched_placeholder_created): only then is it ours
 *   gpm NS/NAME gen=G [map=TEXT] [uid=U] [placement=V] [gang-timeout=D] [gang-size=N]
 *                                             upsert a GPUPlacementMap (uid "gpm-NAME" unless said)
 *   pdb NS/NAME [allowed=N] [match=K=V] [expr=K:OP[:V1,V2]] [disrupted=NAME] [no-selector]
 *                                             upsert a PodDisruptionBudget: status.disruptionsAllowed,
 *                                             matchLabels and matchExpressions (repeatable),
 *                                             status.disruptedPods, spec.selector absent
 *   pdb-delete NS/NAME
 *   gpm-delete NS/NAME
 *   gpm-status                                pulls object statuses until none (gs_sched_next_gpm_status)
 *   gpm-show NS/NAME                          prints one object's status now (gs_sched_gpm_status)
 *   deadline                                  prints gs_sched_next_deadline, from now
 *   bind-done UID ok|gone|retry|retry-after=MS   retry-after: a RETRY whose answer said Retry-After
 *   time MS                                   advance the clock by MS
 *   pull                                      binds until none, then preemptions, placeholders and
 *                                             reports, each until none
 *   preempt-failed UID                        a victim's delete failed (gs_sched_preemption_failed)
 *   state UID                                 prints the pod's state, reason, attempts and the node its
 *                                             map name resolves to now when that is another name
 *   stats                                     prints the engine's counts (pods, uses, ledger; ignored
 *                                             claims, gangs, placeholders, preemptions when there are)
 *   explain NS/NAME | explain-json NS/NAME    prints the pod's explanation (explain_out.h), text or JSON
 *   budget-seed NS MAXM MAXG HELDM HELDG      explain's engine takes the daemon's budget numbers for NS
 *                                             (gs_sched_gang_budget_seed)
 *   pending                                   prints the pending pods' summary (JSON)
 *   oldest                                    prints, per wait reason with a waiting pod, the creation
 *                                             time of the oldest (gs_sched_waiting_oldest)
 *   mapped                                    prints the GPUs of running pods of ours (gs_sched_mapped_gpus),
 *                                             sorted: > mapped NODE gpu=G uuid=U NS/POD KIND/NAME index=I
 *                                             device=D (- for what is unknown)
 *   # comment, and empty lines, are kept as they are
 * Output lines:
 *   > bind NS/NAME node=NODE [map=NAME] devices=DEVS index=I (SOURCE) line=L attempt=A
 *          [after-deleting=PLACEHOLDER [uid=U]]
 *                                             map=: the map's name, when NODE was resolved by the alias label
 *   > preempt NS/NAME node=N prio=P victims=NS/V(PRIO[,pdb=B]),...   (gs_sched_next_preemption; B: the
 *                                             PodDisruptionBudget the victim's deletion violates)
 *   > report NS/NAME REASON: MESSAGE [recreate]
 *   > warning NS/NAME DevicePluginRequest: MESSAGE
 *   > conflict NS/NAME OTHER-NS/OTHER-NAME on NODE: MESSAGE
 *   > gang-event KIND NS/OWNER REASON: MESSAGE   an event on a gang's owner (GangScheduled, ...)
 *   > gang-event NS/NAME REASON: MESSAGE         the same on one member
 *   > placeholder create NS/NAME node=N for=NS/MEMBER prio=P cpu=Qm mem=B [RES=N...] tolerations=T
 *   > placeholder delete NS/NAME [uid=U]         (config placeholders=1: gs_sched_next_placeholder;
 *                                                uid: the delete's precondition)
 *   > state UID STATE [REASON] attempts=A [resolved=NODE]
 *   > oldest [REASON=MS ...]                   (reasons in enum order; none waiting: "> oldest")
 *   > gpm-status NS/NAME gen=G entries=E placed=P waiting=W [REASON=N ...] ready=0|1
 *         [first=INDEX NAME REASON: MESSAGE] [map-error: ERROR] [refused: WHY]
 *                                             (gpm-show: "> gpm-show ...", same fields)
 *   > gpm-relist now | at +MS | none          gs_sched_gpm_take_relist (config gpm-memory=B gpm-memory-per-ns=B
 *                                             map-cache-memory=B: the budgets, sched.h)
 *   > memory gpm-bytes=B refused=N maps-cached=N map-cache-bytes=B idle-bytes=B inline-not-kept=N
 *                                             (gs_sched_stats)
 *   > deadline +MS | > deadline none
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
#include "k8s/decode.h"
#include "sched/explain_out.h"
#include "sched/gpm.h"
#include "sched/inuse.h"
#include "sched/sched.h"

#define GOLDEN_DIR_DEFAULT "tests/golden/sched"

struct replay {
	struct gs_sched *s;
	struct gs_sched_config cfg;
	int64_t now;
	struct gs_buf out;
	char *alias;         /* cfg.alias_label's storage */
	char *ignored[2];    /* cfg.ignored_resources's and cfg.ignored_resource_groups's */
	char *limits;        /* cfg.gang_limits's */
	char *gpu_resources; /* cfg.gpu_resources's */
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

static int64_t qty(const char *v, int milli)
{
	int64_t out = 0;
	if (milli)
		assert_int_equal(gs_decode_quantity_milli(v, &out), 0);
	else
		assert_int_equal(gs_decode_quantity(v, &out), 0);
	return out;
}

static void res_add_ext(struct gs_resources *r, const char *name, int64_t v)
{
	r->ext = realloc(r->ext, (size_t)(r->n_ext + 1) * sizeof(*r->ext));
	assert_non_null(r->ext);
	r->ext[r->n_ext].name = strdup(name);
	r->ext[r->n_ext++].value = v;
}

/* "cpu=500m,memory=1Gi,nvidia.com/gpu=1" into r. */
static void parse_res(struct gs_resources *r, char *v)
{
	for (char *save = NULL, *t = strtok_r(v, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		assert_non_null(eq);
		*eq = '\0';
		if (!strcmp(t, "cpu"))
			r->milli_cpu = qty(eq + 1, 1);
		else if (!strcmp(t, "memory"))
			r->memory = qty(eq + 1, 0);
		else if (!strcmp(t, "ephemeral-storage"))
			r->ephemeral = qty(eq + 1, 0);
		else if (!strcmp(t, "pods"))
			r->pods = qty(eq + 1, 0);
		else
			res_add_ext(r, t, qty(eq + 1, 0));
	}
}

static struct gs_resources *grow_res(struct gs_resources **arr, int *n)
{
	*arr = realloc(*arr, (size_t)(*n + 1) * sizeof(**arr));
	assert_non_null(*arr);
	memset(&(*arr)[*n], 0, sizeof(**arr));
	return &(*arr)[(*n)++];
}

static enum gs_taint_effect effect_of(const char *e)
{
	if (!e || !*e)
		return GS_EFFECT_ALL;
	if (!strcmp(e, "NoSchedule"))
		return GS_EFFECT_NO_SCHEDULE;
	if (!strcmp(e, "PreferNoSchedule"))
		return GS_EFFECT_PREFER_NO_SCHEDULE;
	if (!strcmp(e, "NoExecute"))
		return GS_EFFECT_NO_EXECUTE;
	return GS_EFFECT_OTHER;
}

static enum gs_sel_op op_of(const char *o)
{
	static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
	for (int i = 0; i < 6; i++)
		if (!strcmp(o, ops[i]))
			return (enum gs_sel_op)i;
	return GS_SEL_INVALID;
}

/* "zone:In:a,b;field:metadata.name:In:node1" into one term. */
static void parse_term(struct gs_sel_term *t, char *v)
{
	memset(t, 0, sizeof(*t));
	for (char *save = NULL, *e = strtok_r(v, ";", &save); e; e = strtok_r(NULL, ";", &save)) {
		struct gs_sel_req q = {0};
		char *f[4] = {0};
		int nf = 0;
		for (char *s2 = NULL, *x = strtok_r(e, ":", &s2); x && nf < 4; x = strtok_r(NULL, ":", &s2))
			f[nf++] = x;
		if (nf >= 1 && !strcmp(f[0], "field")) {
			q.field = 1;
			memmove(f, f + 1, 3 * sizeof(*f));
			f[3] = NULL;
			nf--;
		}
		assert_true(nf >= 2);
		q.key = strdup(f[0]);
		q.op = op_of(f[1]);
		if (nf >= 3) {
			for (char *s3 = NULL, *x = strtok_r(f[2], ",", &s3); x; x = strtok_r(NULL, ",", &s3)) {
				q.values = realloc(q.values, (size_t)(q.n_values + 1) * sizeof(char *));
				q.values[q.n_values++] = strdup(x);
			}
		}
		t->reqs = realloc(t->reqs, (size_t)(t->n_reqs + 1) * sizeof(*t->reqs));
		t->reqs[t->n_reqs++] = q;
	}
}

/* "k=v:NoSchedule:300", "k:Exists:NoExecute", ":Exists" */
static void parse_tol(struct gs_toleration *t, char *v)
{
	char *f[4] = {0};
	int nf = 0;
	memset(t, 0, sizeof(*t));
	t->seconds = -1;
	for (char *p = v; nf < 4; nf++) {
		f[nf] = p;
		char *c = strchr(p, ':');
		if (!c) {
			nf++;
			break;
		}
		*c = '\0';
		p = c + 1;
	}
	int i = 1;
	if (nf > 1 && !strcmp(f[1], "Exists")) {
		t->exists = 1;
		i = 2;
	}
	char *eq = strchr(f[0], '=');
	if (eq) {
		*eq = '\0';
		t->value = strdup(eq + 1);
	}
	t->key = *f[0] ? strdup(f[0]) : NULL;
	if (i < nf)
		t->effect = effect_of(f[i]);
	if (i + 1 < nf)
		t->seconds = atoll(f[i + 1]);
}

/* "K=V" appended to a label array. */
static void add_label(struct gs_label **l, int *n, const char *v)
{
	const char *e2 = strchr(v, '=');
	assert_non_null(e2);
	*l = realloc(*l, (size_t)(*n + 1) * sizeof(**l));
	(*l)[*n].key = strndup(v, (size_t)(e2 - v));
	(*l)[(*n)++].value = strdup(e2 + 1);
}

/* pdb NS/NAME [allowed=N] [match=K=V]... [expr=K:OP[:V1,V2]]... [disrupted=NAME]... [no-selector] */
static void cmd_pdb(struct replay *r, char **tok, int n)
{
	struct gs_pdb_obj b = {.selector = 1};
	char *slash = strchr(tok[1], '/');
	assert_non_null(slash);
	*slash = '\0';
	b.ns = xstrdup(tok[1]);
	b.name = xstrdup(slash + 1);
	for (int i = 2; i < n; i++) {
		char *eq = strchr(tok[i], '=');
		const char *k = tok[i], *v = eq ? eq + 1 : "";
		if (eq)
			*eq = '\0';
		if (!strcmp(k, "allowed")) {
			b.disruptions_allowed = atoll(v);
		} else if (!strcmp(k, "match")) {
			add_label(&b.match, &b.n_match, v);
		} else if (!strcmp(k, "expr")) {
			struct gs_sel_term t;
			parse_term(&t, (char *)v);
			b.exprs = realloc(b.exprs, (size_t)(b.n_exprs + t.n_reqs) * sizeof(*b.exprs));
			memcpy(b.exprs + b.n_exprs, t.reqs, (size_t)t.n_reqs * sizeof(*t.reqs));
			b.n_exprs += t.n_reqs;
			free(t.reqs);
		} else if (!strcmp(k, "disrupted")) {
			b.disrupted = realloc(b.disrupted, (size_t)(b.n_disrupted + 1) * sizeof(char *));
			b.disrupted[b.n_disrupted++] = xstrdup(v);
		} else if (!strcmp(k, "no-selector")) {
			b.selector = 0;
		} else {
			fail_msg("pdb: unknown key %s", k);
		}
	}
	int rc = gs_sched_pdb_upsert(r->s, &b);
	if (rc < 0)
		emit(r, "> error: pdb_upsert %d\n", rc);
	gs_pdb_obj_free(&b);
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
			p.map_owned = map_text(v);
			p.map_text = p.map_owned;
			p.map_len = strlen(p.map_owned);
		} else if (!strcmp(k, "sched")) {
			free(p.scheduler_name);
			p.scheduler_name = xstrdup(v);
		} else if (!strcmp(k, "node")) {
			p.node_name = xstrdup(v);
		} else if (!strcmp(k, "owner")) {
			/* owner=KIND[/NAME]: a controller whose uid is "KIND/NAME" (NAME "owner" by default) */
			const char *sl = strchr(v, '/');
			char uid[256];
			p.owner_kind = sl ? strndup(v, (size_t)(sl - v)) : xstrdup(v);
			p.owner_name = xstrdup(sl ? sl + 1 : "owner");
			snprintf(uid, sizeof(uid), "%s/%s", p.owner_kind, p.owner_name);
			free(p.owner_uid);
			p.owner_uid = xstrdup(uid);
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
		} else if (!strcmp(k, "running")) {
			p.running = 1;
		} else if (!strcmp(k, "stopped")) {
			p.stopped = 1;
		} else if (!strcmp(k, "os")) {
			p.os_name = xstrdup(v);
		} else if (!strcmp(k, "req")) {
			parse_res(grow_res(&p.ctr_req, &p.n_ctr), (char *)v);
		} else if (!strcmp(k, "init")) {
			parse_res(grow_res(&p.init_req, &p.n_init), (char *)v);
		} else if (!strcmp(k, "overhead")) {
			parse_res(&p.overhead, (char *)v);
		} else if (!strcmp(k, "port")) {
			struct gs_host_port hp = {.port = atoi(v), .proto = 'T'};
			const char *sl = strchr(v, '/'), *at = strchr(v, '@');
			if (sl)
				hp.proto = sl[1];
			if (at)
				hp.host_ip = strdup(at + 1);
			p.host_ports = realloc(p.host_ports, (size_t)(p.n_host_ports + 1) * sizeof(hp));
			p.host_ports[p.n_host_ports++] = hp;
		} else if (!strcmp(k, "sel")) {
			add_label(&p.node_selector, &p.n_node_selector, v);
		} else if (!strcmp(k, "label")) {
			add_label(&p.labels, &p.n_labels, v);
		} else if (!strcmp(k, "aff")) {
			p.has_affinity = 1;
			p.terms = realloc(p.terms, (size_t)(p.n_terms + 1) * sizeof(*p.terms));
			parse_term(&p.terms[p.n_terms++], (char *)v);
		} else if (!strcmp(k, "tol")) {
			p.tolerations = realloc(p.tolerations, (size_t)(p.n_tolerations + 1) * sizeof(*p.tolerations));
			parse_tol(&p.tolerations[p.n_tolerations++], (char *)v);
		} else if (!strcmp(k, "prio")) {
			p.priority = atoll(v);
		} else if (!strcmp(k, "nominated")) {
			p.nominated_node = strdup(v); /* status.nominatedNodeName */
		} else if (!strcmp(k, "never")) {
			p.preempt_never = 1; /* spec.preemptionPolicy: Never */
		} else if (!strcmp(k, "gate")) {
			if (!p.first_gate)
				p.first_gate = strdup(v);
			p.n_gates++;
		} else if (!strcmp(k, "owner-uid")) {
			free(p.owner_uid); /* after owner=: another uid for the same kind and name */
			p.owner_uid = xstrdup(v);
		} else if (!strcmp(k, "shared")) {
			p.allow_shared = 1;
		} else if (!strcmp(k, "assigned")) {
			p.assigned = xstrdup(v);
		} else if (!strcmp(k, "created")) {
			p.created_ms = atoll(v);
		} else if (!strcmp(k, "placement")) {
			p.placement = xstrdup(v);
		} else if (!strcmp(k, "gang-timeout")) {
			p.gang_timeout = xstrdup(v);
		} else if (!strcmp(k, "gang-size")) {
			p.gang_size = xstrdup(v);
		} else if (!strcmp(k, "placeholder-for")) {
			p.placeholder_for = xstrdup(v);
		} else if (!strcmp(k, "map-ref")) {
			p.map_ref = xstrdup(v);
		} else if (!strcmp(k, "map-ref-gen")) {
			p.map_ref_generation = xstrdup(v);
		} else {
			fail_msg("unknown pod key %s", k);
		}
	}
	int rc = gs_sched_pod_upsert(r->s, &p, r->now);
	if (rc < 0)
		emit(r, "> error: pod_upsert %d\n", rc);
	gs_pod_obj_free(&p);
}

/* gpm NS/NAME gen=G [map=TEXT] [uid=U] [placement=V] [gang-timeout=D] [gang-size=N] */
static void cmd_gpm(struct replay *r, char **tok, int n)
{
	struct gs_gpm_view v = {0};
	char ns[256], uid[300], *text = NULL;
	const char *slash = strchr(tok[1], '/');

	assert_non_null(slash);
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash - tok[1]), tok[1]);
	snprintf(uid, sizeof(uid), "gpm-%s", slash + 1);
	v.ns = ns;
	v.name = slash + 1;
	v.uid = uid;
	for (int i = 2; i < n; i++) {
		char *eq = strchr(tok[i], '=');
		const char *k = tok[i], *val = eq ? eq + 1 : "";
		assert_non_null(eq);
		*eq = '\0';
		if (!strcmp(k, "gen"))
			v.generation = atoll(val);
		else if (!strcmp(k, "map"))
			text = map_text(val);
		else if (!strcmp(k, "uid"))
			v.uid = val;
		else if (!strcmp(k, "placement"))
			v.placement = val;
		else if (!strcmp(k, "gang-timeout"))
			v.gang_timeout = val;
		else if (!strcmp(k, "gang-size"))
			v.gang_size = val;
		else
			fail_msg("unknown gpm key %s", k);
	}
	v.map_text = text;
	v.map_len = text ? strlen(text) : 0;
	int rc = gs_sched_gpm_upsert(r->s, &v, r->now);
	if (rc < 0)
		emit(r, "> error: gpm_upsert %d\n", rc);
	free(text);
}

static void emit_gpm_status(struct replay *r, const char *what, const struct gs_gpm_status *st)
{
	emit(r, "> %s %s/%s gen=%lld entries=%zu placed=%zu waiting=%zu", what, st->ns, st->name,
	     (long long)st->observed_generation, st->entries, st->placed, st->waiting);
	for (int w = 0; w < GS_WAIT__COUNT; w++)
		if (st->waiting_by[w])
			emit(r, " %s=%zu", gs_wait_reason_name((enum gs_wait_reason)w), st->waiting_by[w]);
	emit(r, " ready=%d", st->ready);
	if (st->oldest_name)
		emit(r, " first=%ld %s %s: %s", st->oldest_index, st->oldest_name,
		     gs_wait_reason_name(st->oldest_reason), st->oldest_message);
	if (st->map_error)
		emit(r, " map-error: %s", st->map_error);
	if (st->refused)
		emit(r, " refused: %s", st->refused);
	emit(r, "\n");
}

static void cmd_gpm_more(struct replay *r, const char *c, char **tok, int n)
{
	struct gs_gpm_status st;
	char ns[256];
	const char *slash = n > 1 ? strchr(tok[1], '/') : NULL;

	if (!strcmp(c, "gpm-status")) {
		while (gs_sched_next_gpm_status(r->s, r->now, &st))
			emit_gpm_status(r, "gpm-status", &st);
		return;
	}
	if (!strcmp(c, "gpm-relist")) {
		int64_t due;
		if (gs_sched_gpm_take_relist(r->s, r->now, &due))
			emit(r, "> gpm-relist now\n");
		else if (due >= 0)
			emit(r, "> gpm-relist at %+lld\n", (long long)(due - r->now));
		else
			emit(r, "> gpm-relist none\n");
		return;
	}
	if (!strcmp(c, "memory")) {
		struct gs_sched_stats ss;
		gs_sched_stats(r->s, &ss);
		emit(r,
		     "> memory gpm-bytes=%zu refused=%zu maps-cached=%zu map-cache-bytes=%zu idle-bytes=%zu "
		     "inline-not-kept=%llu\n",
		     ss.gpm_bytes, ss.gpms_refused, ss.maps_cached, ss.maps_cached_bytes, ss.maps_idle_bytes,
		     (unsigned long long)ss.inline_not_kept);
		return;
	}
	if (!strcmp(c, "deadline")) {
		int64_t d = gs_sched_next_deadline(r->s);
		if (d < 0)
			emit(r, "> deadline none\n");
		else
			emit(r, "> deadline %+lld\n", (long long)(d - r->now));
		return;
	}
	assert_non_null(slash);
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash - tok[1]), tok[1]);
	if (!strcmp(c, "gpm-delete")) {
		int rc = gs_sched_gpm_delete(r->s, ns, slash + 1, r->now);
		if (rc < 0)
			emit(r, "> error: gpm_delete %d\n", rc);
	} else if (gs_sched_gpm_status(r->s, ns, slash + 1, &st)) {
		emit_gpm_status(r, "gpm-show", &st);
	} else {
		emit(r, "> gpm-show %s unknown\n", tok[1]);
	}
}

/* Each line of b as an output line. */
static void emit_prefixed(struct replay *r, const struct gs_buf *b)
{
	const char *p = b->data ? b->data : "";
	while (*p) {
		size_t len = strcspn(p, "\n");
		emit(r, len ? "> %.*s\n" : ">%.*s\n", (int)len, p); /* no trailing blank */
		p += len + (p[len] == '\n');
	}
}

static void cmd_explain(struct replay *r, const char *nsname, int json)
{
	char ns[256];
	const char *slash = strchr(nsname, '/');
	struct gs_sched_explain e;
	struct gs_buf b;

	assert_non_null(slash);
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash - nsname), nsname);
	if (gs_sched_explain(r->s, ns, slash + 1, &e) < 0) {
		emit(r, "> explain %s unknown\n", nsname);
		return;
	}
	gs_buf_init(&b, 0);
	assert_int_equal(json ? gs_explain_json(&e, r->now, &b) : gs_explain_text(&e, r->now, &b), 0);
	emit_prefixed(r, &b);
	gs_buf_free(&b);
	gs_sched_explain_free(&e);
}

/* A devices-in-use text from its one-token form: '|' a newline, '~' a blank, NOW the clock's time. */
static char *inuse_text(const struct replay *r, const char *tok)
{
	char ts[21], *out = malloc(strlen(tok) * 8 + 1), *o = out;

	gs_inuse_time_format(r->now, ts);
	for (const char *p = tok; *p; p++) {
		if (!strncmp(p, "NOW", 3)) {
			o += sprintf(o, "%s", ts);
			p += 2;
		} else {
			*o++ = *p == '|' ? '\n' : *p == '~' ? ' ' : *p;
		}
	}
	*o = '\0';
	return out;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The rows of gs_sched_mapped_gpus, as text, to print sorted (the engine gives them in no order). */
struct mapped_rows {
	char **v;
	size_t n;
};

static int mapped_row(const struct gs_sched_mapped_gpu *g, void *ud)
{
	struct mapped_rows *m = ud;
	char gpu[24] = "-", line[512];

	if (g->gpu >= 0)
		snprintf(gpu, sizeof(gpu), "%ld", g->gpu);
	snprintf(line, sizeof(line), "%s gpu=%s uuid=%s %s/%s %s/%s index=%ld device=%s", g->node, gpu,
		 g->uuid ? g->uuid : "-", g->ns, g->pod, g->kind ? g->kind : "-", g->workload ? g->workload : "-",
		 g->index, g->device);
	m->v = realloc(m->v, (m->n + 1) * sizeof(*m->v));
	assert_non_null(m->v);
	m->v[m->n++] = xstrdup(line);
	return 0;
}

static void cmd_pull(struct replay *r)
{
	struct gs_bind_decision d;
	while (gs_sched_next_bind(r->s, r->now, &d))
		emit(r, "> bind %s/%s node=%s%s%s devices=%s index=%ld (%s) line=%d attempt=%u%s%s%s%s\n", d.ns, d.name,
		     d.node, strcmp(d.node, d.map_node) ? " map=" : "", strcmp(d.node, d.map_node) ? d.map_node : "",
		     d.devices, d.index, gs_index_source_name(d.index_source), d.map_line, d.attempt,
		     d.placeholder ? " after-deleting=" : "", d.placeholder ? d.placeholder : "",
		     d.placeholder_uid ? " uid=" : "", d.placeholder_uid ? d.placeholder_uid : "");
	struct gs_preemption pe;
	while (gs_sched_next_preemption(r->s, r->now, &pe)) {
		emit(r, "> preempt %s/%s node=%s prio=%lld victims=", pe.ns, pe.name, pe.node, (long long)pe.priority);
		for (size_t i = 0; i < pe.n_victims; i++)
			emit(r, "%s%s/%s(%lld%s%s)", i ? "," : "", pe.victims[i].ns, pe.victims[i].name,
			     (long long)pe.victims[i].priority, pe.victims[i].pdb ? ",pdb=" : "",
			     pe.victims[i].pdb ? pe.victims[i].pdb : "");
		emit(r, "\n");
	}
	struct gs_placeholder ph;
	while (gs_sched_next_placeholder(r->s, r->now, &ph)) {
		if (!ph.create) {
			emit(r, "> placeholder delete %s/%s%s%s\n", ph.ns, ph.name, ph.uid ? " uid=" : "",
			     ph.uid ? ph.uid : "");
			continue;
		}
		emit(r, "> placeholder create %s/%s node=%s for=%s/%s prio=%lld cpu=%lldm mem=%lld", ph.ns, ph.name,
		     ph.node, ph.ns, ph.member_name, (long long)ph.priority, (long long)ph.cpu_milli,
		     (long long)ph.memory);
		for (size_t i = 0; i < ph.n_ext; i++)
			emit(r, " %s=%lld", ph.ext_name[i], (long long)ph.ext_value[i]);
		emit(r, " tolerations=%d\n", ph.n_tolerations);
	}
	struct gs_report rep;
	while (gs_sched_next_report(r->s, r->now, &rep)) {
		if (rep.kind == GS_REPORT_DEVICE_PLUGIN)
			emit(r, "> warning %s/%s DevicePluginRequest: %s\n", rep.ns, rep.name, rep.message);
		else if (rep.kind == GS_REPORT_GANG && rep.uid)
			emit(r, "> gang-event %s/%s %s: %s\n", rep.ns, rep.name, rep.event_reason, rep.message);
		else if (rep.kind == GS_REPORT_GANG)
			emit(r, "> gang-event %s %s/%s %s: %s\n", rep.owner_kind, rep.ns, rep.owner_name,
			     rep.event_reason, rep.message);
		else if (rep.kind == GS_REPORT_DEVICE_CONFLICT)
			emit(r, "> conflict %s/%s %s/%s on %s: %s\n>   to %s/%s: %s\n", rep.ns, rep.name, rep.other_ns,
			     rep.other_name, rep.node, rep.message, rep.other_ns, rep.other_name, rep.other_message);
		else
			emit(r, "> report %s/%s %s: %s%s\n", rep.ns, rep.name, gs_wait_reason_name(rep.reason),
			     rep.message, rep.recreate ? " [recreate]" : "");
	}
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
			else if (!strncmp(tok[i], "placeholders=", 13))
				r->cfg.gang_placeholders = atoi(tok[i] + 13);
			else if (!strncmp(tok[i], "preemption=", 11))
				r->cfg.preemption = atoi(tok[i] + 11);
			else if (!strncmp(tok[i], "max-gang-timeout=", 17))
				r->cfg.max_gang_timeout_ms = atoll(tok[i] + 17);
			else if (!strncmp(tok[i], "gpm-memory=", 11))
				r->cfg.gpm_bytes = (size_t)atoll(tok[i] + 11);
			else if (!strncmp(tok[i], "gpm-memory-per-ns=", 18))
				r->cfg.gpm_bytes_per_ns = (size_t)atoll(tok[i] + 18);
			else if (!strncmp(tok[i], "map-cache-memory=", 17))
				r->cfg.map_cache_bytes = (size_t)atoll(tok[i] + 17);
			else if (!strncmp(tok[i], "sharing=", 8))
				r->cfg.device_sharing_any = !strcmp(tok[i] + 8, "any");
			else if (!strncmp(tok[i], "ignored-resources=", 18)) {
				free(r->ignored[0]);
				r->cfg.ignored_resources = r->ignored[0] = strdup(tok[i] + 18);
			} else if (!strncmp(tok[i], "gpu-resources=", 14)) {
				free(r->gpu_resources);
				r->cfg.gpu_resources = r->gpu_resources = strdup(tok[i] + 14);
			} else if (!strncmp(tok[i], "ignored-groups=", 15)) {
				free(r->ignored[1]);
				r->cfg.ignored_resource_groups = r->ignored[1] = strdup(tok[i] + 15);
			} else if (!strncmp(tok[i], "gang-members=", 13)) {
				r->cfg.gang_members_per_ns = atol(tok[i] + 13);
			} else if (!strncmp(tok[i], "gang-gpus=", 10)) {
				r->cfg.gang_gpus_per_ns = atol(tok[i] + 10);
			} else if (!strncmp(tok[i], "gang-limits=", 12)) {
				free(r->limits);
				r->cfg.gang_limits = r->limits = strdup(tok[i] + 12);
			} else if (!strncmp(tok[i], "alias=", 6)) {
				free(r->alias);
				r->alias = strcmp(tok[i] + 6, "off") ? strdup(tok[i] + 6) : NULL;
				r->cfg.alias_label = r->alias;
			}
		}
		new_engine(r);
	} else if (!strcmp(c, "node")) {
		struct gs_node_obj nd = {.ready = 1, .gpus = 4, .gpu_capacity = -1};
		nd.name = strdup(tok[1]);
		for (int i = 2; i < n; i++) {
			if (!strncmp(tok[i], "label=", 6)) {
				char *e2 = strchr(tok[i] + 6, '=');
				assert_non_null(e2);
				nd.labels = realloc(nd.labels, (size_t)(nd.n_labels + 1) * sizeof(*nd.labels));
				nd.labels[nd.n_labels].key = strndup(tok[i] + 6, (size_t)(e2 - tok[i] - 6));
				nd.labels[nd.n_labels++].value = strdup(e2 + 1);
			} else if (!strncmp(tok[i], "taint=", 6)) {
				struct gs_taint t = {0};
				char *colon = strrchr(tok[i] + 6, ':'), *e2;
				assert_non_null(colon);
				*colon = '\0';
				t.effect = effect_of(colon + 1);
				if ((e2 = strchr(tok[i] + 6, '='))) {
					*e2 = '\0';
					t.value = strdup(e2 + 1);
				}
				t.key = strdup(tok[i] + 6);
				nd.taints = realloc(nd.taints, (size_t)(nd.n_taints + 1) * sizeof(t));
				nd.taints[nd.n_taints++] = t;
			} else if (!strncmp(tok[i], "cpu=", 4)) {
				nd.alloc.milli_cpu = qty(tok[i] + 4, 1);
			} else if (!strncmp(tok[i], "mem=", 4)) {
				nd.alloc.memory = qty(tok[i] + 4, 0);
			} else if (!strncmp(tok[i], "eph=", 4)) {
				nd.alloc.ephemeral = qty(tok[i] + 4, 0);
			} else if (!strncmp(tok[i], "pods=", 5)) {
				nd.alloc.pods = qty(tok[i] + 5, 0);
			} else if (!strncmp(tok[i], "res=", 4)) {
				char *e2 = strrchr(tok[i] + 4, '=');
				assert_non_null(e2);
				*e2 = '\0';
				res_add_ext(&nd.alloc, tok[i] + 4, qty(e2 + 1, 0));
			} else if (!strcmp(tok[i], "notready"))
				nd.ready = 0;
			else if (!strcmp(tok[i], "cordoned"))
				nd.unschedulable = 1;
			else if (!strcmp(tok[i], "gpus=none"))
				nd.gpus = -1;
			else if (!strncmp(tok[i], "gpus=", 5))
				nd.gpus = atoll(tok[i] + 5);
			else if (!strncmp(tok[i], "capacity=", 9))
				nd.gpu_capacity = atoll(tok[i] + 9);
			else if (!strncmp(tok[i], "allowed=", 8))
				nd.allowed_ns = strdup(tok[i] + 8);
			else if (!strncmp(tok[i], "inuse=", 6))
				nd.inuse = inuse_text(r, tok[i] + 6);
			else if (!strncmp(tok[i], "boot=", 5))
				nd.boot_id = strdup(tok[i] + 5);
		}
		if (nd.gpus >= 0) /* as the decoder does: the count is also an allocatable resource */
			res_add_ext(&nd.alloc, "nvidia.com/gpu", nd.gpus);
		int rc = gs_sched_node_upsert(r->s, &nd, r->now);
		if (rc < 0)
			emit(r, "> error: node_upsert %d\n", rc);
		gs_node_obj_free(&nd);
	} else if (!strcmp(c, "node-delete")) {
		int rc = gs_sched_node_delete(r->s, tok[1], r->now);
		if (rc < 0)
			emit(r, "> error: node_delete %d\n", rc);
	} else if (!strcmp(c, "pod")) {
		assert_true(n >= 3);
		cmd_pod(r, tok, n);
	} else if (!strcmp(c, "pdb")) {
		assert_true(n >= 2);
		cmd_pdb(r, tok, n);
	} else if (!strcmp(c, "pdb-delete")) {
		char *slash = strchr(tok[1], '/');
		assert_non_null(slash);
		*slash = '\0';
		int rc = gs_sched_pdb_delete(r->s, tok[1], slash + 1);
		if (rc < 0)
			emit(r, "> error: pdb_delete %d\n", rc);
	} else if (!strcmp(c, "gpm")) {
		assert_true(n >= 2);
		cmd_gpm(r, tok, n);
	} else if (!strcmp(c, "gpm-delete") || !strcmp(c, "gpm-status") || !strcmp(c, "gpm-show") ||
		   !strcmp(c, "deadline") || !strcmp(c, "gpm-relist") || !strcmp(c, "memory")) {
		cmd_gpm_more(r, c, tok, n);
	} else if (!strcmp(c, "placeholder-made")) {
		assert_true(n >= 4);
		char *slash = strchr(tok[2], '/');
		assert_non_null(slash);
		*slash = '\0';
		int rc = gs_sched_placeholder_created(r->s, tok[1], tok[2], slash + 1, tok[3], r->now);
		if (rc < 0)
			emit(r, "> error: placeholder_created %d\n", rc);
	} else if (!strcmp(c, "preempt-failed")) {
		int rc = gs_sched_preemption_failed(r->s, tok[1], r->now);
		if (rc < 0)
			emit(r, "> error: preemption_failed %d\n", rc);
	} else if (!strcmp(c, "pod-delete")) {
		int rc = gs_sched_pod_delete(r->s, tok[1], r->now);
		if (rc < 0)
			emit(r, "> error: pod_delete %d\n", rc);
	} else if (!strcmp(c, "bind-done")) {
		enum gs_bind_result res = !strcmp(tok[2], "ok")     ? GS_BIND_OK
					  : !strcmp(tok[2], "gone") ? GS_BIND_GONE
								    : GS_BIND_RETRY;
		int rc = !strncmp(tok[2], "retry-after=", 12)
				 ? gs_sched_bind_retry_after(r->s, tok[1], r->now, atoll(tok[2] + 12))
				 : gs_sched_bind_done(r->s, tok[1], res, r->now);
		if (rc < 0)
			emit(r, "> error: bind_done %d\n", rc);
	} else if (!strcmp(c, "time")) {
		r->now += atoll(tok[1]);
	} else if (!strcmp(c, "pull")) {
		cmd_pull(r);
	} else if (!strcmp(c, "mapped")) {
		struct mapped_rows m = {0};
		assert_int_equal(gs_sched_mapped_gpus(r->s, mapped_row, &m), 0);
		if (m.n) /* qsort's base may not be NULL, even for none */
			qsort(m.v, m.n, sizeof(*m.v), cmp_str);
		for (size_t i = 0; i < m.n; i++) {
			emit(r, "> mapped %s\n", m.v[i]);
			free(m.v[i]);
		}
		free(m.v);
	} else if (!strcmp(c, "stats")) {
		struct gs_sched_stats st;
		gs_sched_stats(r->s, &st);
		emit(r, "> stats pods=%zu pending=%zu uses=%zu devices_held=%zu devices_shared=%zu", st.pods,
		     st.pending, st.uses, st.devices_held, st.devices_shared);
		if (st.claims_ignored)
			emit(r, " claims_ignored=%llu", (unsigned long long)st.claims_ignored);
		if (st.device_conflicts)
			emit(r, " device_conflicts=%llu", (unsigned long long)st.device_conflicts);
		if (st.gangs_waiting + st.gangs_bound + st.gang_timeouts)
			emit(r, " gangs_waiting=%zu gangs_bound=%llu gang_timeouts=%llu", st.gangs_waiting,
			     (unsigned long long)st.gangs_bound, (unsigned long long)st.gang_timeouts);
		if (st.placeholders)
			emit(r, " placeholders=%zu", st.placeholders);
		if (st.preemptions + st.nominated)
			emit(r, " preemptions=%llu preempt_none=%llu victims=%llu nominated=%zu",
			     (unsigned long long)st.preemptions, (unsigned long long)st.preempt_none,
			     (unsigned long long)st.preempt_victims, st.nominated);
		if (st.pdbs + st.preempt_pdb_victims)
			emit(r, " pdbs=%zu pdb_victims=%llu", st.pdbs, (unsigned long long)st.preempt_pdb_victims);
		if (st.agent_fresh + st.agent_stale + st.agent_unusable)
			emit(r, " agent_fresh=%zu agent_stale=%zu agent_unusable=%zu", st.agent_fresh, st.agent_stale,
			     st.agent_unusable);
		emit(r, "\n");
	} else if (!strcmp(c, "oldest")) {
		int64_t oldest[GS_WAIT__COUNT];
		gs_sched_waiting_oldest(r->s, oldest);
		emit(r, "> oldest");
		for (int w = 0; w < GS_WAIT__COUNT; w++)
			if (oldest[w])
				emit(r, " %s=%lld", gs_wait_reason_name((enum gs_wait_reason)w), (long long)oldest[w]);
		emit(r, "\n");
	} else if (!strcmp(c, "state")) {
		struct gs_sched_pod_info pi;
		if (gs_sched_pod_info(r->s, tok[1], &pi) < 0)
			emit(r, "> state %s unknown\n", tok[1]);
		else
			emit(r, "> state %s %s%s%s attempts=%u%s%s\n", tok[1], gs_pod_state_name(pi.state),
			     pi.state == GS_POD_WAITING ? " " : "",
			     pi.state == GS_POD_WAITING ? gs_wait_reason_name(pi.reason) : "", pi.attempts,
			     pi.resolved && strcmp(pi.resolved, pi.node) ? " resolved=" : "",
			     pi.resolved && strcmp(pi.resolved, pi.node) ? pi.resolved : "");
	} else if (!strcmp(c, "budget-seed") && n == 6) {
		if (gs_sched_gang_budget_seed(r->s, tok[1], atol(tok[2]), atol(tok[3]), atol(tok[4]), atol(tok[5])) < 0)
			emit(r, "> error: budget-seed\n");
	} else if (!strcmp(c, "explain") || !strcmp(c, "explain-json")) {
		cmd_explain(r, tok[1], !strcmp(c, "explain-json"));
	} else if (!strcmp(c, "pending")) {
		struct gs_sched_pending pd;
		struct gs_buf b;
		gs_buf_init(&b, 0);
		gs_sched_pending(r->s, &pd);
		assert_int_equal(gs_explain_pending_json(&pd, r->now, &b), 0);
		emit_prefixed(r, &b);
		gs_buf_free(&b);
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
		if (line[0] == '>' && (line[1] == ' ' || line[1] == '\n'))
			continue;
		assert_int_equal(gs_buf_append_str(&r.out, line), 0);
		line[strcspn(line, "\n")] = '\0';
		run_line(&r, line);
		gs_sched_audit(r.s); /* every invariant, after every step */
	}
	fclose(f);
	assert_int_equal(gs_buf_append(got, r.out.data ? r.out.data : "", r.out.len), 0);
	gs_buf_free(&r.out);
	gs_sched_free(r.s);
	free(r.alias);
	free(r.limits);
	free(r.gpu_resources);
	free(r.ignored[0]);
	free(r.ignored[1]);
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
