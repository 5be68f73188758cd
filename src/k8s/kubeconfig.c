/*
 * kubeconfig.c: see kubeconfig.h and docs/k8s-decode.md.
 *
 * The YAML is loaded into a libyaml document tree (yaml_parser_load) and walked along the few fixed
 * paths we need; nothing recurses over the tree, so an alias cycle ("&a [*a]") cannot loop, and an
 * alias bomb is never expanded. Values are checked for type on the way: a mapping where a string is
 * expected is an error naming the key, never a crash or a silent default.
 */
#include "k8s/kubeconfig.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mbedtls/base64.h>
#include <mbedtls/platform_util.h>
#include <yaml.h>

#include "core/alloc.h"

/* One parse: the document, where errors go, and how relative paths resolve. */
struct kc {
	yaml_document_t doc;
	const char *label;    /* "kubeconfig /path" or "kubeconfig" or "in-cluster config" */
	const char *base_dir; /* NULL: relative to the current directory */
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 3, 4))) static int kc_fail(struct kc *kc, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (kc->err && kc->errlen)
		snprintf(kc->err, kc->errlen, "%s: %s", kc->label, msg);
	return code;
}

/* ---- files --------------------------------------------------------------------------------------- */

/* Joins base_dir and a relative path; absolute paths are copied as they are. */
static char *resolve_path(const char *base_dir, const char *path)
{
	if (path[0] == '/' || !base_dir || !base_dir[0])
		return gs_xstrdup(path);
	size_t a = strlen(base_dir), b = strlen(path);
	char *p = gs_xmalloc(a + 1 + b + 1);
	memcpy(p, base_dir, a);
	p[a] = '/';
	memcpy(p + a + 1, path, b + 1);
	return p;
}

/*
 * Reads a whole file, at most GS_KUBECONFIG_FILE_MAX bytes, into a NUL-terminated malloc'ed buffer.
 * Reads up to one byte past the cap instead of trusting st_size (which /proc or a FIFO would get
 * wrong). Returns 0 or -errno (-E2BIG over the cap); err names `what` and the path.
 */
static int read_file(struct kc *kc, const char *what, const char *path, char **out, size_t *out_len)
{
	int fd = -1, r = 0;
	size_t len = 0, size = 0;
	char *data = NULL;

	*out = NULL;
	*out_len = 0;
	do
		fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		r = -errno;
		kc_fail(kc, r, "%s %s: %s", what, path, strerror(-r));
		goto out;
	}
	for (;;) {
		if (len == size) {
			size_t want = size ? size * 2 : 4096;
			if (want > GS_KUBECONFIG_FILE_MAX + 1)
				want = GS_KUBECONFIG_FILE_MAX + 1;
			if (want == size) {
				r = kc_fail(kc, -E2BIG, "%s %s: larger than %zu bytes", what, path,
					    GS_KUBECONFIG_FILE_MAX);
				goto out;
			}
			data = gs_xrealloc(data, want + 1);
			size = want;
		}
		ssize_t n = read(fd, data + len, size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			kc_fail(kc, r, "%s %s: %s", what, path, strerror(-r));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (!data) /* an empty file */
		data = gs_xmalloc(1);
	data[len] = '\0';
	*out = data;
	*out_len = len;
	data = NULL;
out:
	if (fd >= 0)
		close(fd);
	free(data);
	return r;
}

static int read_file_rel(struct kc *kc, const char *what, const char *path, char **out, size_t *out_len)
{
	char *full = resolve_path(kc->base_dir, path);
	int r = read_file(kc, what, full, out, out_len);
	free(full);
	return r;
}

/* Trims blanks at both ends of a NUL-terminated buffer of length len, in place. Returns the new length. */
static size_t trim(char *s, size_t len)
{
	size_t a = 0;
	while (a < len && isspace((unsigned char)s[a]))
		a++;
	while (len > a && isspace((unsigned char)s[len - 1]))
		len--;
	memmove(s, s + a, len - a);
	s[len - a] = '\0';
	return len - a;
}

/* A token file as client-go reads it: trimmed, non-empty, one line of printable bytes. */
static int read_token(struct kc *kc, const char *what, const char *path, char **out)
{
	char *data;
	size_t len;
	int r = read_file(kc, what, path, &data, &len);
	if (r < 0)
		return r;
	len = trim(data, len);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)data[i];
		if (c < 0x21 || c == 0x7f) {
			/* A blank or control byte would corrupt the Authorization header. */
			mbedtls_platform_zeroize(data, len);
			free(data);
			return kc_fail(kc, -EINVAL, "%s %s: contains a blank or control character", what, path);
		}
	}
	if (len == 0) {
		free(data);
		return kc_fail(kc, -EINVAL, "%s %s: empty", what, path);
	}
	*out = data;
	return 0;
}

