/*
 * test_admission.c: the admission decision, the JSON Patch / JSON Pointer / base64 encoders, and the
 * golden transcripts in tests/golden/admission.
 *
 * Golden cases: every <case>.request.json is reviewed and the answer rendered as <case>.expected.txt,
 * a readable transcript (outcome, HTTP status, allowed, the nvidia.com/gpu count when not 0, warnings,
 * status, and the JSON Patch decoded from base64, one operation per line). GS_GOLDEN_UPDATE=1 rewrites the transcripts instead of
 * comparing; review the diff. GS_GOLDEN_DIR overrides the directory (default: relative to the cwd).
 *
 * Cases named tolerate-* are reviewed with tolerate_dedicated on (--tolerate-dedicated-taint), every
 * other one with it off; the transcript says "toleration added" when the patch adds it.
 *
 * Every patched case is also applied (a small RFC 6902 add/replace applier below) and the patched
 * pod reviewed again: it must come back UNCHANGED with no patch, which is what a retried admission
 * call sees.
 *
 * Maps as objects: the GPUPlacementMaps a pod may name are tests/golden/admission/gpm/NS_NAME.json,
 * decoded with gs_decode_gpm into a table the reviews look up (map_lookup). Cases named ref-no-lookup-*
 * are reviewed without a lookup, ref-unloaded-* with the table not loaded yet (-EAGAIN); the object
 * named not-held exists but the scheduler does not hold it (its memory budgets: view.refused).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <mbedtls/base64.h>

#include "core/buf.h"
#include "k8s/decode_gpm.h"
#include "sched/checks.h"
#include "sched/map.h"
#include "sched/map_cache.h"
#include "webhook/admission.h"
#include "webhook/jsonpatch.h"

#define MAP_TEXT "0=node1:0,1\n1=node2:2\n2=node3:0,1,2\n3=node4:3\n4=node4:3"

static struct gs_admission *new_admission_opts(int tolerate_dedicated)
{
	struct gs_admission_opts o = {.scheduler_name = "gpu-scheduler",
				      .annotation = "gpu-scheduling-map",
				      .tolerate_dedicated = tolerate_dedicated};
	struct gs_admission *a = NULL;
	assert_int_equal(gs_admission_new(&o, &a), 0);
	assert_non_null(a);
	return a;
}

static struct gs_admission *new_admission(void)
{
	return new_admission_opts(0);
}

/* ---- a table of GPUPlacementMaps, as the daemon's engine holds them -------------------------------- */

struct gpm_table {
	struct gs_gpm items[32];
	size_t n;
	int loaded; /* 0: every lookup is -EAGAIN, as before the daemon's first list */
};

static int gpm_lookup(void *ud, const char *ns, const char *name, struct gs_gpm_view *out)
{
	const struct gpm_table *t = ud;
	if (!t->loaded)
		return -EAGAIN;
	if (strcmp(name, "not-held") == 0) { /* an object the scheduler refused for its memory budgets */
		memset(out, 0, sizeof(*out));
		out->ns = ns;
		out->name = name;
		out->uid = "uid-not-held";
		out->generation = 2;
		out->refused =
			"not held by the scheduler: it would take 352.4 KiB of its memory, and the maps of "
			"namespace default would pass its --placement-map-memory-per-namespace of 16.0 MiB; delete "
			"or shrink some of them";
		return 1;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct gs_gpm *g = &t->items[i];
		if (strcmp(g->ns, ns) != 0 || strcmp(g->name, name) != 0)
			continue;
		gs_gpm_view_of(g, out);
		return 1;
	}
	return 0;
}

static char *read_file(const char *path, size_t *len);

/* Every dir/gpm/<file>.json, decoded. */
static void gpm_table_load(struct gpm_table *t, const char *dir)
{
	char sub[1024], path[1100], err[256] = "";
	struct dirent **names = NULL;
	memset(t, 0, sizeof(*t));
	t->loaded = 1;
	snprintf(sub, sizeof(sub), "%s/gpm", dir);
	int n = scandir(sub, &names, NULL, alphasort);
	assert_true(n > 2);
	for (int i = 0; i < n; i++) {
		size_t len = strlen(names[i]->d_name);
		if (len > 5 && strcmp(names[i]->d_name + len - 5, ".json") == 0) {
			snprintf(path, sizeof(path), "%s/%s", sub, names[i]->d_name);
			char *text = read_file(path, &len);
			cJSON *j = cJSON_ParseWithLength(text, len);
			assert_true(t->n < sizeof(t->items) / sizeof(t->items[0]));
			if (gs_decode_gpm(j, &t->items[t->n++], err, sizeof(err)) < 0)
				fail_msg("%s: %s", path, err);
			cJSON_Delete(j);
			free(text);
		}
		free(names[i]);
	}
	free(names);
}

static void gpm_table_free(struct gpm_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		gs_gpm_free(&t->items[i]);
	t->n = 0;
}

static struct gs_admission *new_admission_table(int tolerate_dedicated, struct gpm_table *t)
{
	struct gs_admission_opts o = {.scheduler_name = "gpu-scheduler",
				      .annotation = "gpu-scheduling-map",
				      .map_lookup = t ? gpm_lookup : NULL,
				      .map_lookup_ud = t,
				      .tolerate_dedicated = tolerate_dedicated};
	struct gs_admission *a = NULL;
	assert_int_equal(gs_admission_new(&o, &a), 0);
	return a;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct gs_buf b;
	gs_buf_init(&b, 0);
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		assert_int_equal(gs_buf_append(&b, chunk, n), 0);
	fclose(f);
	if (!b.data)
		assert_int_equal(gs_buf_append(&b, "", 0), 0);
	return gs_buf_steal(&b, len);
}

/* ---- a minimal JSON Patch applier: add and replace, enough to replay our own patches ---------- */

/* Decodes the next reference token of *p into tok; 0 at the end of the pointer. */
static int next_token(const char **p, char *tok, size_t size)
{
	if (**p != '/')
		return 0;
	(*p)++;
	size_t n = 0;
	while (**p && **p != '/') {
		char c = **p;
		if (c == '~') {
			(*p)++;
			assert_true(**p == '0' || **p == '1');
			c = **p == '0' ? '~' : '/';
		}
		assert_true(n + 1 < size);
		tok[n++] = c;
		(*p)++;
	}
	tok[n] = '\0';
	return 1;
}

static cJSON *child(cJSON *node, const char *tok)
{
	if (cJSON_IsArray(node)) {
		char *end;
		long i = strtol(tok, &end, 10);
		return *end || i < 0 ? NULL : cJSON_GetArrayItem(node, (int)i);
	}
	return cJSON_GetObjectItemCaseSensitive(node, tok);
}

static void apply_op(cJSON *doc, const cJSON *op)
{
	const char *kind = cJSON_GetObjectItemCaseSensitive(op, "op")->valuestring;
	const char *p = cJSON_GetObjectItemCaseSensitive(op, "path")->valuestring;
	cJSON *value = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(op, "value"), 1);
	assert_non_null(value);
	char tok[512], last[512];
	cJSON *parent = doc;
	assert_true(next_token(&p, last, sizeof(last)));
	while (next_token(&p, tok, sizeof(tok))) {
		parent = child(parent, last);
		assert_non_null(parent); /* RFC 6902: the parent must exist for add and replace */
		strcpy(last, tok);
	}
	if (strcmp(kind, "replace") == 0) {
		assert_non_null(child(parent, last)); /* replace needs an existing target */
		if (cJSON_IsArray(parent))
			cJSON_ReplaceItemInArray(parent, atoi(last), value);
		else
			cJSON_ReplaceItemInObjectCaseSensitive(parent, last, value);
	} else {
		assert_string_equal(kind, "add");
		if (cJSON_IsArray(parent)) {
			assert_string_equal(last, "-"); /* we only ever append */
			cJSON_AddItemToArray(parent, value);
		} else {
			if (cJSON_GetObjectItemCaseSensitive(parent, last))
				cJSON_ReplaceItemInObjectCaseSensitive(parent, last, value);
			else
				cJSON_AddItemToObject(parent, last, value);
		}
	}
}

