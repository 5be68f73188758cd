/*
 * fuzz_kubeconfig.c: libFuzzer driver for src/k8s/kubeconfig.h: the kubeconfig parser, the same from a
 * file, the token file reader and the in-cluster configuration.
 *
 * The first byte picks where the input goes:
 *   0..127   the whole input is a kubeconfig, parsed from memory (gs_kubeconfig_parse) with its
 *            current-context; relative paths resolve against tests/fixtures/kubeconfig, so the seeds
 *            (the fixture files themselves: they start with a letter or '#') find their CA, client
 *            certificate and token files.
 *   128..255 by (byte & 3):
 *            0  the first line of the rest names the context (like kubectl --context), the remainder
 *               is the kubeconfig, parsed from memory;
 *            1  the rest is written to a file in this run's temporary directory and loaded
 *               with gs_kubeconfig_load (reading, the label with the path, relative paths
 *               against the file's directory);
 *            2  the rest is written to a token file and read with gs_kubeconfig_read_token;
 *            3  in-cluster: the first line of the rest is KUBERNETES_SERVICE_HOST, the second
 *               KUBERNETES_SERVICE_PORT, the remainder the service account's token file (next to a
 *               fixed ca.crt; a namespace file when bit 0x04 is set).
 * Every call must either fail with a reason that starts with its label and leave the struct zeroed,
 * or succeed with what kubeconfig.h promises (a server and an unbracketed host with a port in
 * 1..65535; a CA unless insecure-skip-tls-verify, never both; a key exactly when a certificate; blobs
 * followed by a NUL byte; a token that is non-empty, and free of blanks and control bytes when read
 * from a file; the context asked for). LeakSanitizer checks that nothing is left behind either way.
 *
 * The input names files. So that it reads only what is meant for it, the harness is linked with
 * -Wl,--wrap=open: kubeconfig.c's open() goes through __wrap_open below, which, while a
 * gs_kubeconfig_* call runs, refuses (EACCES) any path that does not resolve inside
 * tests/fixtures/kubeconfig or this run's temporary directory: no /dev/watchdog, FIFO or terminal is
 * ever opened, whatever the input says.
 *
 * Build and run (from the repository root; `make fuzz` does both for every harness):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -std=c11 -D_GNU_SOURCE -Isrc -Wl,--wrap=open \
 *     tests/fuzz/fuzz_kubeconfig.c src/k8s/kubeconfig.c -lyaml -lmbedcrypto -o build/fuzz_kubeconfig
 *   mkdir -p build/corpus/kubeconfig
 *   build/fuzz_kubeconfig -max_total_time=60 -dict=tests/fuzz/kubeconfig.dict build/corpus/kubeconfig \
 *     tests/fuzz/corpus/kubeconfig tests/fixtures/kubeconfig
 * GS_FUZZ_KUBECONFIG_DIR names the fixture directory when the fuzzer runs from elsewhere. The temporary
 * directory (removed at exit) is made in GS_FUZZ_TMPDIR, else /dev/shm when writable, else $TMPDIR or
 * /tmp.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "k8s/kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int __real_open(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...);

#define CHECK(e) ((e) ? (void)0 : abort())

static char fixtures[PATH_MAX]; /* realpath of tests/fixtures/kubeconfig, "" if not found */
static char tmp[PATH_MAX];      /* this run's temporary directory, resolved */
static char sa_dir[PATH_MAX + 8];
static char file_path[PATH_MAX + 16], token_path[PATH_MAX + 16], sa_token[PATH_MAX + 16];
static int confine; /* set while a gs_kubeconfig_* call runs: the runtime's own files pass untouched */

static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return n > 0 && strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

int __wrap_open(const char *path, int flags, ...)
{
	char real[PATH_MAX];
	mode_t mode = 0;

	if (flags & O_CREAT) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (!confine)
		return __real_open(path, flags, mode);
	if (!realpath(path, real))
		return -1; /* ENOENT, ENOTDIR, ELOOP, ENAMETOOLONG ... as open would say */
	if (!under(real, fixtures) && !under(real, tmp)) {
		errno = EACCES;
		return -1;
	}
	return __real_open(real, flags, mode);
}