/* ---- YAML access --------------------------------------------------------------------------------- */

static int scalar_is(const yaml_node_t *n, const char *s)
{
	size_t l = strlen(s);
	return n && n->type == YAML_SCALAR_NODE && n->data.scalar.length == l &&
	       memcmp(n->data.scalar.value, s, l) == 0;
}

/* A plain (unquoted) null, ~ or empty scalar: YAML's "no value". */
static int is_null(const yaml_node_t *n)
{
	if (!n || n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	return n->data.scalar.length == 0 || scalar_is(n, "~") || scalar_is(n, "null") || scalar_is(n, "Null") ||
	       scalar_is(n, "NULL");
}

/*
 * map[key]: NULL when the key is absent or its value is null. A key that appears twice is an error
 * (client-go refuses it too), reported through *r; `where` names the mapping in messages.
 */
static yaml_node_t *map_get(struct kc *kc, yaml_node_t *map, const char *key, const char *where, int *r)
{
	yaml_node_t *found = NULL;

	*r = 0;
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&kc->doc, p->key);
		if (!scalar_is(k, key))
			continue;
		if (found) {
			*r = kc_fail(kc, -EINVAL, "%s: key \"%s\" appears twice", where, key);
			return NULL;
		}
		found = yaml_document_get_node(&kc->doc, p->value);
		if (!found) /* libyaml always fills values; be safe anyway */
			found = k;
	}
	return is_null(found) ? NULL : found;
}

/* Copies a scalar out as a string; an empty string counts as absent (as in Go). */
static int get_str(struct kc *kc, yaml_node_t *map, const char *key, const char *where, char **out)
{
	int r;
	yaml_node_t *v = map_get(kc, map, key, where, &r);

	*out = NULL;
	if (r < 0 || !v)
		return r;
	if (v->type != YAML_SCALAR_NODE)
		return kc_fail(kc, -EINVAL, "%s: %s must be a string", where, key);
	size_t len = v->data.scalar.length;
	if (len == 0)
		return 0;
	if (memchr(v->data.scalar.value, '\0', len))
		return kc_fail(kc, -EINVAL, "%s: %s contains a NUL byte", where, key);
	*out = gs_xstrndup((const char *)v->data.scalar.value, len);
	return 0;
}

static int get_bool(struct kc *kc, yaml_node_t *map, const char *key, const char *where, int *out)
{
	int r;
	yaml_node_t *v = map_get(kc, map, key, where, &r);

	*out = 0;
	if (r < 0 || !v)
		return r;
	if (scalar_is(v, "true") || scalar_is(v, "True") || scalar_is(v, "TRUE"))
		*out = 1;
	else if (!(scalar_is(v, "false") || scalar_is(v, "False") || scalar_is(v, "FALSE")))
		return kc_fail(kc, -EINVAL, "%s: %s must be true or false", where, key);
	return 0;
}

/* Whether the key is present with a non-null value (for "not supported" checks). */
static int has_key(struct kc *kc, yaml_node_t *map, const char *key, const char *where, int *r)
{
	return map_get(kc, map, key, where, r) != NULL;
}

/*
 * Finds root[list][i] with name == name and returns its `sub` mapping (clusters[].cluster,
 * contexts[].context, users[].user) in *out. Not found is -ENOENT with "<what> \"name\" not found".
 * An entry without its sub-mapping yields *out NULL (an empty entry).
 */
