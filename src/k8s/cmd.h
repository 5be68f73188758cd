/*
 * cmd.h: what the operator's commands that read the cluster share (`gpu-scheduler explain`,
 * explain_cmd.h; `gpu-scheduler status`, status_cmd.h): their options (the daemon's placement flags,
 * where the daemon runs), the kubeconfig found as kubectl finds it, one short-lived loop with its own
 * apiserver client whose GETs are sent and waited for in turn, feeding a fresh engine from those reads,
 * and asking the running daemon (the Lease's holder, through the apiserver's pod proxy, with the
 * caller's own token) for its answer on a /debug/ path.
 *
 * Messages go to stderr prefixed "gpu-scheduler NAME: " (NAME the command's, gs_cmd_parse's name).
 */
#ifndef GS_K8S_CMD_H
#define GS_K8S_CMD_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>
#include <uv.h>

#include "k8s/kube.h"
#include "k8s/kubeconfig.h"
#include "sched/sched.h"

#define GS_CMD_PATH_MAX 2048

/* The options both commands take (their usage texts list them: gs_cmd_usage_options). */
struct gs_cmd_opts {
	const char *name; /* "explain", "status": for messages */
	const char *ns, *arg, *kubeconfig, *scheduler_name, *annotation, *output, *alias_label;
	const char *sched_ns, *lease, *secure_port; /* where the daemon runs: its Lease and secure port */
	const char *ignored_resources, *ignored_groups, *gpu_resources;
	int sharing_any;
	int check_env;
	int preemption; /* --preemption: the daemon's */
	int ask_daemon;
};

/*
 * argv[0] is the command's name. One positional argument (o->arg), checked as a Kubernetes name when
 * arg_is_name. Returns -1 to go on, else the exit code (0 after --help, 2 for a usage error), usage
 * printed on stdout or stderr.
 */
int gs_cmd_parse(int argc, char **argv, struct gs_cmd_opts *o, int arg_is_name, void (*usage)(FILE *f));
/* The option lines of a usage text (after the command's own). */
void gs_cmd_usage_options(FILE *f);

/* A DNS-1123 subdomain's characters (pod names; namespaces are a subset), 1..253 of them. */
int gs_cmd_valid_name(const char *v);

/*
 * The kubeconfig (--kubeconfig, $KUBECONFIG's first file, ~/.kube/config, in-cluster) into *kc and the
 * namespace (-n, else the context's, else "default") into o->ns. 0, or the exit code (1: cannot load,
 * 2: a name that is not valid), said on stderr. gs_kubeconfig_free(kc) after either.
 */
int gs_cmd_setup(struct gs_cmd_opts *o, struct gs_kubeconfig *kc);

/* One command run: a loop and an apiserver client on it. */
struct gs_cmd {
	uv_loop_t loop;
	struct gs_kube *kube;
	const struct gs_cmd_opts *o;
	unsigned skipped;      /* list items that did not decode, in the feeds below */
	unsigned skipped_gpms; /* GPUPlacementMaps that did not decode (gs_cmd_feed_gpms) */
};

/* 0 with the loop and client up, or <0 said on stderr (nothing to stop). */
int gs_cmd_start(struct gs_cmd *c, const struct gs_cmd_opts *o, struct gs_kubeconfig *kc);
/* Closes the client and the loop (every handle closed: uv_loop_close returns 0). */
void gs_cmd_stop(struct gs_cmd *c);

/* A GET's answer: status and body (owned, "" when none) once done without err; else err and msg. */
struct gs_cmd_fetch {
	int done, err, status;
	char *body;
	char msg[256];
};

/*
 * GET path: 0 with f->body (the caller frees it) for a 200, 1 for a 404 when allow_404 (nothing to free),
 * else <0 with a message naming what on stderr (the apiserver's Status message when it gave one).
 */
int gs_cmd_get(struct gs_cmd *c, const char *path, const char *what, int allow_404, struct gs_cmd_fetch *f);
/* A GET that says nothing on stderr: 0 with f->status and f->body (the caller frees it), or <0 with
 * f->msg. token_header: the header that carries the kubeconfig's token instead of Authorization. */
int gs_cmd_get_quiet(struct gs_cmd *c, const char *path, const char *token_header, struct gs_cmd_fetch *f);
/* An answer as cJSON, each NUL of a string masked as the daemon's decoder masks it (core/json_nul.h),
 * so that a command reads a name exactly as the daemon does. NULL when it is not JSON. */
cJSON *gs_cmd_parse_json(const char *body);

/* ---- a fresh engine, fed as the daemon's would be ------------------------------------------------ */

/* An engine with the daemon's flags as o gives them. */
struct gs_sched *gs_cmd_engine(const struct gs_cmd_opts *o);
/* The node named name into s: 1 fed, 0 absent (the engine then says it does not exist), <0 said. */
int gs_cmd_feed_node(struct gs_cmd *c, struct gs_sched *s, const char *name);
/* The nodes carrying the alias label (o->alias_label) with value name into s: 0, or <0 said. */
int gs_cmd_feed_alias_nodes(struct gs_cmd *c, struct gs_sched *s, const char *name);
/* Every non-terminal pod bound to node, whatever its scheduler (what the node's totals and ledger hold),
 * into s, but the pod of uid skip_uid (NULL: none). 0, or <0 said. */
int gs_cmd_feed_pods_on(struct gs_cmd *c, struct gs_sched *s, const char *node, const char *skip_uid);
/* The bound pods of controller owner_uid in ns (but skip_uid): an all-or-nothing gang with a bound
 * member was placed, and the engine places its other members alone (sched.h). 0, or <0 said. */
int gs_cmd_feed_bound_of(struct gs_cmd *c, struct gs_sched *s, const char *ns, const char *owner_uid,
			 const char *skip_uid);

/*
 * The GPUPlacementMaps of ns (NULL: of every namespace) into s, as the daemon's watch holds them: give
 * them before the pods (sched.h, "maps as objects"), or a pod by reference waits MAP_MISSING here while
 * the daemon places it. A 404 (the CRD is not installed) is no object: 0. A 403 is said with the rule the
 * caller lacks. 0, or <0 said.
 */
int gs_cmd_feed_gpms(struct gs_cmd *c, struct gs_sched *s, const char *ns);
/* Every PodDisruptionBudget into s, as the daemon's watch holds them (they order preemption's victims).
 * A refused list (403: the rule the caller lacks is said) leaves s without them: 0. 0, or <0 said. */
int gs_cmd_feed_pdbs(struct gs_cmd *c, struct gs_sched *s);

/* ---- the running daemon's answer -------------------------------------------------------------------- */

struct gs_cmd_daemon {
	char leader[256]; /* the leader's pod */
	char *json;       /* its answer, a JSON object (owned; trailing blanks cut); NULL when not asked */
	char why[512];    /* with json NULL: why */
};

/*
 * GET debug_path ("/debug/pods/NS/NAME") of the leader: the holder of the Lease o->sched_ns/o->lease,
 * whose identity is its pod name and a suffix (main.c), asked on its secure port through the
 * apiserver's pod proxy with the caller's own token in GS_AUTHZ_HEADER (the proxy drops Authorization;
 * the daemon checks the token with TokenReview and SubjectAccessReview). Fills v; v->json NULL with
 * v->why when it could not be asked or did not answer 200 with a JSON object. Free v->json.
 */
void gs_cmd_ask_leader(struct gs_cmd *c, const char *debug_path, struct gs_cmd_daemon *v);

#endif
