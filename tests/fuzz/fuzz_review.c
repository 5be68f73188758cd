/*
 * fuzz_review.c: libFuzzer driver for the decoders of the apiserver's TokenReview and
 * SubjectAccessReview replies (src/k8s/review.h), which the secure port's checker (k8s/authz.c) reads.
 * Every input is fed to both. A decoded user has a non-empty name and a uid and groups within their
 * caps; a failure or a refusal says why and leaves no user; a decoded user encodes back into a
 * SubjectAccessReview that cJSON reads again.
 *
 *   make fuzz FUZZ_NAMES=review FUZZ_SECONDS=60
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "k8s/review.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_user(const struct gs_review_user *u)
{
	if (!u->name || !*u->name || strlen(u->name) > GS_REVIEW_NAME_MAX)
		abort();
	if (u->uid && strlen(u->uid) > GS_REVIEW_NAME_MAX)
		abort();
	if (u->n_groups > GS_REVIEW_GROUPS_MAX || (u->n_groups && !u->groups))
		abort();
	for (size_t i = 0; i < u->n_groups; i++)
		if (!u->groups[i] || strlen(u->groups[i]) > GS_REVIEW_NAME_MAX)
			abort();
	char *sar = gs_review_access_json(u, "/metrics", "get");
	if (sar) {
		cJSON *o = cJSON_Parse(sar);
		if (!o)
			abort(); /* what we send is JSON whatever the names hold */
		cJSON_Delete(o);
		free(sar);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gs_review_user u;
	char why[256];
	int r;

	why[0] = '\0';
	r = gs_review_decode_token((const char *)data, size, &u, why, sizeof(why));
	if (r == 1) {
		check_user(&u);
		gs_review_user_free(&u);
	} else if (u.name || u.uid || u.groups || u.n_groups || (r < 0 && !why[0])) {
		abort();
	}
	why[0] = '\0';
	r = gs_review_decode_access((const char *)data, size, why, sizeof(why));
	if (r > 1 || (r < 0 && !why[0]))
		abort();
	return 0;
}