static int find_named(struct kc *kc, yaml_node_t *root, const char *list, const char *sub, const char *what,
		      const char *name, yaml_node_t **out)
{
	int r, found = 0;
	yaml_node_t *seq = map_get(kc, root, list, "top level", &r);

	*out = NULL;
	if (r < 0)
		return r;
	if (seq && seq->type != YAML_SEQUENCE_NODE)
		return kc_fail(kc, -EINVAL, "%s must be a list", list);
	if (!seq)
		return kc_fail(kc, -ENOENT, "%s \"%s\" not found (no %s)", what, name, list);
	for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
		yaml_node_t *e = yaml_document_get_node(&kc->doc, *it);
		if (!e || e->type != YAML_MAPPING_NODE)
			return kc_fail(kc, -EINVAL, "%s: every entry must be a mapping", list);
		yaml_node_t *n = map_get(kc, e, "name", list, &r);
		if (r < 0)
			return r;
		if (!scalar_is(n, name))
			continue;
		if (found++)
			return kc_fail(kc, -EINVAL, "%s \"%s\" is defined twice", what, name);
		yaml_node_t *v = map_get(kc, e, sub, list, &r);
		if (r < 0)
			return r;
		if (v && v->type != YAML_MAPPING_NODE)
			return kc_fail(kc, -EINVAL, "%s \"%s\": %s must be a mapping", what, name, sub);
		*out = v;
	}
	return found ? 0 : kc_fail(kc, -ENOENT, "%s \"%s\" not found", what, name);
}

/* ---- values -------------------------------------------------------------------------------------- */

/* Decodes base64 (blanks and line breaks ignored) into a NUL-terminated malloc'ed buffer. */
static int decode_b64(struct kc *kc, const char *where, const char *key, const char *in, char **out, size_t *out_len)
{
	size_t n = strlen(in), k = 0, olen = 0;
	unsigned char *clean = gs_xmalloc(n + 1), *dst = NULL;
	int r = 0;

	for (size_t i = 0; i < n; i++)
		if (!isspace((unsigned char)in[i]))
			clean[k++] = (unsigned char)in[i];
	dst = gs_xmalloc(k / 4 * 3 + 4);
	if (k == 0 || mbedtls_base64_decode(dst, k / 4 * 3 + 3, &olen, clean, k) != 0) {
		r = kc_fail(kc, -EINVAL, "%s: %s is not valid base64", where, key);
		goto out;
	}
	dst[olen] = '\0';
	*out = (char *)dst;
	*out_len = olen;
	dst = NULL;
out:
	mbedtls_platform_zeroize(clean, k); /* may be a private key */
	free(clean);
	free(dst);
	return r;
}

/*
 * Loads a blob given either inline (<key>-data, base64) or as a file (<key>), never both. Absent
 * leaves *out NULL.
 */
static int get_blob(struct kc *kc, yaml_node_t *map, const char *key, const char *where, char **out, size_t *out_len)
{
	char data_key[64], *file = NULL, *data = NULL;
	int r;

	*out = NULL;
	*out_len = 0;
	snprintf(data_key, sizeof(data_key), "%s-data", key);
	if ((r = get_str(kc, map, key, where, &file)) < 0 || (r = get_str(kc, map, data_key, where, &data)) < 0)
		goto out;
	if (file && data) {
		r = kc_fail(kc, -EINVAL, "%s: both %s and %s are set", where, key, data_key);
		goto out;
	}
	if (data) {
		r = decode_b64(kc, where, data_key, data, out, out_len);
	} else if (file) {
		char what[256];
		snprintf(what, sizeof(what), "%s: %s", where, key);
		r = read_file_rel(kc, what, file, out, out_len);
	}
out:
	free(file);
	if (data)
		mbedtls_platform_zeroize(data, strlen(data));
	free(data);
	return r;
}

static int valid_hostname(const char *h, size_t n)
{
	if (n == 0 || n > 253)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)h[i]) || h[i] == '.' || h[i] == '-' || h[i] == '_'))
			return 0;
	return 1;
}

/*
 * Splits an https:// URL into host (unbracketed) and port. Refuses http:// (the token would travel in
 * clear), user info, and any path, query or fragment (the client has no path prefix).
 */
