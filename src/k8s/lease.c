/*
 * lease.c: see lease.h.
 */
#include "k8s/lease.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/str.h"

/* The string value of o's member k; NULL when absent or not a string. */
static const char *string_field(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

int gs_lease_decode(const char *json, size_t len, struct gs_lease *out, char *err, size_t errlen)
{
	cJSON *root = cJSON_ParseWithLength(json, len);
	const cJSON *meta, *spec, *v;
	int r = -EINVAL;

	memset(out, 0, sizeof(*out));
	if (!cJSON_IsObject(root)) {
		snprintf(err, errlen, "the Lease is not a JSON object");
		goto out;
	}
	meta = cJSON_GetObjectItemCaseSensitive(root, "metadata");
	spec = cJSON_GetObjectItemCaseSensitive(root, "spec");
	if (!cJSON_IsObject(meta) || (spec && !cJSON_IsNull(spec) && !cJSON_IsObject(spec))) {
		snprintf(err, errlen, "the Lease has no metadata object, or a spec that is not an object");
		goto out;
	}
	static const char *const strs[] = {"holderIdentity", "acquireTime", "renewTime"};
	for (size_t i = 0; i < 3; i++) {
		v = cJSON_GetObjectItemCaseSensitive(spec, strs[i]);
		if (v && !cJSON_IsNull(v) && !cJSON_IsString(v)) {
			snprintf(err, errlen, "spec.%s is not a string", strs[i]);
			goto out;
		}
	}
	static const char *const nums[] = {"leaseDurationSeconds", "leaseTransitions"};
	for (size_t i = 0; i < 2; i++) {
		v = cJSON_GetObjectItemCaseSensitive(spec, nums[i]);
		if (v && !cJSON_IsNull(v) &&
		    (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 2147483647.0)) {
			snprintf(err, errlen, "spec.%s is not a non-negative int32", nums[i]);
			goto out;
		}
	}
	v = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
	if (!cJSON_IsString(v) || !v->valuestring[0]) {
		snprintf(err, errlen, "metadata.resourceVersion is missing or empty");
		goto out;
	}
	gs_str_copy(out->rv, sizeof(out->rv), cJSON_GetStringValue(v));
	gs_str_copy(out->holder, sizeof(out->holder), string_field(spec, "holderIdentity"));
	gs_str_copy(out->acquire, sizeof(out->acquire), string_field(spec, "acquireTime"));
	gs_str_copy(out->renew, sizeof(out->renew), string_field(spec, "renewTime"));
	v = cJSON_GetObjectItemCaseSensitive(spec, "leaseDurationSeconds");
	out->duration_s = cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
	v = cJSON_GetObjectItemCaseSensitive(spec, "leaseTransitions");
	out->transitions = cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
	r = 0;
out:
	cJSON_Delete(root);
	if (r < 0)
		memset(out, 0, sizeof(*out));
	return r;
}

int gs_lease_may_take(const struct gs_lease *cur, const char *identity, int64_t observed_ms, int64_t lease_ms,
		      int64_t now_ms)
{
	if (!cur->holder[0] || strcmp(cur->holder, identity) == 0)
		return 1;
	return observed_ms + lease_ms <= now_ms;
}

int64_t gs_lease_wait_ms(const struct gs_lease *cur, const char *identity, int64_t observed_ms, int64_t lease_ms,
			 int64_t now_ms, int64_t poll_ms)
{
	if (!cur->holder[0] || strcmp(cur->holder, identity) == 0)
		return poll_ms;
	int64_t left = observed_ms + lease_ms - now_ms;
	return left > 0 && left < poll_ms ? left : poll_ms;
}
