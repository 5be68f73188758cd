/*
 * review.h: the apiserver's TokenReview (authentication.k8s.io/v1) and SubjectAccessReview
 * (authorization.k8s.io/v1) as JSON: the requests the secure port sends and the decoding of the
 * replies (k8s/authz.h asks, over its own client). No I/O. The decoders read what the apiserver (or
 * whoever answers in its place) sends: every field has a cap, and anything else is an error with a
 * reason; tests/fuzz/fuzz_review.c feeds them.
 */
#ifndef GS_K8S_REVIEW_H
#define GS_K8S_REVIEW_H

#include <stddef.h>

#define GS_REVIEW_NAME_MAX   1024 /* a user name, uid or group name */
#define GS_REVIEW_GROUPS_MAX 512

struct gs_review_user {
	char *name;
	char *uid; /* NULL when the reply has none */
	char **groups;
	size_t n_groups;
};
void gs_review_user_free(struct gs_review_user *u); /* frees the members; safe on a zeroed struct */

/* The TokenReview to POST for token (NUL-terminated JSON, malloc'd; the caller frees). NULL: -ENOMEM. */
char *gs_review_token_json(const char *token);
/* The SubjectAccessReview asking whether u may `verb` the non-resource path. NULL: -ENOMEM. */
char *gs_review_access_json(const struct gs_review_user *u, const char *path, const char *verb);

/*
 * A TokenReview's reply: 1 authenticated (*u filled: the caller frees it), 0 not (status.error, if
 * any, in why), <0 a reply that is no TokenReview status (not JSON, no status, an authenticated user
 * without a name, a field over its cap: -EINVAL, -E2BIG, -ENOMEM), with the reason in why. *u is left
 * zeroed unless 1 is returned.
 */
int gs_review_decode_token(const char *body, size_t len, struct gs_review_user *u, char *why, size_t whylen);
/*
 * A SubjectAccessReview's reply: 1 allowed (status.allowed true and status.denied not true), 0 not
 * (status.reason in why), <0 not such a reply (why says how).
 */
int gs_review_decode_access(const char *body, size_t len, char *why, size_t whylen);

#endif