static int parse_server(struct kc *kc, const char *where, const char *url, char **host, int *port)
{
	const char *p, *end, *h, *hend;

	*host = NULL;
	*port = 443;
	if (strncasecmp(url, "http://", 7) == 0)
		return kc_fail(kc, -EINVAL, "%s: server \"%s\" uses http://; only https:// is supported", where, url);
	if (strncasecmp(url, "https://", 8) != 0)
		return kc_fail(kc, -EINVAL, "%s: server \"%s\" is not an https:// URL", where, url);
	p = url + 8;
	end = p + strcspn(p, "/?#");
	if (*end && strcmp(end, "/") != 0)
		return kc_fail(kc, -EINVAL, "%s: server \"%s\" has a path, query or fragment; not supported", where,
			       url);
	if (memchr(p, '@', (size_t)(end - p)))
		return kc_fail(kc, -EINVAL, "%s: server \"%s\" has user info; not supported", where, url);
	if (*p == '[') {
		h = p + 1;
		hend = memchr(h, ']', (size_t)(end - h));
		if (!hend)
			return kc_fail(kc, -EINVAL, "%s: server \"%s\": missing ']'", where, url);
		p = hend + 1;
		char tmp[INET6_ADDRSTRLEN + 1];
		struct in6_addr a6;
		size_t n = (size_t)(hend - h);
		if (n < sizeof(tmp)) {
			memcpy(tmp, h, n);
			tmp[n] = '\0';
		}
		if (n >= sizeof(tmp) || inet_pton(AF_INET6, tmp, &a6) != 1)
			return kc_fail(kc, -EINVAL, "%s: server \"%s\": invalid IPv6 address", where, url);
	} else {
		h = p;
		hend = p + strcspn(p, ":/?#");
		if (hend > end)
			hend = end;
		if (!valid_hostname(h, (size_t)(hend - h)) ||
		    (hend < end && memchr(hend + 1, ':', (size_t)(end - hend - 1))))
			return kc_fail(kc, -EINVAL,
				       "%s: server \"%s\": invalid host (an IPv6 address needs [brackets])", where,
				       url);
		p = hend;
	}
	if (p < end) {
		if (*p != ':' || p + 1 == end || end - (p + 1) > 5)
			return kc_fail(kc, -EINVAL, "%s: server \"%s\": invalid port", where, url);
		long v = 0;
		for (const char *q = p + 1; q < end; q++) {
			if (!isdigit((unsigned char)*q))
				return kc_fail(kc, -EINVAL, "%s: server \"%s\": invalid port", where, url);
			v = v * 10 + (*q - '0');
		}
		if (v < 1 || v > 65535)
			return kc_fail(kc, -EINVAL, "%s: server \"%s\": port out of range", where, url);
		*port = (int)v;
	}
	*host = gs_xstrndup(h, (size_t)(hend - h));
	return 0;
}

/* ---- the three sections -------------------------------------------------------------------------- */

static int load_cluster(struct kc *kc, yaml_node_t *c, struct gs_kubeconfig *out)
{
	char where[320];
	int r, has_ca;

	snprintf(where, sizeof(where), "cluster \"%s\"", out->cluster_name);
	if (has_key(kc, c, "proxy-url", where, &r))
		return kc_fail(kc, -ENOTSUP, "%s: proxy-url is not supported", where);
	if (r < 0)
		return r;
	if ((r = get_str(kc, c, "server", where, &out->server)) < 0)
		return r;
	if (!out->server)
		return kc_fail(kc, -EINVAL, "%s: no server", where);
	if ((r = parse_server(kc, where, out->server, &out->host, &out->port)) < 0 ||
	    (r = get_str(kc, c, "tls-server-name", where, &out->tls_server_name)) < 0 ||
	    (r = get_bool(kc, c, "insecure-skip-tls-verify", where, &out->insecure_skip_verify)) < 0 ||
	    (r = get_blob(kc, c, "certificate-authority", where, &out->ca, &out->ca_len)) < 0)
		return r;
	has_ca = out->ca != NULL;
	if (has_ca && out->insecure_skip_verify)
		return kc_fail(kc, -EINVAL, "%s: certificate-authority and insecure-skip-tls-verify are both set",
			       where);
	if (!has_ca && !out->insecure_skip_verify)
		return kc_fail(kc, -EINVAL,
			       "%s: no certificate-authority(-data); the system trust store is not used (set one, or "
			       "insecure-skip-tls-verify)",
			       where);
	return 0;
}

