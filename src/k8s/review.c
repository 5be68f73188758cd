#include "k8s/review.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

void gs_review_user_free(struct gs_review_user *u)
{
	free(u->name);
	free(u->uid);
	for (size_t i = 0; i < u->n_groups; i++)
		free(u->groups[i]);
	free(u->groups);
	memset(u, 0, sizeof(*u));
}

static cJSON *review(const char *version, const char *kind, cJSON **spec)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	if (!cJSON_AddStringToObject(o, "apiVersion", version) || !cJSON_AddStringToObject(o, "kind", kind) ||
	    !(*spec = cJSON_AddObjectToObject(o, "spec"))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static char *print_free(cJSON *o)
{
	char *s = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	return s;
}

char *gs_review_token_json(const char *token)
{
	cJSON *spec, *o = review("authentication.k8s.io/v1", "TokenReview", &spec);
	if (o && !cJSON_AddStringToObject(spec, "token", token)) {
		cJSON_Delete(o);
		return NULL;
	}
	return print_free(o);
}

char *gs_review_access_json(const struct gs_review_user *u, const char *path, const char *verb)
{
	cJSON *spec, *o = review("authorization.k8s.io/v1", "SubjectAccessReview", &spec), *groups, *nr;
	int ok = o != NULL;

	ok = ok && cJSON_AddStringToObject(spec, "user", u->name);
	ok = ok && (!u->uid || !*u->uid || cJSON_AddStringToObject(spec, "uid", u->uid));
	ok = ok && (groups = cJSON_AddArrayToObject(spec, "groups")) != NULL;
	for (size_t i = 0; ok && i < u->n_groups; i++) {
		cJSON *g = cJSON_CreateString(u->groups[i]);
		ok = g && cJSON_AddItemToArray(groups, g);
	}
	ok = ok && (nr = cJSON_AddObjectToObject(spec, "nonResourceAttributes")) != NULL;
	ok = ok && cJSON_AddStringToObject(nr, "path", path) && cJSON_AddStringToObject(nr, "verb", verb);
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return print_free(o);
}

static int oom(char *why, size_t whylen)
{
	snprintf(why, whylen, "out of memory");
	return -ENOMEM;
}

/* A string member at most GS_REVIEW_NAME_MAX long, copied into *out (NULL when absent: 0). */
static int copy_name(const cJSON *parent, const char *key, char **out, char *why, size_t whylen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(parent, key);
	*out = NULL;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v)) {
		snprintf(why, whylen, "%s is not a string", key);
		return -EINVAL;
	}
	if (strlen(v->valuestring) > GS_REVIEW_NAME_MAX) {
		snprintf(why, whylen, "%s is longer than %d bytes", key, GS_REVIEW_NAME_MAX);
		return -E2BIG;
	}
	*out = strdup(v->valuestring);
	return *out ? 0 : oom(why, whylen);
}

static int decode_groups(const cJSON *user, struct gs_review_user *u, char *why, size_t whylen)
{
	const cJSON *groups = cJSON_GetObjectItemCaseSensitive(user, "groups"), *g;
	int n;

	if (!groups || cJSON_IsNull(groups))
		return 0;
	if (!cJSON_IsArray(groups)) {
		snprintf(why, whylen, "status.user.groups is not a list");
		return -EINVAL;
	}
	n = cJSON_GetArraySize(groups);
	if (n > GS_REVIEW_GROUPS_MAX) {
		snprintf(why, whylen, "more than %d groups", GS_REVIEW_GROUPS_MAX);
		return -E2BIG;
	}
	u->groups = calloc((size_t)n + 1, sizeof(*u->groups));
	if (!u->groups)
		return oom(why, whylen);
	cJSON_ArrayForEach(g, groups) {
		if (!cJSON_IsString(g)) {
			snprintf(why, whylen, "a group is not a string");
			return -EINVAL;
		}
		if (strlen(g->valuestring) > GS_REVIEW_NAME_MAX) {
			snprintf(why, whylen, "a group is longer than %d bytes", GS_REVIEW_NAME_MAX);
			return -E2BIG;
		}
		if (!(u->groups[u->n_groups] = strdup(g->valuestring)))
			return oom(why, whylen);
		u->n_groups++;
	}
	return 0;
}

/* The reply's status object, or NULL with why set. *root to be freed by the caller. */
static const cJSON *reply_status(const char *body, size_t len, cJSON **root, char *why, size_t whylen)
{
	const cJSON *st;
	*root = cJSON_ParseWithLength(body, len);
	if (!*root) {
		snprintf(why, whylen, "the reply is not JSON");
		return NULL;
	}
	st = cJSON_GetObjectItemCaseSensitive(*root, "status");
	if (!cJSON_IsObject(st)) {
		snprintf(why, whylen, "the reply has no status");
		return NULL;
	}
	return st;
}

int gs_review_decode_token(const char *body, size_t len, struct gs_review_user *u, char *why, size_t whylen)
{
	cJSON *root;
	const cJSON *st = reply_status(body, len, &root, why, whylen), *user, *err;
	int r;

	memset(u, 0, sizeof(*u));
	if (!st) {
		r = -EINVAL;
		goto out;
	}
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "authenticated"))) {
		err = cJSON_GetObjectItemCaseSensitive(st, "error");
		snprintf(why, whylen, "%.200s", cJSON_IsString(err) ? err->valuestring : "not authenticated");
		r = 0;
		goto out;
	}
	user = cJSON_GetObjectItemCaseSensitive(st, "user");
	if (!cJSON_IsObject(user)) {
		snprintf(why, whylen, "authenticated without status.user");
		r = -EINVAL;
		goto out;
	}
	if ((r = copy_name(user, "username", &u->name, why, whylen)) < 0 ||
	    (r = copy_name(user, "uid", &u->uid, why, whylen)) < 0 || (r = decode_groups(user, u, why, whylen)) < 0)
		goto out;
	if (!u->name || !*u->name) {
		snprintf(why, whylen, "authenticated without a user name");
		r = -EINVAL;
		goto out;
	}
	r = 1;
out:
	if (r != 1)
		gs_review_user_free(u);
	cJSON_Delete(root);
	return r;
}

int gs_review_decode_access(const char *body, size_t len, char *why, size_t whylen)
{
	cJSON *root;
	const cJSON *st = reply_status(body, len, &root, why, whylen), *allowed, *reason;
	int r = -EINVAL;

	if (st) {
		allowed = cJSON_GetObjectItemCaseSensitive(st, "allowed");
		reason = cJSON_GetObjectItemCaseSensitive(st, "reason");
		if (!cJSON_IsBool(allowed)) {
			snprintf(why, whylen, "status.allowed is not a boolean");
		} else {
			r = cJSON_IsTrue(allowed) && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "denied"));
			snprintf(why, whylen, "%.200s", cJSON_IsString(reason) ? reason->valuestring : "");
		}
	}
	cJSON_Delete(root);
	return r;
}