/* ---- rendering one case ------------------------------------------------------------------------ */

/* Decodes the base64 patch of a response; the caller frees. */
static char *decode_patch(const char *b64)
{
	size_t olen = 0, n = strlen(b64);
	char *out = malloc(n + 1);
	assert_non_null(out);
	assert_int_equal(mbedtls_base64_decode((unsigned char *)out, n + 1, &olen, (const unsigned char *)b64, n), 0);
	out[olen] = '\0';
	return out;
}

/* The JSONPatch of the AdmissionReview response in review (decoded, malloc'd). */
static char *response_patch(const char *review)
{
	cJSON *j = cJSON_Parse(review);
	char *patch =
		decode_patch(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "response"), "patch")
				     ->valuestring);
	cJSON_Delete(j);
	return patch;
}

/*
 * Reviews body, checks the answer's invariants and renders the transcript into txt. When the answer
 * has a patch, *patched (if given) receives the request with the patch applied to its object.
 */
static void render_case(struct gs_admission *a, const char *body, size_t len, struct gs_buf *txt, char **patched,
			enum gs_admission_outcome *outcome)
{
	struct gs_buf out;
	gs_buf_init(&out, 0);
	struct gs_admission_result res;
	int r = gs_admission_review(a, body, len, &out, &res);
	*outcome = res.outcome;
	if (patched)
		*patched = NULL;
	gs_buf_printf(txt, "outcome: %s\n", gs_admission_outcome_name(res.outcome));
	if (r < 0) {
		assert_int_equal(r, -EINVAL);
		assert_int_equal(res.outcome, GS_ADMISSION_BAD_REQUEST);
		assert_int_equal(out.len, 0);
		assert_true(res.message[0] != '\0');
		gs_buf_printf(txt, "http: 400\nmessage: %s\n", res.message);
		gs_buf_free(&out);
		return;
	}
	assert_int_not_equal(res.outcome, GS_ADMISSION_BAD_REQUEST);
	gs_buf_printf(txt, "http: 200\n");

	/* The answer must be one valid AdmissionReview echoing the uid. */
	cJSON *resp = cJSON_ParseWithLength(out.data, out.len);
	assert_non_null(resp);
	cJSON *req = cJSON_ParseWithLength(body, len);
	assert_non_null(req);
	const char *uid =
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(req, "request"), "uid")->valuestring;
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(resp, "apiVersion")->valuestring, "admission.k8s.io/v1");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(resp, "kind")->valuestring, "AdmissionReview");
	cJSON *response = cJSON_GetObjectItemCaseSensitive(resp, "response");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(response, "uid")->valuestring, uid);
	assert_string_equal(res.uid, uid);
	cJSON *allowed = cJSON_GetObjectItemCaseSensitive(response, "allowed");
	assert_true(cJSON_IsBool(allowed));
	assert_int_equal(cJSON_IsTrue(allowed), res.outcome != GS_ADMISSION_DENIED);
	gs_buf_printf(txt, "allowed: %s\n", cJSON_IsTrue(allowed) ? "true" : "false");
	if (res.ns[0] || res.name[0])
		gs_buf_printf(txt, "pod: %s/%s\n", res.ns, res.name);
	if (res.dry_run)
		gs_buf_printf(txt, "dry run: true\n");
	if (res.index >= 0)
		gs_buf_printf(txt, "index: %ld from %s\n", res.index, gs_index_source_name(res.index_source));
	if (res.map_ref[0])
		gs_buf_printf(txt, "map ref: %s, generation %lld%s\n", res.map_ref, (long long)res.map_generation,
			      res.generation_added ? " (recorded by the patch)" : "");
	assert_true(!res.generation_added || res.outcome == GS_ADMISSION_PATCHED);
	if (res.node[0])
		gs_buf_printf(txt, "entry: node %s, devices %s\n", res.node, res.devices);
	if (res.outcome == GS_ADMISSION_PATCHED || res.outcome == GS_ADMISSION_UNCHANGED)
		gs_buf_printf(txt, "containers patched: %d\n", res.containers_patched);
	if (res.toleration_added)
		gs_buf_printf(txt, "toleration added\n");
	assert_true(!res.toleration_added || res.outcome == GS_ADMISSION_PATCHED);
	if (res.gpu_requested != 0)
		gs_buf_printf(txt, "nvidia.com/gpu requested: %lld%s\n", (long long)res.gpu_requested,
			      res.gpu_requested < 0 ? " (a value is not a whole number)" : "");
	if (res.outcome == GS_ADMISSION_SKIPPED)
		assert_int_equal(res.gpu_requested, 0);

	cJSON *status = cJSON_GetObjectItemCaseSensitive(response, "status");
	assert_int_equal(status != NULL, res.outcome == GS_ADMISSION_DENIED);
	if (status) {
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(status, "status")->valuestring, "Failure");
		gs_buf_printf(txt, "status: %d %s: %s\n", cJSON_GetObjectItemCaseSensitive(status, "code")->valueint,
			      cJSON_GetObjectItemCaseSensitive(status, "reason")->valuestring,
			      cJSON_GetObjectItemCaseSensitive(status, "message")->valuestring);
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(status, "message")->valuestring, res.message);
	}
	/* A warning for WARNED, and the device plugin warning on top of a PATCHED or UNCHANGED answer. */
	int device_plugin =
		(res.outcome == GS_ADMISSION_PATCHED || res.outcome == GS_ADMISSION_UNCHANGED) && res.gpu_requested > 0;
	cJSON *warnings = cJSON_GetObjectItemCaseSensitive(response, "warnings");
	assert_int_equal(warnings != NULL, res.outcome == GS_ADMISSION_WARNED || device_plugin);
	if (warnings) {
		assert_true(cJSON_IsArray(warnings));
		assert_int_equal(cJSON_GetArraySize(warnings), 1);
		const char *w0 = cJSON_GetArrayItem(warnings, 0)->valuestring;
		assert_non_null(w0);
		if (strlen(w0) < sizeof(res.message))
			assert_string_equal(w0, res.message);
	}
	if (device_plugin)
		assert_non_null(strstr(res.message, "nvidia.com/gpu"));
	cJSON *w;
	cJSON_ArrayForEach(w, warnings)
		gs_buf_printf(txt, "warning: %s\n", w->valuestring);

	cJSON *patch64 = cJSON_GetObjectItemCaseSensitive(response, "patch");
	assert_int_equal(patch64 != NULL, res.outcome == GS_ADMISSION_PATCHED);
	if (patch64) {
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(response, "patchType")->valuestring, "JSONPatch");
		char *text = decode_patch(patch64->valuestring);
		cJSON *ops = cJSON_Parse(text);
		assert_true(cJSON_IsArray(ops));
		assert_true(cJSON_GetArraySize(ops) > 0);
		gs_buf_printf(txt, "patch:\n");
		cJSON *obj =
			cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(req, "request"), "object");
		cJSON *op;
		cJSON_ArrayForEach(op, ops) {
			char *v = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(op, "value"));
			gs_buf_printf(txt, "  %s %s %s\n", cJSON_GetObjectItemCaseSensitive(op, "op")->valuestring,
				      cJSON_GetObjectItemCaseSensitive(op, "path")->valuestring, v ? v : "");
			free(v);
			apply_op(obj, op);
		}
		if (patched)
			*patched = cJSON_PrintUnformatted(req);
		cJSON_Delete(ops);
		free(text);
	} else {
		assert_null(cJSON_GetObjectItemCaseSensitive(response, "patchType"));
	}
	cJSON_Delete(req);
	cJSON_Delete(resp);
	gs_buf_free(&out);
}

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && strcmp(s + n - m, suf) == 0;
}