static int load_user(struct kc *kc, yaml_node_t *u, struct gs_kubeconfig *out)
{
	static const char *const impersonation[] = {"as", "as-uid", "as-groups", "as-user-extra"};
	char where[320], *token = NULL, *name = NULL;
	int r;
	yaml_node_t *v;

	snprintf(where, sizeof(where), "user \"%s\"", out->user_name);
	if ((v = map_get(kc, u, "exec", where, &r)) != NULL) {
		/* Best effort to name the plugin; a malformed exec block is refused all the same. */
		if (get_str(kc, v, "command", where, &name) < 0)
			name = NULL;
		r = kc_fail(kc, -ENOTSUP, "%s: exec credential plugins are not supported (command \"%s\")", where,
			    name ? name : "?");
		goto out;
	}
	if (r < 0)
		goto out;
	if ((v = map_get(kc, u, "auth-provider", where, &r)) != NULL) {
		if (get_str(kc, v, "name", where, &name) < 0)
			name = NULL;
		r = kc_fail(kc, -ENOTSUP, "%s: auth-provider \"%s\" is not supported", where, name ? name : "?");
		goto out;
	}
	if (r < 0)
		goto out;
	for (size_t i = 0; i < 2; i++) {
		if (has_key(kc, u, i ? "password" : "username", where, &r)) {
			r = kc_fail(kc, -ENOTSUP, "%s: username/password authentication is not supported", where);
			goto out;
		}
		if (r < 0)
			goto out;
	}
	for (size_t i = 0; i < sizeof(impersonation) / sizeof(impersonation[0]); i++) {
		if (has_key(kc, u, impersonation[i], where, &r)) {
			r = kc_fail(kc, -ENOTSUP, "%s: impersonation (%s) is not supported", where, impersonation[i]);
			goto out;
		}
		if (r < 0)
			goto out;
	}
	if ((r = get_str(kc, u, "token", where, &token)) < 0 || (r = get_str(kc, u, "tokenFile", where, &name)) < 0)
		goto out;
	if (name) {
		/* client-go: the file wins over an inline token, and is re-read as it rotates. */
		char what[340];
		snprintf(what, sizeof(what), "%s: tokenFile", where);
		out->token_file = resolve_path(kc->base_dir, name);
		if ((r = read_token(kc, what, out->token_file, &out->token)) < 0)
			goto out;
	} else if (token) {
		out->token = token;
		token = NULL;
	}
	if ((r = get_blob(kc, u, "client-certificate", where, &out->cert, &out->cert_len)) < 0 ||
	    (r = get_blob(kc, u, "client-key", where, &out->key, &out->key_len)) < 0)
		goto out;
	if (out->cert && !out->key)
		r = kc_fail(kc, -EINVAL, "%s: client-certificate set without client-key", where);
	else if (out->key && !out->cert)
		r = kc_fail(kc, -EINVAL, "%s: client-key set without client-certificate", where);
out:
	if (token)
		mbedtls_platform_zeroize(token, strlen(token));
	free(token);
	free(name);
	return r;
}

static int load_doc(struct kc *kc, const char *context, struct gs_kubeconfig *out)
{
	yaml_node_t *root = yaml_document_get_root_node(&kc->doc), *ctx, *c, *u;
	char where[320];
	int r;

	if (!root)
		return kc_fail(kc, -EINVAL, "empty document");
	if (root->type != YAML_MAPPING_NODE)
		return kc_fail(kc, -EINVAL, "top level must be a mapping");
	if (context) {
		out->context = gs_xstrdup(context);
	} else {
		if ((r = get_str(kc, root, "current-context", "top level", &out->context)) < 0)
			return r;
		if (!out->context)
			return kc_fail(kc, -EINVAL, "current-context is not set");
	}
	if ((r = find_named(kc, root, "contexts", "context", "context", out->context, &ctx)) < 0)
		return r;
	snprintf(where, sizeof(where), "context \"%s\"", out->context);
	if ((r = get_str(kc, ctx, "cluster", where, &out->cluster_name)) < 0 ||
	    (r = get_str(kc, ctx, "user", where, &out->user_name)) < 0 ||
	    (r = get_str(kc, ctx, "namespace", where, &out->namespace)) < 0)
		return r;
	if (!out->cluster_name)
		return kc_fail(kc, -EINVAL, "%s: no cluster", where);
	if ((r = find_named(kc, root, "clusters", "cluster", "cluster", out->cluster_name, &c)) < 0 ||
	    (r = load_cluster(kc, c, out)) < 0)
		return r;
	/* A context without a user is anonymous: legal, if rarely useful. */
	if (out->user_name) {
		if ((r = find_named(kc, root, "users", "user", "user", out->user_name, &u)) < 0 ||
		    (r = load_user(kc, u, out)) < 0)
			return r;
	}
	return 0;
}