static void cleanup(void)
{
	unlink(file_path);
	unlink(token_path);
	unlink(sa_token);
	char p[PATH_MAX + 32];
	snprintf(p, sizeof(p), "%s/ca.crt", sa_dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/namespace", sa_dir);
	unlink(p);
	rmdir(sa_dir);
	rmdir(tmp);
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	CHECK(f != NULL);
	CHECK(len == 0 || fwrite(data, 1, len, f) == len);
	CHECK(fclose(f) == 0);
}

static void init(void)
{
	const char *dir = getenv("GS_FUZZ_KUBECONFIG_DIR");
	if (!realpath(dir ? dir : "tests/fixtures/kubeconfig", fixtures))
		fixtures[0] = '\0';
	/* tmpfs when there is one: on ext4 every rewrite of a truncated file is flushed on close, which
	 * costs more than the parse (2.5x fewer executions per second here). */
	const char *base = getenv("GS_FUZZ_TMPDIR");
	if (!base)
		base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(tmp, sizeof(tmp), "%s/gs-fuzz-kubeconfig.XXXXXX", base);
	CHECK(mkdtemp(tmp) != NULL);
	char real[PATH_MAX];
	CHECK(realpath(tmp, real) != NULL && strlen(real) < sizeof(tmp));
	snprintf(tmp, sizeof(tmp), "%s", real); /* __wrap_open compares resolved paths */
	snprintf(sa_dir, sizeof(sa_dir), "%s/sa", tmp);
	CHECK(mkdir(sa_dir, 0700) == 0);
	snprintf(file_path, sizeof(file_path), "%s/config", tmp);
	snprintf(token_path, sizeof(token_path), "%s/token", tmp);
	snprintf(sa_token, sizeof(sa_token), "%s/token", sa_dir);
	char p[PATH_MAX + 32];
	snprintf(p, sizeof(p), "%s/ca.crt", sa_dir);
	write_file(p, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", 58);
	atexit(cleanup);
}

static void check_token_text(const char *t)
{
	CHECK(t && t[0]);
	for (const char *p = t; *p; p++)
		CHECK((unsigned char)*p >= 0x21 && (unsigned char)*p != 0x7f);
}

static void check_failure(int r, const struct gs_kubeconfig *k, const char *err, const char *label)
{
	static const struct gs_kubeconfig zero;
	CHECK(r < 0);
	CHECK(memcmp(k, &zero, sizeof(zero)) == 0);
	CHECK(err[0] && strncmp(err, label, strlen(label)) == 0);
}

static void check_success(const struct gs_kubeconfig *k, const char *context)
{
	CHECK(k->server && k->host && k->host[0] && !strpbrk(k->host, "[]/@"));
	CHECK(strncasecmp(k->server, "https://", 8) == 0);
	CHECK(k->port >= 1 && k->port <= 65535);
	CHECK(!k->tls_server_name || k->tls_server_name[0]);
	CHECK(k->insecure_skip_verify == 0 || k->insecure_skip_verify == 1);
	CHECK((k->ca != NULL) != k->insecure_skip_verify);
	CHECK(!k->ca || k->ca[k->ca_len] == '\0');
	CHECK((k->cert != NULL) == (k->key != NULL));
	CHECK(!k->cert || (k->cert[k->cert_len] == '\0' && k->key[k->key_len] == '\0'));
	CHECK(!k->token || k->token[0]);
	CHECK(!k->token_file || (k->token_file[0] && k->token));
	if (k->token_file)
		check_token_text(k->token);
	CHECK(k->context && (!context || strcmp(k->context, context) == 0));
	CHECK(k->cluster_name && k->cluster_name[0]);
	CHECK(!k->user_name || k->user_name[0]);
	CHECK(k->user_name || (!k->token && !k->token_file && !k->cert && !k->key));
	CHECK(!k->namespace || k->namespace[0]);
}

static void check_zeroed_after_free(struct gs_kubeconfig *k)
{
	static const struct gs_kubeconfig zero;
	gs_kubeconfig_free(k);
	CHECK(memcmp(k, &zero, sizeof(zero)) == 0);
	gs_kubeconfig_free(k); /* safe on a zeroed struct */
}

static void parse(const char *yaml, size_t len, const char *context)
{
	struct gs_kubeconfig k;
	char err[512] = "";
	confine = 1;
	int r = gs_kubeconfig_parse(yaml, len, fixtures[0] ? fixtures : NULL, context, &k, err, sizeof(err));
	confine = 0;
	if (r < 0)
		check_failure(r, &k, err, "kubeconfig: ");
	else
		check_success(&k, context);
	check_zeroed_after_free(&k);
}

static void load(const uint8_t *data, size_t len)
{
	struct gs_kubeconfig k;
	char err[512] = "", label[PATH_MAX + 32];
	write_file(file_path, data, len);
	confine = 1;
	int r = gs_kubeconfig_load(file_path, &k, err, sizeof(err));
	confine = 0;
	snprintf(label, sizeof(label), "kubeconfig %s: ", file_path);
	if (r < 0)
		check_failure(r, &k, err, label);
	else
		check_success(&k, NULL);
	check_zeroed_after_free(&k);
}

static void read_token(const uint8_t *data, size_t len)
{
	char err[512] = "", *tok = (char *)1;
	write_file(token_path, data, len);
	confine = 1;
	int r = gs_kubeconfig_read_token(token_path, &tok, err, sizeof(err));
	confine = 0;
	if (r < 0) {
		CHECK(tok == NULL && strncmp(err, "token: ", 7) == 0);
		return;
	}
	/* The file, blanks trimmed at both ends. */
	size_t a = 0, b = len;
	while (a < b && isspace(data[a]))
		a++;
	while (b > a && isspace(data[b - 1]))
		b--;
	check_token_text(tok);
	CHECK(strlen(tok) == b - a && memcmp(tok, data + a, b - a) == 0);
	free(tok);
}

/* Splits off the first line of [*p, *p + *len) as a NUL-terminated string (NULs inside cut it short). */
static char *first_line(const uint8_t **p, size_t *len)
{
	const uint8_t *nl = memchr(*p, '\n', *len);
	size_t n = nl ? (size_t)(nl - *p) : *len;
	char *s = malloc(n + 1);
	CHECK(s != NULL);
	memcpy(s, *p, n);
	s[n] = '\0';
	*p += nl ? n + 1 : n;
	*len -= nl ? n + 1 : n;
	return s;
}

static void in_cluster(int with_namespace, const uint8_t *data, size_t len)
{
	struct gs_kubeconfig k;
	char err[512] = "", ns[PATH_MAX + 32];
	char *host = first_line(&data, &len), *port = first_line(&data, &len);

	snprintf(ns, sizeof(ns), "%s/namespace", sa_dir);
	if (with_namespace)
		write_file(ns, " gpu-jobs\n", 10);
	else
		unlink(ns);
	write_file(sa_token, data, len);
	setenv("KUBERNETES_SERVICE_HOST", host, 1);
	setenv("KUBERNETES_SERVICE_PORT", port, 1);
	confine = 1;
	int r = gs_kubeconfig_in_cluster(sa_dir, &k, err, sizeof(err));
	confine = 0;
	if (r < 0) {
		check_failure(r, &k, err, "in-cluster config: ");
		CHECK(r != -ENOENT || !host[0] || !port[0] || strstr(err, "token") || strstr(err, "CA"));
	} else {
		CHECK(k.server && k.host && strcmp(k.host, host) == 0 && k.port >= 1 && k.port <= 65535);
		CHECK(k.ca && k.ca[k.ca_len] == '\0' && !k.insecure_skip_verify && !k.tls_server_name);
		CHECK(k.token_file && strcmp(k.token_file, sa_token) == 0);
		check_token_text(k.token);
		CHECK(with_namespace ? (k.namespace && strcmp(k.namespace, "gpu-jobs") == 0) : !k.namespace);
	}
	check_zeroed_after_free(&k);
	free(host);
	free(port);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	if (!ready) {
		init();
		ready = 1;
	}
	if (size == 0 || data[0] < 128) {
		parse((const char *)data, size, NULL);
		return 0;
	}
	const uint8_t *rest = data + 1;
	size_t len = size - 1;
	switch (data[0] & 3) {
	case 0: {
		char *context = first_line(&rest, &len);
		parse((const char *)rest, len, context);
		free(context);
		break;
	}
	case 1:
		load(rest, len);
		break;
	case 2:
		read_token(rest, len);
		break;
	default:
		in_cluster(data[0] & 4, rest, len);
		break;
	}
	return 0;
}