static void test_golden(void **state)
{
	const char *dir = getenv("GS_GOLDEN_DIR");
	if (!dir)
		dir = "tests/golden/admission";
	int update = getenv("GS_GOLDEN_UPDATE") && strcmp(getenv("GS_GOLDEN_UPDATE"), "1") == 0;
	struct dirent **names = NULL;
	int n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		fail_msg("cannot read %s (run from the repository root or set GS_GOLDEN_DIR): %s", dir,
			 strerror(errno));
	struct gpm_table table, unloaded = {.loaded = 0};
	gpm_table_load(&table, dir);
	struct gs_admission *plain = new_admission_table(0, &table), *tolerating = new_admission_table(1, &table);
	struct gs_admission *no_lookup = new_admission_table(0, NULL), *not_loaded = new_admission_table(0, &unloaded);
	int cases = 0, failed = 0, replayed = 0;
	for (int i = 0; i < n; i++) {
		const char *fn = names[i]->d_name;
		if (!has_suffix(fn, ".request.json"))
			continue;
		struct gs_admission *a = strncmp(fn, "tolerate-", 9) == 0        ? tolerating
					 : strncmp(fn, "ref-no-lookup", 13) == 0 ? no_lookup
					 : strncmp(fn, "ref-unloaded", 12) == 0  ? not_loaded
										 : plain;
		char path[1024], expected_path[1024];
		snprintf(path, sizeof(path), "%s/%s", dir, fn);
		snprintf(expected_path, sizeof(expected_path), "%s/%.*s.expected.txt", dir,
			 (int)(strlen(fn) - strlen(".request.json")), fn);
		size_t len = 0;
		char *body = read_file(path, &len);
		assert_non_null(body);
		/* The decoder must not need a terminator: hand it an exact-size copy (ASan sees over-reads). */
		char *exact = malloc(len ? len : 1);
		memcpy(exact, body, len);

		struct gs_buf txt;
		gs_buf_init(&txt, 0);
		char *patched = NULL;
		enum gs_admission_outcome outcome;
		render_case(a, exact, len, &txt, &patched, &outcome);
		cases++;

		if (patched) {
			/* The same pod, patched, reviewed again: nothing left to do. */
			struct gs_buf again;
			gs_buf_init(&again, 0);
			enum gs_admission_outcome o2;
			render_case(a, patched, strlen(patched), &again, NULL, &o2);
			if (o2 != GS_ADMISSION_UNCHANGED)
				fail_msg("%s: after applying its patch the pod is %s, not unchanged:\n%s", fn,
					 gs_admission_outcome_name(o2), again.data);
			replayed++;
			gs_buf_free(&again);
			free(patched);
		}

		if (update) {
			FILE *f = fopen(expected_path, "wb");
			assert_non_null(f);
			fwrite(txt.data, 1, txt.len, f);
			fclose(f);
		} else {
			size_t elen = 0;
			char *expected = read_file(expected_path, &elen);
			if (!expected || elen != txt.len || memcmp(expected, txt.data, elen) != 0) {
				fprintf(stderr, "golden %s differs\n--- expected (%s)\n%s--- got\n%s", fn,
					expected_path, expected ? expected : "(missing)\n", txt.data);
				failed++;
			}
			free(expected);
		}
		gs_buf_free(&txt);
		free(exact);
		free(body);
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	gs_admission_free(plain);
	gs_admission_free(tolerating);
	gs_admission_free(no_lookup);
	gs_admission_free(not_loaded);
	gpm_table_free(&table);
	fprintf(stderr, "golden admission: %d cases, %d replayed, %d differ%s\n", cases, replayed, failed,
		update ? " (updated)" : "");
	assert_true(cases >= 30);
	assert_true(replayed >= 10);
	assert_int_equal(failed, 0);
}

/* ---- encoders ---------------------------------------------------------------------------------- */

static void test_jsonptr_escaping(void **state)
{
	struct gs_buf p;
	gs_buf_init(&p, 0);
	assert_int_equal(gs_jsonpatch_ptr_append(&p, "spec"), 0);
	assert_int_equal(gs_jsonpatch_ptr_append(&p, "a/b~c"), 0);
	assert_int_equal(gs_jsonpatch_ptr_append(&p, "~1"), 0);
	assert_int_equal(gs_jsonpatch_ptr_append_index(&p, 12), 0);
	assert_int_equal(gs_jsonpatch_ptr_append(&p, ""), 0);
	assert_string_equal(p.data, "/spec/a~1b~0c/~01/12/");
	gs_buf_free(&p);
}

static void test_base64(void **state)
{
	static const struct {
		const char *in, *out;
	} v[] = {{"", ""},
		 {"f", "Zg=="},
		 {"fo", "Zm8="},
		 {"foo", "Zm9v"},
		 {"foob", "Zm9vYg=="},
		 {"fooba", "Zm9vYmE="},
		 {"foobar", "Zm9vYmFy"}};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct gs_buf b;
		gs_buf_init(&b, 0);
		assert_int_equal(gs_buf_append_str(&b, "x:"), 0);
		assert_int_equal(gs_jsonpatch_base64_append(&b, v[i].in, strlen(v[i].in)), 0);
		assert_int_equal(b.len, 2 + strlen(v[i].out));
		assert_string_equal(b.data + 2, v[i].out);
		gs_buf_free(&b);
	}
	/* Past the cap: an error and the buffer as it was. */
	struct gs_buf b;
	gs_buf_init(&b, 8);
	assert_int_equal(gs_buf_append_str(&b, "ab"), 0);
	assert_int_equal(gs_jsonpatch_base64_append(&b, "foobar", 6), -E2BIG);
	assert_int_equal(b.len, 2);
	assert_string_equal(b.data, "ab");
	gs_buf_free(&b);
}

static void test_jsonpatch_document(void **state)
{
	struct gs_jsonpatch p;
	gs_jsonpatch_init(&p, 0);
	assert_int_equal(gs_jsonpatch_finish(&p), 0);
	assert_string_equal(p.buf.data, "[]");
	gs_jsonpatch_free(&p);

	gs_jsonpatch_init(&p, 0);
	assert_int_equal(gs_jsonpatch_op(&p, "add", "/a/\"q\"", "[1]"), 0);
	assert_int_equal(gs_jsonpatch_op(&p, "remove", "/b", NULL), 0);
	assert_int_equal(gs_jsonpatch_finish(&p), 0);
	assert_int_equal(gs_jsonpatch_finish(&p), 0); /* idempotent */
	assert_int_equal(gs_jsonpatch_op(&p, "add", "/c", "1"), -EINVAL);
	assert_string_equal(
		p.buf.data,
		"[{\"op\":\"add\",\"path\":\"/a/\\\"q\\\"\",\"value\":[1]},{\"op\":\"remove\",\"path\":\"/b\"}]");
	assert_int_equal(p.n_ops, 2);
	gs_jsonpatch_free(&p);

	/* A failed op leaves no half operation behind. */
	gs_jsonpatch_init(&p, 48);
	assert_int_equal(gs_jsonpatch_op(&p, "add", "/a", "1"), 0);
	size_t before = p.buf.len;
	assert_int_equal(gs_jsonpatch_op(&p, "add", "/a-much-longer-path", "\"value\""), -E2BIG);
	assert_int_equal(p.buf.len, before);
	assert_int_equal(p.n_ops, 1);
	assert_int_equal(gs_jsonpatch_finish(&p), 0);
	cJSON *j = cJSON_Parse(p.buf.data);
	assert_true(cJSON_IsArray(j));
	assert_int_equal(cJSON_GetArraySize(j), 1);
	cJSON_Delete(j);
	gs_jsonpatch_free(&p);
}