static int parse(const char *label, const char *yaml, size_t len, const char *base_dir, const char *context,
		 struct gs_kubeconfig *out, char *err, size_t errlen)
{
	struct kc kc = {.label = label, .base_dir = base_dir, .err = err, .errlen = errlen};
	yaml_parser_t parser;
	int r;

	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	if (!yaml_parser_initialize(&parser))
		return kc_fail(&kc, -ENOMEM, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
	if (!yaml_parser_load(&parser, &kc.doc)) {
		r = kc_fail(&kc, parser.error == YAML_MEMORY_ERROR ? -ENOMEM : -EINVAL, "line %zu: %s",
			    parser.problem_mark.line + 1, parser.problem ? parser.problem : "invalid YAML");
		yaml_parser_delete(&parser);
		return r;
	}
	r = load_doc(&kc, context, out);
	yaml_document_delete(&kc.doc);
	yaml_parser_delete(&parser);
	if (r < 0)
		gs_kubeconfig_free(out);
	return r;
}

/* ---- API ----------------------------------------------------------------------------------------- */

int gs_kubeconfig_parse(const char *yaml, size_t len, const char *base_dir, const char *context,
			struct gs_kubeconfig *out, char *err, size_t errlen)
{
	return parse("kubeconfig", yaml, len, base_dir, context, out, err, errlen);
}

int gs_kubeconfig_load_context(const char *path, const char *context, struct gs_kubeconfig *out, char *err,
			       size_t errlen)
{
	char label[PATH_MAX + 16], *data = NULL, *dir = NULL, *slash;
	size_t len;
	int r;

	memset(out, 0, sizeof(*out));
	snprintf(label, sizeof(label), "kubeconfig %s", path);
	struct kc kc = {.label = label, .err = err, .errlen = errlen};
	if ((r = read_file(&kc, "open", path, &data, &len)) < 0)
		goto out;
	dir = gs_xstrdup(path);
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = '\0'; /* "/config" lives in "/" */
	else
		*slash = '\0';
	r = parse(label, data, len, dir, context, out, err, errlen);
out:
	if (data)
		mbedtls_platform_zeroize(data, len); /* it may hold keys and tokens */
	free(data);
	free(dir);
	return r;
}

int gs_kubeconfig_load(const char *path, struct gs_kubeconfig *out, char *err, size_t errlen)
{
	return gs_kubeconfig_load_context(path, NULL, out, err, errlen);
}

int gs_kubeconfig_read_token(const char *path, char **out, char *err, size_t errlen)
{
	struct kc kc = {.label = "token", .err = err, .errlen = errlen};
	*out = NULL;
	return read_token(&kc, "file", path, out);
}

int gs_kubeconfig_in_cluster(const char *sa_dir, struct gs_kubeconfig *out, char *err, size_t errlen)
{
	struct kc kc = {.label = "in-cluster config", .err = err, .errlen = errlen};
	const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
	char *ns = NULL;
	size_t ns_len;
	int r;

	memset(out, 0, sizeof(*out));
	if (!sa_dir)
		sa_dir = GS_KUBECONFIG_SA_DIR;
	kc.base_dir = sa_dir;
	if (!host || !*host || !port || !*port)
		return kc_fail(&kc, -ENOENT,
			       "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set "
			       "(not running in a pod?)");
	int v6 = strchr(host, ':') != NULL;
	if (asprintf(&out->server, "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port) < 0)
		gs_oom(0);
	if ((r = parse_server(&kc, "KUBERNETES_SERVICE_HOST/PORT", out->server, &out->host, &out->port)) < 0 ||
	    (r = read_file_rel(&kc, "CA", "ca.crt", &out->ca, &out->ca_len)) < 0)
		goto out;
	out->token_file = resolve_path(sa_dir, "token");
	if ((r = read_token(&kc, "token", out->token_file, &out->token)) < 0)
		goto out;
	r = read_file_rel(&kc, "namespace", "namespace", &ns, &ns_len);
	if (r == -ENOENT) {
		r = 0; /* not mounted: the caller picks its default */
	} else if (r < 0) {
		goto out;
	} else if (trim(ns, ns_len) > 0) {
		out->namespace = ns;
		ns = NULL;
	}
out:
	free(ns);
	if (r < 0)
		gs_kubeconfig_free(out);
	return r;
}

void gs_kubeconfig_free(struct gs_kubeconfig *k)
{
	if (k->key)
		mbedtls_platform_zeroize(k->key, k->key_len);
	if (k->token)
		mbedtls_platform_zeroize(k->token, strlen(k->token));
	free(k->server);
	free(k->host);
	free(k->tls_server_name);
	free(k->ca);
	free(k->cert);
	free(k->key);
	free(k->token);
	free(k->token_file);
	free(k->context);
	free(k->cluster_name);
	free(k->user_name);
	free(k->namespace);
	memset(k, 0, sizeof(*k));
}
