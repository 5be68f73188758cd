/*
 * decode_json.h: reading the apiserver's JSON with cJSON, one rule for every JSON decoder of src/k8s
 * (decode.c: pods and nodes; decode_gpm.c: GPUPlacementMaps). Private to src/k8s/decode*.c.
 *
 * Absent or null is "not there" (0 returned, the output NULL, or left alone for an integer); the wrong
 * JSON type is an error naming the field as "path.key" (a top-level field has the path ""), formatted
 * only on failure. Every error goes through the context: its message "WHAT: ..." into err, where what
 * names the object ("pod default/web-0"), returning -EINVAL, or -ENOMEM.
 */
#ifndef GS_K8S_DECODE_JSON_H
#define GS_K8S_DECODE_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "k8s/decode.h"

/* Where an error goes, and which object it is about. */
struct gs_dctx {
	char *err;
	size_t errlen;
	char what[320];
};

/* "." between a path and a key, none after the top-level path "". */
#define GS_DCTX_DOT(path) ((path)[0] ? "." : "")

__attribute__((format(printf, 2, 3))) int gs_dctx_fail(struct gs_dctx *d, const char *fmt, ...);
int gs_dctx_nomem(struct gs_dctx *d);

/* obj[key], or NULL when obj is not an object, the key is absent, or its value is null. */
const cJSON *gs_dctx_get(const cJSON *obj, const char *key);

/* parent[key] as an object, a list, a string borrowed from the tree, a string copied out (malloc'ed),
 * a boolean (absent: 0). */
int gs_dctx_get_obj(struct gs_dctx *d, const cJSON *parent, const char *key, const char *path, const cJSON **out);
int gs_dctx_get_arr(struct gs_dctx *d, const cJSON *parent, const char *key, const char *path, const cJSON **out);
int gs_dctx_get_sref(struct gs_dctx *d, const cJSON *parent, const char *key, const char *path, const char **out);
int gs_dctx_get_str(struct gs_dctx *d, const cJSON *parent, const char *key, const char *path, char **out);
int gs_dctx_get_bool(struct gs_dctx *d, const cJSON *parent, const char *key, const char *path, int *out);

/* The same copied out, refused past max bytes ("is longer than MAX bytes") before any copy. */
int gs_dctx_get_str_max(struct gs_dctx *d, const cJSON *parent, const char *key, const char *path, size_t max,
			char **out);

/* s (NULL: *out NULL) copied out (malloc'ed). */
int gs_dctx_dup(struct gs_dctx *d, const char *s, char **out);

/*
 * An integer in [lo, hi]; absent leaves *out alone (the caller's default). cJSON holds numbers as
 * doubles: a fraction is refused, and 2^63 (what 9223372036854775807 becomes) reads as INT64_MAX.
 */
int gs_dctx_get_int(struct gs_dctx *d, const cJSON *parent, const char *key, const char *path, int64_t lo, int64_t hi,
		    int64_t *out);

/* json[0..len) as exactly one JSON object (blanks may follow), NULs masked (core/json_nul.h). NULL with
 * *r < 0 on failure; the caller cJSON_Delete()s the tree. */
cJSON *gs_dctx_parse(struct gs_dctx *d, const char *json, size_t len, int *r);

/* A metav1.Status object: code (0..999), reason and message (malloc'ed; 0/NULL when absent). */
int gs_dctx_status(struct gs_dctx *d, const cJSON *st, int *code, char **reason, char **message);

/* The name of a watch type ("ADDED"), "?" for none. */
const char *gs_dctx_event_type_name(enum gs_decode_event_type t);

/*
 * The envelope of a watch line, {"type": ..., "object": {...}}: *type set, then for ERROR the Status
 * into *code, *reason, *message and for BOOKMARK object.metadata.resourceVersion into *rv (required), both
 * malloc'ed, returning 1: the event is complete. 0: *obj is the object of the watched kind, to decode.
 */
int gs_dctx_event(struct gs_dctx *d, const cJSON *root, enum gs_decode_event_type *type, const cJSON **obj, char **rv,
		  int *code, char **reason, char **message);

/*
 * The envelope of a list reply: metadata.resourceVersion and .continue into *rv and *cont (malloc'ed,
 * NULL when absent) and the items into *items (NULL for "items": null, Go's empty list; a missing key
 * is not a list reply: an error). On failure *rv and *cont are freed and NULL.
 */
int gs_dctx_list(struct gs_dctx *d, const cJSON *root, char **rv, char **cont, const cJSON **items);

/*
 * A whole list document: parses json, reads the list envelope, and calls item for each element (its
 * return: 0 decoded, > 0 skipped with ierr, < 0 fails the list; gs_decode__item_outcome's rules), then
 * hands back the list's resourceVersion and continue token (malloc'd, NULL when absent) and how many
 * items were skipped. d->what names the list in messages. 0, or < 0 with d's error.
 */
typedef int (*gs_dctx_item_fn)(const cJSON *it, void *ud, char *ierr, size_t ierrlen);
int gs_dctx_list_each(struct gs_dctx *d, const char *json, size_t len, gs_dctx_item_fn item, void *ud,
		      char **resource_version, char **continue_token, unsigned *skipped);

/*
 * A watch line of a kind read in JSON alone (decode_gpm.c, decode_pdb.c): the envelope as gs_dctx_event
 * reads it, then, for ADDED, MODIFIED and DELETED, the object by rec into the record at out (rec zeroes
 * it first and releases it on failure, and points *orv at the record's resourceVersion, which *rv gets
 * a copy of). 0, or < 0 with d's error; the caller releases what was filled, on failure too.
 */
typedef int (*gs_dctx_record_fn)(struct gs_dctx *d, const cJSON *obj, void *out, const char **orv);
int gs_dctx_event_record(struct gs_dctx *d, const char *json, size_t len, gs_dctx_record_fn rec, void *out,
			 enum gs_decode_event_type *type, char **rv, int *code, char **reason, char **message);

/*
 * Shared by the JSON decoders of objects (decode.c, decode_pdb.c). parent[key], a string -> string object
 * (labels, nodeSelector, matchLabels), in object order into *out (a null value leaves its pair out); and
 * one selector requirement {key, operator, values} (matchExpressions when field is 0, matchFields when 1;
 * an unknown operator is GS_SEL_INVALID; key required). On failure both leave what they allocated in
 * *out (counted in *n_out, and in out->n_values), for the caller's free of the whole record.
 */
int gs_decode__labels(struct gs_dctx *d, const cJSON *parent, const char *key, const char *path, struct gs_label **out,
		      int *n_out);
int gs_decode__sel_req(struct gs_dctx *d, const cJSON *q, const char *path, int field, struct gs_sel_req *out);

#endif