/* ---- decisions beyond the golden files --------------------------------------------------------- */

static int review_str(struct gs_admission *a, const char *body, struct gs_buf *out, struct gs_admission_result *res)
{
	return gs_admission_review(a, body, strlen(body), out, res);
}

static char *pod_review(const char *name, const char *map, const char *env_json)
{
	struct gs_buf b;
	gs_buf_init(&b, 0);
	gs_buf_printf(&b,
		      "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
		      "\"uid\":\"u-1\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
		      "\"operation\":\"CREATE\",\"namespace\":\"ns1\",\"object\":{\"metadata\":{\"name\":\"%s\","
		      "\"annotations\":{\"gpu-scheduling-map\":",
		      name);
	gs_buf_append_json_str(&b, map);
	gs_buf_printf(&b, "}},\"spec\":{\"schedulerName\":\"gpu-scheduler\",\"containers\":[{\"name\":\"c\"%s%s}]}}}}",
		      env_json ? ",\"env\":" : "", env_json ? env_json : "");
	size_t len;
	return gs_buf_steal(&b, &len);
}

static void test_result_fields(void **state)
{
	struct gs_admission *a = new_admission();
	struct gs_buf out;
	gs_buf_init(&out, 0);
	struct gs_admission_result res;
	char *body = pod_review("webhook-test-2", MAP_TEXT, NULL);
	assert_int_equal(review_str(a, body, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_PATCHED);
	assert_string_equal(res.uid, "u-1");
	assert_string_equal(res.ns, "ns1");
	assert_string_equal(res.name, "webhook-test-2");
	assert_int_equal(res.index, 2);
	assert_int_equal(res.index_source, GS_INDEX_NAME);
	assert_string_equal(res.node, "node3");
	assert_string_equal(res.devices, "0,1,2");
	assert_int_equal(res.containers_patched, 1);
	assert_int_equal(res.dry_run, 0);
	assert_string_equal(res.message, "");

	/* The answer is appended: what was in out stays in front. */
	gs_buf_reset(&out);
	assert_int_equal(gs_buf_append_str(&out, "PREFIX"), 0);
	assert_int_equal(review_str(a, body, &out, &res), 0);
	assert_memory_equal(out.data, "PREFIX{", 7);
	free(body);

	/* Many long UUIDs: the result keeps a marked prefix, the patch keeps everything. */
	struct gs_buf map;
	gs_buf_init(&map, 0);
	gs_buf_append_str(&map, "0=node1:");
	for (int i = 0; i < 20; i++)
		gs_buf_printf(&map, "%sGPU-8f2c6a1e-0b6d-4a55-9f3e-0c1d2e3f4a%02d", i ? "," : "", i);
	body = pod_review("w-0", map.data, NULL);
	gs_buf_reset(&out);
	assert_int_equal(review_str(a, body, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_PATCHED);
	assert_int_equal(strlen(res.devices), sizeof(res.devices) - 1);
	assert_string_equal(res.devices + sizeof(res.devices) - 4, "...");
	char *patch = response_patch(out.data);
	assert_non_null(strstr(patch, "0c1d2e3f4a19\"}]"));
	free(patch);
	free(body);
	gs_buf_free(&map);

	gs_buf_free(&out);
	gs_admission_free(a);
}

/* The node-side policy: a stand-in for the scheduler's node cache that forbids node3 to ns1. */
static int policy_calls;
static int deny_node3(void *ud, const char *node, const char *ns, char *why, size_t size)
{
	policy_calls++;
	assert_string_equal((const char *)ud, "ud");
	if (strcmp(node, "node3") != 0)
		return 1;
	snprintf(why, size, "node \"%s\" does not let namespace \"%s\" map it", node, ns);
	return 0;
}

static void test_node_policy(void **state)
{
	struct gs_admission_opts o = {.scheduler_name = "gpu-scheduler",
				      .annotation = "gpu-scheduling-map",
				      .node_allows = deny_node3,
				      .node_allows_ud = (void *)"ud"};
	struct gs_admission *a = NULL;
	struct gs_admission_result res;
	struct gs_buf out;

	assert_int_equal(gs_admission_new(&o, &a), 0);
	gs_buf_init(&out, 0);
	/* Index 2 maps node3: denied with the map's line and the policy's reason, no patch. */
	char *body = pod_review("webhook-test-2", MAP_TEXT, NULL);
	assert_int_equal(review_str(a, body, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_DENIED);
	assert_string_equal(
		res.message,
		"gpu-scheduling-map line 3 for index 2: node \"node3\" does not let namespace \"ns1\" map it");
	assert_non_null(strstr(out.data, "\"allowed\":false"));
	assert_non_null(strstr(out.data, "\"code\":403"));
	assert_null(strstr(out.data, "\"patch\""));
	free(body);
	/* Index 1 maps node2: allowed and patched as without a policy. */
	gs_buf_reset(&out);
	body = pod_review("webhook-test-1", MAP_TEXT, NULL);
	assert_int_equal(review_str(a, body, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_PATCHED);
	assert_int_equal(policy_calls, 2);
	free(body);
	gs_buf_free(&out);
	gs_admission_free(a);
}

/* The node's physical GPUs: node4 has 4 by its table (index 3 fits, 7 would not), node3 only advertises. */
static int64_t gpus_of(void *ud, const char *node, char *words, size_t size)
{
	assert_string_equal((const char *)ud, "gpus");
	if (strcmp(node, "node1") == 0) {
		snprintf(words, size, "has 1 GPU by its label nvidia.com/gpu.count");
		return 1;
	}
	if (strcmp(node, "node4") == 0) {
		snprintf(words, size, "has 4 GPUs by its agent's index table");
		return 4;
	}
	return -1;
}

static void test_node_gpus(void **state)
{
	struct gs_admission_opts o = {.scheduler_name = "gpu-scheduler",
				      .annotation = "gpu-scheduling-map",
				      .node_gpus = gpus_of,
				      .node_gpus_ud = (void *)"gpus"};
	struct gs_admission *a = NULL;
	struct gs_admission_result res;
	struct gs_buf out;
	char *body;

	(void)state;
	assert_int_equal(gs_admission_new(&o, &a), 0);
	gs_buf_init(&out, 0);
	/* Index 0 maps node1's devices 0,1: it has one GPU, so no device 1: denied, 400, no patch. */
	body = pod_review("webhook-test-0", MAP_TEXT, NULL);
	assert_int_equal(review_str(a, body, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_DENIED);
	assert_string_equal(res.message, "gpu-scheduling-map line 1 for index 0: node \"node1\" has 1 GPU by its "
					 "label nvidia.com/gpu.count, so it has no device 1");
	assert_non_null(strstr(out.data, "\"code\":400"));
	assert_null(strstr(out.data, "\"patch\""));
	free(body);
	/* Index 3 maps node4's device 3 of 4; index 2 a node whose count is not known for certain: patched. */
	gs_buf_reset(&out);
	body = pod_review("webhook-test-3", MAP_TEXT, NULL);
	assert_int_equal(review_str(a, body, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_PATCHED);
	free(body);
	gs_buf_reset(&out);
	body = pod_review("webhook-test-2", MAP_TEXT, NULL);
	assert_int_equal(review_str(a, body, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_PATCHED);
	free(body);
	/* MIG instances (and GPU UUIDs) on that 1-GPU node: no index to bound, written as given. */
	gs_buf_reset(&out);
	body = pod_review("mig-0", "0=node1:MIG-0c7e1a2b-3c4d-5e6f-7a8b-9c0d1e2f3a4b,MIG-5d1a", NULL);
	assert_int_equal(review_str(a, body, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_PATCHED);
	assert_string_equal(res.devices, "MIG-0c7e1a2b-3c4d-5e6f-7a8b-9c0d1e2f3a4b,MIG-5d1a");
	char *patch = response_patch(out.data);
	assert_non_null(strstr(patch, "\"value\":\"MIG-0c7e1a2b-3c4d-5e6f-7a8b-9c0d1e2f3a4b,MIG-5d1a\""));
	free(patch);
	free(body);
	gs_buf_free(&out);
	gs_admission_free(a);
}

/* One object, its map a slice of a longer buffer (map_lookup's strings need not be NUL-terminated). */
static int lookup_calls;

static int lookup_one(void *ud, const char *ns, const char *name, struct gs_gpm_view *out)
{
	static const char text[] = "0=node1:0\n1=node2:2,3\n2=node3:0GARBAGE";
	lookup_calls++;
	assert_string_equal((const char *)ud, "gpm");
	if (strcmp(name, "enomem") == 0)
		return -ENOMEM;
	if (strcmp(ns, "ns1") != 0 || strcmp(name, "m") != 0)
		return 0;
	*out = (struct gs_gpm_view){.ns = "ns1",
				    .name = "m",
				    .uid = "u",
				    .generation = 7,
				    .map_text = text,
				    .map_len = sizeof(text) - 1 - strlen("GARBAGE")};
	return 1;
}

/* By reference, the node policy and the device plugin warning name the object, as they name the
 * annotation inline; the lookup gets the pod's namespace and the name, once per review. */
static void test_map_ref_policy(void **state)
{
	struct gs_admission_opts o = {.scheduler_name = "gpu-scheduler",
				      .annotation = "gpu-scheduling-map",
				      .node_allows = deny_node3,
				      .node_allows_ud = (void *)"ud",
				      .map_lookup = lookup_one,
				      .map_lookup_ud = (void *)"gpm"};
	static const char fmt[] =
		"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u-r\","
		"\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":\"CREATE\",\"namespace\":\"ns1\","
		"\"object\":{\"metadata\":{\"name\":\"w-%d\",\"annotations\":{\"" GS_MAP_REF_ANNOTATION "\":\"m\"}},"
		"\"spec\":{\"schedulerName\":\"gpu-scheduler\",\"containers\":[{\"name\":\"c\",\"resources\":"
		"{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}}}";
	struct gs_admission *a = NULL;
	struct gs_admission_result res;
	struct gs_buf out;
	char body[1024];

	(void)state;
	assert_int_equal(gs_admission_new(&o, &a), 0);
	gs_buf_init(&out, 0);
	policy_calls = lookup_calls = 0;
	snprintf(body, sizeof(body), fmt, 2);
	assert_int_equal(review_str(a, body, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_DENIED);
	assert_string_equal(res.message, "GPUPlacementMap ns1/m line 3 for index 2: node \"node3\" does not let "
					 "namespace \"ns1\" map it");
	assert_non_null(strstr(out.data, "\"code\":403"));
	assert_int_equal(res.generation_added, 0);
	assert_string_equal(res.devices, "0"); /* the slice ends before GARBAGE */

	gs_buf_reset(&out);
	snprintf(body, sizeof(body), fmt, 1);
	assert_int_equal(review_str(a, body, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_PATCHED);
	assert_int_equal(res.generation_added, 1);
	assert_int_equal(res.map_generation, 7);
	assert_string_equal(res.map_ref, "m");
	assert_non_null(strstr(res.message, "from GPUPlacementMap ns1/m line 2"));
	assert_non_null(strstr(res.message, "the entry names 2 devices but the containers request 1"));
	assert_int_equal(policy_calls, 2);
	assert_int_equal(lookup_calls, 2);

	/* A lookup failing otherwise than -EAGAIN is answered the same way: retry. */
	char *ref = strstr(body, "\"m\"}}");
	assert_non_null(ref);
	gs_buf_reset(&out);
	char other[1100];
	snprintf(other, sizeof(other), "%.*s\"enomem\"%s", (int)(ref - body), body, ref + 3);
	assert_int_equal(review_str(a, other, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_DENIED);
	assert_non_null(strstr(out.data, "\"code\":503"));
	assert_non_null(strstr(res.message, "GPUPlacementMap ns1/enomem): retry"));
	gs_buf_free(&out);
	gs_admission_free(a);
}

static void test_output_cap(void **state)
{
	struct gs_admission *a = new_admission();
	struct gs_buf out;
	gs_buf_init(&out, 40);
	assert_int_equal(gs_buf_append_str(&out, "keep"), 0);
	struct gs_admission_result res;
	char *body = pod_review("w-1", MAP_TEXT, "[]");
	assert_int_equal(review_str(a, body, &out, &res), -E2BIG);
	assert_int_equal(out.len, 4);
	assert_string_equal(out.data, "keep");
	free(body);
	gs_buf_free(&out);
	gs_admission_free(a);
}

static void test_options(void **state)
{
	struct gs_admission *a = (struct gs_admission *)1;
	struct gs_admission_opts o = {.scheduler_name = "gpu-scheduler", .annotation = ""};
	assert_int_equal(gs_admission_new(&o, &a), -EINVAL);
	assert_null(a);
	o.annotation = NULL;
	assert_int_equal(gs_admission_new(&o, &a), -EINVAL);
	o.annotation = "x";
	o.scheduler_name = NULL;
	assert_int_equal(gs_admission_new(&o, &a), -EINVAL);
	gs_admission_free(NULL);

	/* A configured annotation name and a shared cache. */
	struct gs_map_cache *cache = gs_map_cache_new(4, 0);
	assert_non_null(cache);
	char name[] = "example.com/gpus"; /* copied: changing it afterwards must not matter */
	o = (struct gs_admission_opts){.scheduler_name = "gpu-scheduler", .annotation = name, .cache = cache};
	assert_int_equal(gs_admission_new(&o, &a), 0);
	name[0] = 'X';
	char *body = pod_review("w-3", MAP_TEXT, NULL);
	struct gs_buf out;
	gs_buf_init(&out, 0);
	struct gs_admission_result res;
	assert_int_equal(review_str(a, body, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_SKIPPED); /* the annotation has the default name */
	free(body);
	struct gs_buf b;
	gs_buf_init(&b, 0);
	gs_buf_append_str(
		&b,
		"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
		"\"uid\":\"u\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":\"CREATE\","
		"\"object\":{\"metadata\":{\"name\":\"w-3\",\"annotations\":{\"example.com/gpus\":\"3=n:7\"}},"
		"\"spec\":{\"schedulerName\":\"gpu-scheduler\",\"containers\":[{\"name\":\"c\"}]}}}}");
	gs_buf_reset(&out);
	assert_int_equal(gs_admission_review(a, b.data, b.len, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_PATCHED);
	assert_string_equal(res.devices, "7");
	gs_buf_free(&b);
	gs_buf_free(&out);
	gs_admission_free(a);
	gs_map_cache_free(cache); /* borrowed: still ours to free, after the admission */
}

/* ---- the nvidia.com/gpu request and the device plugin warning ----------------------------------- */

/* A review of pod name with map and spec members `spec` (after schedulerName, without a comma). */
static char *spec_review(const char *name, const char *map, const char *spec)
{
	struct gs_buf b;
	gs_buf_init(&b, 0);
	gs_buf_printf(&b,
		      "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
		      "\"uid\":\"u-g\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
		      "\"operation\":\"CREATE\",\"namespace\":\"ns1\",\"object\":{\"metadata\":{\"name\":\"%s\","
		      "\"annotations\":{\"gpu-scheduling-map\":",
		      name);
	gs_buf_append_json_str(&b, map);
	gs_buf_printf(&b, "}},\"spec\":{\"schedulerName\":\"gpu-scheduler\"%s%s}}}}", *spec ? "," : "", spec);
	size_t len;
	return gs_buf_steal(&b, &len);
}

/* The response's warnings array (NULL when none) and patch (NULL when none), from a parsed answer. */
static const cJSON *response_item(const cJSON *answer, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(answer, "response"), key);
}

/*
 * Reviews pod "w-0" (entry 0=node1:0,1) with spec members `spec`; checks the outcome, the count and
 * that a warning is present exactly when the count is positive. Returns the answer's patch, or NULL.
 */
static char *gpu_case(struct gs_admission *a, const char *spec, enum gs_admission_outcome outcome, int64_t count)
{
	char *body = spec_review("w-0", MAP_TEXT, spec);
	struct gs_buf out;
	gs_buf_init(&out, 0);
	struct gs_admission_result res;
	assert_int_equal(review_str(a, body, &out, &res), 0);
	if (res.outcome != outcome || res.gpu_requested != count)
		fail_msg("spec %s: outcome %s count %lld, expected %s %lld", spec,
			 gs_admission_outcome_name(res.outcome), (long long)res.gpu_requested,
			 gs_admission_outcome_name(outcome), (long long)count);
	cJSON *j = cJSON_ParseWithLength(out.data, out.len);
	assert_non_null(j);
	const cJSON *w = response_item(j, "warnings");
	if ((w != NULL) != (count > 0))
		fail_msg("spec %s: count %lld but warnings %s", spec, (long long)count, w ? "present" : "absent");
	if (w) {
		assert_int_equal(cJSON_GetArraySize(w), 1);
		assert_string_equal(cJSON_GetArrayItem(w, 0)->valuestring, res.message);
	} else {
		assert_string_equal(res.message, "");
	}
	const cJSON *patch = response_item(j, "patch");
	char *ret = patch ? strdup(patch->valuestring) : NULL;
	cJSON_Delete(j);
	gs_buf_free(&out);
	free(body);
	return ret;
}

#define GPU_CTR(res) "\"containers\":[{\"name\":\"c\",\"resources\":" res "}]"
#define GPU_REQ(v)   GPU_CTR("{\"requests\":{\"nvidia.com/gpu\":" v "}}")

static void test_gpu_count(void **state)
{
	struct gs_admission *a = new_admission();
	static const struct {
		const char *spec;
		int64_t count;
	} cases[] = {
		/* Whole numbers, digits only. */
		{GPU_REQ("\"2\""), 2},
		{GPU_REQ("\"0\""), 0},
		{GPU_REQ("\"007\""), 7},
		{GPU_REQ("\"9223372036854775807\""), INT64_MAX},
		/* Not a count: no warning, never a denial. */
		{GPU_REQ("\"1.5\""), -1},
		{GPU_REQ("\"-1\""), -1},
		{GPU_REQ("\"+1\""), -1},
		{GPU_REQ("\" 1\""), -1},
		{GPU_REQ("\"1 \""), -1},
		{GPU_REQ("\"\""), -1},
		{GPU_REQ("\"2k\""), -1},
		{GPU_REQ("\"1e3\""), -1},
		{GPU_REQ("\"0x10\""), -1},
		{GPU_REQ("\"1000m\""), -1},
		{GPU_REQ("\"\\u0661\""), -1},   /* ARABIC-INDIC DIGIT ONE */
		{GPU_REQ("\"1\\u0000x\""), -1}, /* the NUL is not an end (core/json_nul.h): not a quantity */
		{GPU_REQ("\"9223372036854775808\""), -1},
		{GPU_REQ("\"99999999999999999999999999999999\""), -1},
		{GPU_REQ("2"), -1},
		{GPU_REQ("2.0"), -1},
		{GPU_REQ("null"), -1},
		{GPU_REQ("true"), -1},
		{GPU_REQ("[\"2\"]"), -1},
		{GPU_REQ("{\"value\":\"2\"}"), -1},
		/* Present request beats the limit; a bad request is not replaced by a good limit. */
		{GPU_CTR("{\"requests\":{\"nvidia.com/gpu\":\"1\"},\"limits\":{\"nvidia.com/gpu\":\"2\"}}"), 1},
		{GPU_CTR("{\"requests\":{\"nvidia.com/gpu\":\"x\"},\"limits\":{\"nvidia.com/gpu\":\"2\"}}"), -1},
		/* The limit stands in for a missing request. */
		{GPU_CTR("{\"limits\":{\"nvidia.com/gpu\":\"2\"}}"), 2},
		{GPU_CTR("{\"requests\":{\"cpu\":\"1\"},\"limits\":{\"nvidia.com/gpu\":\"3\"}}"), 3},
		{GPU_CTR("{\"requests\":null,\"limits\":{\"nvidia.com/gpu\":\"3\"}}"), 3},
		/* resources, requests, limits of the wrong JSON type count as absent. */
		{GPU_CTR("\"nvidia.com/gpu=2\""), 0},
		{GPU_CTR("[{\"nvidia.com/gpu\":\"2\"}]"), 0},
		{GPU_CTR("2"), 0},
		{GPU_CTR("null"), 0},
		{GPU_CTR("{\"requests\":[\"nvidia.com/gpu\",\"2\"]}"), 0},
		{GPU_CTR("{\"requests\":\"2\",\"limits\":7}"), 0},
		{GPU_CTR("{\"requests\":[],\"limits\":{\"nvidia.com/gpu\":\"2\"}}"), 2},
		{GPU_CTR("{\"requests\":{\"nvidia.com/GPU\":\"2\",\"amd.com/gpu\":\"2\"}}"), 0},
		/* Sums, the largest init container, overhead; saturating at INT64_MAX. */
		{"\"containers\":[{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\"}}},"
		 "{\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\"}}},1,null,\"c\"]",
		 3},
		{"\"containers\":[{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\"}}}],"
		 "\"initContainers\":[{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"4\"}}},"
		 "{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"2\"}}}]",
		 4},
		{"\"containers\":[{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"3\"}}}],"
		 "\"initContainers\":[{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"2\"}}}]",
		 3},
		{"\"containers\":[{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\"}}}],"
		 "\"initContainers\":[{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"-2\"}}}]",
		 -1},
		{GPU_REQ("\"1\"") ",\"overhead\":{\"nvidia.com/gpu\":\"1\"}", 2},
		{GPU_REQ("\"1\"") ",\"overhead\":{\"nvidia.com/gpu\":\"0.5\"}", -1},
		{GPU_REQ("\"1\"") ",\"overhead\":[\"nvidia.com/gpu\"]", 1},
		{GPU_REQ("\"1\"") ",\"overhead\":\"1\"", 1},
		{"\"overhead\":{\"nvidia.com/gpu\":\"2\"}", 2},
		{"\"containers\":[{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"9223372036854775807\"}}},"
		 "{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"9223372036854775807\"}}}],"
		 "\"overhead\":{\"nvidia.com/gpu\":\"9223372036854775807\"}",
		 INT64_MAX},
		/* containers and initContainers of the wrong type. */
		{"\"containers\":{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\"}}},\"initContainers\":\"x\"",
		 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* Every case has a container to patch but the two without a containers array. */
		int has_ctr = strstr(cases[i].spec, "\"containers\":[") != NULL;
		char *patch = gpu_case(a, cases[i].spec, has_ctr ? GS_ADMISSION_PATCHED : GS_ADMISSION_UNCHANGED,
				       cases[i].count);
		free(patch);
	}

	/* The warning changes nothing else: the same patch as the pod without the request. */
	char *with = gpu_case(a, GPU_REQ("\"2\""), GS_ADMISSION_PATCHED, 2);
	char *without = gpu_case(a, GPU_CTR("{}"), GS_ADMISSION_PATCHED, 0);
	assert_non_null(with);
	assert_non_null(without);
	assert_string_equal(with, without);
	free(with);
	free(without);

	/* Already mutated: unchanged, no patch, still the warning. */
	assert_null(gpu_case(
		a,
		"\"containers\":[{\"name\":\"c\",\"env\":[{\"name\":\"CUDA_VISIBLE_DEVICES\",\"value\":\"0,1\"}],"
		"\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\"}}}]",
		GS_ADMISSION_UNCHANGED, 2));
	gs_admission_free(a);
}

static void test_device_plugin_warning(void **state)
{
	struct gs_admission *a = new_admission();
	struct gs_buf out;
	gs_buf_init(&out, 0);
	struct gs_admission_result res;

	/* The text is checks.c's, so the scheduler's event says the same. */
	char *body = spec_review("w-0", MAP_TEXT, GPU_REQ("\"1\""));
	assert_int_equal(review_str(a, body, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_PATCHED);
	assert_int_equal(res.gpu_requested, 1);
	struct gs_map *map = NULL;
	struct gs_map_error err;
	assert_int_equal(gs_map_parse(MAP_TEXT, strlen(MAP_TEXT), &map, &err), 0);
	char expect[1024];
	gs_checks_device_plugin_warning(expect, sizeof(expect), 1, gs_map_lookup(map, 0), "gpu-scheduling-map");
	assert_string_equal(res.message, expect);
	assert_non_null(strstr(res.message, "gpu-scheduling-map line 1"));
	assert_non_null(strstr(res.message, "the entry names 2 devices but the containers request 1"));
	gs_map_unref(map);
	free(body);

	/* Ours without an entry: the count is known, the warning is the WARNED one only. */
	body = spec_review("w-9", MAP_TEXT, GPU_REQ("\"2\""));
	gs_buf_reset(&out);
	assert_int_equal(review_str(a, body, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_WARNED);
	assert_int_equal(res.gpu_requested, 2);
	assert_non_null(strstr(res.message, "no entry for pod index 9"));
	assert_null(strstr(out.data, "device plugin"));
	free(body);

	/* A malformed map: denied as before, no warning. */
	body = spec_review("w-0", "0=node1", GPU_REQ("\"2\""));
	gs_buf_reset(&out);
	assert_int_equal(review_str(a, body, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_DENIED);
	assert_null(strstr(out.data, "warnings"));
	free(body);

	/* 64 long UUIDs: the response carries the warning whole, the result a marked cut. */
	struct gs_buf map_text;
	gs_buf_init(&map_text, 0);
	gs_buf_append_str(&map_text, "0=node1:");
	for (int i = 0; i < GS_MAP_MAX_DEVICES; i++)
		gs_buf_printf(&map_text, "%sMIG-8f2c6a1e-0b6d-4a55-9f3e-0c1d2e3f4a%02d", i ? "," : "", i);
	body = spec_review("w-0", map_text.data, GPU_REQ("\"64\""));
	gs_buf_reset(&out);
	assert_int_equal(review_str(a, body, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_PATCHED);
	assert_int_equal(res.gpu_requested, 64);
	assert_int_equal(strlen(res.message), sizeof(res.message) - 1);
	assert_string_equal(res.message + sizeof(res.message) - 4, "...");
	cJSON *j = cJSON_ParseWithLength(out.data, out.len);
	const char *w = cJSON_GetArrayItem(response_item(j, "warnings"), 0)->valuestring;
	assert_true(strlen(w) > 2 * strlen(map_text.data + 8));
	const char *last = strstr(w, "0c1d2e3f4a63");
	assert_non_null(last);
	assert_non_null(strstr(last + 1, "0c1d2e3f4a63")); /* the devices appear twice, both whole */
	assert_null(strstr(w, "the entry names"));         /* 64 devices, 64 requested */
	cJSON_Delete(j);
	gs_buf_free(&map_text);
	free(body);

	/* A configured annotation name is the one the warning names. */
	struct gs_admission_opts o = {.scheduler_name = "gpu-scheduler", .annotation = "example.com/gpus"};
	struct gs_admission *b = NULL;
	assert_int_equal(gs_admission_new(&o, &b), 0);
	const char *req =
		"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
		"\"uid\":\"u\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":\"CREATE\","
		"\"object\":{\"metadata\":{\"name\":\"w-3\",\"annotations\":{\"example.com/gpus\":\"\\n\\n3=n:7\"}},"
		"\"spec\":{\"schedulerName\":\"gpu-scheduler\"," GPU_REQ("\"1\"") "}}}}";
	gs_buf_reset(&out);
	assert_int_equal(review_str(b, req, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_PATCHED);
	assert_non_null(strstr(res.message, "CUDA_VISIBLE_DEVICES=7 from example.com/gpus line 3"));
	assert_null(strstr(res.message, "the entry names"));
	gs_admission_free(b);

	gs_buf_free(&out);
	gs_admission_free(a);
}

/* Bodies the decoder must refuse without crashing or allocating without bound. */
/* The patch of a review as text (decoded from base64), or NULL when the answer has none. */
static char *patch_of(const struct gs_buf *out)
{
	cJSON *j = cJSON_Parse(out->data);
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "response"), "patch");
	char *text = cJSON_IsString(p) ? decode_patch(p->valuestring) : NULL;
	cJSON_Delete(j);
	return text;
}

/*
 * Issue 22: env names are exact strings. cJSON ends a string at "\u0000", so the webhook took
 * "CUDA_VISIBLE_DEVICES\u0000x" (or a member "name\u0000x") for the variable: with the right value
 * it answered "unchanged" and the container got no CUDA_VISIBLE_DEVICES; with another, it rewrote
 * the impostor. Now neither matches: the real variable is added. Index 1 maps to node2:2.
 */
static void test_env_names_exact(void **state)
{
	static const char *const not_it[] = {
		"[{\"name\":\"CUDA_VISIBLE_DEVICES\\u0000x\",\"value\":\"2\"}]",
		"[{\"name\":\"CUDA_VISIBLE_DEVICES\\u0000x\",\"value\":\"0,1\"}]",
		"[{\"name\\u0000x\":\"CUDA_VISIBLE_DEVICES\",\"value\":\"2\"}]",
		"[{\"name\":\"CUDA_VISIBLE_DEVICES\\u001f\",\"value\":\"2\"}]",
		"[{\"name\":\"\\u0000CUDA_VISIBLE_DEVICES\",\"value\":\"2\"}]",
	};
	struct gs_admission *a = new_admission();
	struct gs_admission_result res;
	struct gs_buf out;
	(void)state;

	gs_buf_init(&out, 0);
	for (size_t i = 0; i < sizeof(not_it) / sizeof(not_it[0]); i++) {
		char *body = pod_review("w-1", MAP_TEXT, not_it[i]);
		gs_buf_reset(&out);
		assert_int_equal(review_str(a, body, &out, &res), 0);
		if (res.outcome != GS_ADMISSION_PATCHED)
			fail_msg("env %s: outcome %s, want patched", not_it[i], gs_admission_outcome_name(res.outcome));
		char *patch = patch_of(&out);
		assert_non_null(patch);
		if (!strstr(patch, "{\"op\":\"add\",\"path\":\"/spec/containers/0/env/-\","
				   "\"value\":{\"name\":\"CUDA_VISIBLE_DEVICES\",\"value\":\"2\"}}"))
			fail_msg("env %s: patch %s does not add the variable", not_it[i], patch);
		assert_null(strstr(patch, "replace"));
		free(patch);
		free(body);
	}
	/* A value with a NUL is not the right value either: replaced. The exact name and value: unchanged. */
	char *body = pod_review("w-1", MAP_TEXT, "[{\"name\":\"CUDA_VISIBLE_DEVICES\",\"value\":\"2\\u0000x\"}]");
	gs_buf_reset(&out);
	assert_int_equal(review_str(a, body, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_PATCHED);
	char *patch = patch_of(&out);
	assert_non_null(
		strstr(patch, "\"op\":\"replace\",\"path\":\"/spec/containers/0/env/0/value\",\"value\":\"2\""));
	free(patch);
	free(body);
	body = pod_review("w-1", MAP_TEXT, "[{\"name\":\"CUDA_VISIBLE_DEVICES\",\"value\":\"2\"}]");
	gs_buf_reset(&out);
	assert_int_equal(review_str(a, body, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_UNCHANGED);
	free(body);
	gs_buf_free(&out);
	gs_admission_free(a);
}

static void test_hostile_bodies(void **state)
{
	struct gs_admission *a = new_admission();
	struct gs_buf out;
	gs_buf_init(&out, 0);
	struct gs_admission_result res;
	size_t big = 7u * 1024 * 1024;
	char *body = malloc(big);
	assert_non_null(body);

	/* 7 MiB of '[': more values than the pre-scan allows. */
	memset(body, '[', big);
	assert_int_equal(gs_admission_review(a, body, big, &out, &res), -EINVAL);
	assert_int_equal(res.outcome, GS_ADMISSION_BAD_REQUEST);
	assert_string_equal(res.message, "too many JSON values");

	/* 7 MiB of {"0123456789":{"0123456789":... (under the value cap): cJSON stops at its nesting limit. */
	for (size_t i = 0; i + 15 <= big; i += 15)
		memcpy(body + i, "{\"0123456789\":", 15);
	assert_int_equal(gs_admission_review(a, body, big, &out, &res), -EINVAL);
	assert_non_null(strstr(res.message, "nested deeper than 1000"));

	/* Just over the limit, small. */
	memset(body, '[', 1001);
	memset(body + 1001, ']', 1001);
	assert_int_equal(gs_admission_review(a, body, 2002, &out, &res), -EINVAL);
	assert_non_null(strstr(res.message, "nested deeper than 1000"));

	/* Nesting just under the limit parses, and is still no AdmissionReview. */
	size_t depth = 999;
	memset(body, '[', depth);
	memset(body + depth, ']', depth);
	assert_int_equal(gs_admission_review(a, body, 2 * depth, &out, &res), -EINVAL);
	assert_string_equal(res.message, "not a JSON object");

	/* Millions of tiny values: refused before cJSON builds them. */
	body[0] = '[';
	size_t n = 1;
	while (n + 4 < big) {
		body[n++] = '1';
		body[n++] = ',';
	}
	body[n++] = '1';
	body[n++] = ']';
	assert_int_equal(gs_admission_review(a, body, n, &out, &res), -EINVAL);
	assert_string_equal(res.message, "too many JSON values");

	/* Commas inside strings are not values. */
	struct gs_buf s;
	gs_buf_init(&s, 0);
	gs_buf_append_str(
		&s,
		"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"x\":\"");
	for (int i = 0; i < 1100000; i++)
		gs_buf_append_str(&s, ",\\\"");
	gs_buf_append_str(&s, "\"}}");
	assert_int_equal(gs_admission_review(a, s.data, s.len, &out, &res), 0);
	assert_int_equal(res.outcome, GS_ADMISSION_SKIPPED);
	gs_buf_free(&s);
	gs_buf_reset(&out);

	/* NUL bytes and a lone surrogate inside the body. */
	static const char nul[] = "{\"apiVersion\":\"admission.k8s.io/v1\"\0, \"kind\":1}";
	assert_int_equal(gs_admission_review(a, nul, sizeof(nul) - 1, &out, &res), -EINVAL);
	assert_int_equal(review_str(a, "\"\\ud800\"", &out, &res), -EINVAL);
	assert_int_equal(gs_admission_review(a, NULL, 0, &out, &res), -EINVAL);
	assert_int_equal(out.len, 0);

	free(body);
	gs_buf_free(&out);
	gs_admission_free(a);
}

/* Which tolerations already tolerate gpu-scheduler.io/dedicated=true:NoSchedule (no second one added). */
static void test_tolerates_dedicated(void **state)
{
	static const struct {
		const char *json;
		int want;
	} cases[] = {
		{"null", 0},
		{"{}", 0},
		{"[]", 0},
		{"[1, \"x\", null, []]", 0},
		{"[{\"key\":\"gpu-scheduler.io/dedicated\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]", 1},
		{"[{\"key\":\"gpu-scheduler.io/dedicated\",\"operator\":\"Exists\"}]", 1},
		{"[{\"key\":\"gpu-scheduler.io/dedicated\",\"operator\":\"Exists\",\"effect\":\"\"}]", 1},
		{"[{\"key\":\"gpu-scheduler.io/dedicated\",\"operator\":\"Equal\",\"value\":\"true\"}]", 1},
		{"[{\"key\":\"gpu-scheduler.io/dedicated\",\"value\":\"true\",\"effect\":\"NoSchedule\"}]", 1},
		{"[{\"operator\":\"Exists\"}]", 1},
		{"[{\"key\":\"\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]", 1},
		{"[{\"operator\":\"Exists\",\"effect\":\"NoExecute\"}]", 0},
		{"[{\"key\":\"gpu-scheduler.io/dedicated\",\"operator\":\"Equal\",\"value\":\"false\"}]", 0},
		{"[{\"key\":\"gpu-scheduler.io/dedicated\",\"operator\":\"Equal\"}]", 0},
		{"[{\"key\":\"gpu-scheduler.io/dedicated\",\"value\":\"True\"}]", 0},
		{"[{\"key\":\"gpu-scheduler.io/dedicated\",\"operator\":\"Exists\",\"effect\":\"NoExecute\"}]", 0},
		{"[{\"key\":\"gpu-scheduler.io/dedicated\",\"operator\":\"Exists\",\"effect\":\"PreferNoSchedule\"}]",
		 0},
		{"[{\"key\":\"gpu-scheduler.io/Dedicated\",\"operator\":\"Exists\"}]", 0},
		{"[{\"key\":\"gpu-scheduler.io/dedicated\",\"operator\":\"exists\"}]", 0},
		{"[{\"key\":\"gpu-scheduler.io/dedicated\",\"operator\":7}]", 0},
		{"[{\"key\":\"other\",\"operator\":\"Exists\"},"
		 "{\"key\":\"gpu-scheduler.io/dedicated\",\"operator\":\"Exists\"}]",
		 1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *t = cJSON_Parse(cases[i].json);
		assert_non_null(t);
		if (gs_admission_tolerates_dedicated(t) != cases[i].want)
			fail_msg("%s: want %d", cases[i].json, cases[i].want);
		cJSON_Delete(t);
	}
	assert_int_equal(gs_admission_tolerates_dedicated(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jsonptr_escaping),    cmocka_unit_test(test_base64),
		cmocka_unit_test(test_jsonpatch_document),  cmocka_unit_test(test_result_fields),
		cmocka_unit_test(test_output_cap),          cmocka_unit_test(test_options),
		cmocka_unit_test(test_hostile_bodies),      cmocka_unit_test(test_env_names_exact),
		cmocka_unit_test(test_gpu_count),           cmocka_unit_test(test_device_plugin_warning),
		cmocka_unit_test(test_tolerates_dedicated), cmocka_unit_test(test_golden),
		cmocka_unit_test(test_node_policy),         cmocka_unit_test(test_node_gpus),
		cmocka_unit_test(test_map_ref_policy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
