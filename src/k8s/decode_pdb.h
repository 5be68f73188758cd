/*
 * decode_pdb.h: a PodDisruptionBudget (policy/v1) from the apiserver's JSON into the compact record of
 * sched/objects.h (struct gs_pdb_obj), for lists and watch events. No I/O. Only what preemption reads:
 * identity, spec.selector and status.disruptionsAllowed and .disruptedPods (sched/sched_pdb.h).
 *
 * Strict like the pod decoder (decode.h): absent or null is absent, a wrong type fails the object with a
 * message naming the field ("status.disruptionsAllowed is not an integer"); caps on what a peer sizes
 * (GS_PDB_MAX_*), past which the object fails too. Errors: 0, -EINVAL (a one-line reason in err, which
 * may be NULL) or -ENOMEM; on failure every output is zeroed: nothing to free.
 */
#ifndef GS_K8S_DECODE_PDB_H
#define GS_K8S_DECODE_PDB_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "k8s/decode.h"
#include "sched/objects.h"

#define GS_PDB_PATH "/apis/policy/v1/poddisruptionbudgets"

#define GS_PDB_MAX_NAME      253  /* metadata.name, .namespace, a disrupted pod's name */
#define GS_PDB_MAX_META      128  /* metadata.uid, .resourceVersion */
#define GS_PDB_MAX_SELECTOR  256  /* matchLabels pairs plus matchExpressions */
#define GS_PDB_MAX_DISRUPTED 4096 /* status.disruptedPods entries */

int gs_decode_pdb(const cJSON *obj, struct gs_pdb_obj *out, char *err, size_t errlen);

/* One line of a watch on poddisruptionbudgets, as gs_decode_gpm_event (decode_gpm.h) reads one. */
struct gs_pdb_event {
	enum gs_decode_event_type type;
	struct gs_pdb_obj pdb;
	char *resource_version;
	int status_code;
	char *status_reason;
	char *status_message;
};

int gs_decode_pdb_event(const char *json, size_t len, struct gs_pdb_event *ev, char *err, size_t errlen);
void gs_pdb_event_free(struct gs_pdb_event *ev);

/* A PodDisruptionBudgetList: cb for every item that decodes (valid during the call; < 0 stops), the
 * others logged by the caller from *skipped; then *resource_version and *continue_token (malloc'ed). */
typedef int (*gs_pdb_item_cb)(const struct gs_pdb_obj *pdb, void *ud);
int gs_decode_pdb_list(const char *json, size_t len, gs_pdb_item_cb cb, void *ud, char **resource_version,
		       char **continue_token, unsigned *skipped, char *err, size_t errlen);

#endif
