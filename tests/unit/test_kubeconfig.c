/*
 * test_kubeconfig.c: kubeconfig and in-cluster loading (src/k8s/kubeconfig.h).
 *
 * File fixtures live in tests/fixtures/kubeconfig/ (run from the repository root, or set
 * GS_FIXTURES); the many small error cases are inline YAML through gs_kubeconfig_parse().
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "k8s/kubeconfig.h"

static char fixture_path[512];

static const char *fixture(const char *name)
{
	const char *dir = getenv("GS_FIXTURES");
	snprintf(fixture_path, sizeof(fixture_path), "%s/kubeconfig/%s", dir ? dir : "tests/fixtures", name);
	return fixture_path;
}

static const char ca_pem[] = "-----BEGIN CERTIFICATE-----\n"
			     "MIIBfixtureCAnotARealCertificate0000000000000000000000000000000000\n"
			     "-----END CERTIFICATE-----\n";

static void test_token_inline(void **state)
{
	struct gs_kubeconfig k;
	char err[256] = "";

	assert_int_equal(gs_kubeconfig_load(fixture("token.yaml"), &k, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_string_equal(k.context, "dev");
	assert_string_equal(k.cluster_name, "dev-cluster");
	assert_string_equal(k.user_name, "dev-user");
	assert_string_equal(k.namespace, "gpu-jobs");
	assert_string_equal(k.server, "https://api.dev.example.com:6443");
	assert_string_equal(k.host, "api.dev.example.com");
	assert_int_equal(k.port, 6443);
	assert_null(k.tls_server_name);
	assert_int_equal(k.ca_len, strlen(ca_pem));
	assert_memory_equal(k.ca, ca_pem, k.ca_len);
	assert_int_equal(k.ca[k.ca_len], '\0');
	assert_string_equal(k.token, "sha256~inline-token");
	assert_null(k.token_file);
	assert_null(k.cert);
	assert_null(k.key);
	assert_false(k.insecure_skip_verify);
	gs_kubeconfig_free(&k);
	assert_null(k.server);
	gs_kubeconfig_free(&k); /* twice is fine */
}

/* --context: another context of the same file, with a client certificate. */
static void test_other_context_cert_data(void **state)
{
	struct gs_kubeconfig k;
	char err[256] = "";

	assert_int_equal(gs_kubeconfig_load_context(fixture("token.yaml"), "other", &k, err, sizeof(err)), 0);
	assert_string_equal(k.host, "other.example");
	assert_true(k.insecure_skip_verify);
	assert_null(k.ca);
	assert_null(k.token);
	assert_null(k.namespace);
	assert_non_null(k.cert);
	assert_non_null(k.key);
	assert_true(k.cert_len > 20 && strstr(k.cert, "BEGIN CERTIFICATE") != NULL);
	assert_true(strstr(k.key, "BEGIN EC PRIVATE KEY") != NULL);
	assert_int_equal(k.key[k.key_len], '\0');
	gs_kubeconfig_free(&k);

	assert_int_equal(gs_kubeconfig_load_context(fixture("token.yaml"), "nope", &k, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "context \"nope\" not found"));
	assert_null(k.server);
}

static void test_token_file_relative(void **state)
{
	struct gs_kubeconfig k;
	char err[256] = "";
	char want_token_file[600];

	assert_int_equal(gs_kubeconfig_load(fixture("token-file.yaml"), &k, err, sizeof(err)), 0);
	snprintf(want_token_file, sizeof(want_token_file), "%s", fixture("token.txt"));
	assert_string_equal(k.token_file, want_token_file);
	assert_string_equal(k.token, "eyJhbGciOiJSUzI1NiJ9.from-file.sig"); /* trimmed, file wins */
	assert_string_equal(k.tls_server_name, "kubernetes.default.svc");
	assert_string_equal(k.host, "10.0.0.1");
	assert_int_equal(k.port, 443);
	assert_memory_equal(k.ca, ca_pem, strlen(ca_pem));
	gs_kubeconfig_free(&k);
}

static void test_cert_files_relative(void **state)
{
	struct gs_kubeconfig k;
	char err[256] = "";

	assert_int_equal(gs_kubeconfig_load(fixture("cert-files.yaml"), &k, err, sizeof(err)), 0);
	assert_string_equal(k.host, "127.0.0.1");
	assert_int_equal(k.port, 38443);
	assert_string_equal(k.cert, "-----BEGIN CERTIFICATE-----\nMIIBfixtureClientCert\n-----END CERTIFICATE-----\n");
	assert_string_equal(k.key,
			    "-----BEGIN EC PRIVATE KEY-----\nMHcfixtureClientKey\n-----END EC PRIVATE KEY-----\n");
	assert_null(k.token);
	gs_kubeconfig_free(&k);
}

static void test_ipv6_json(void **state)
{
	struct gs_kubeconfig k;
	char err[256] = "";

	assert_int_equal(gs_kubeconfig_load(fixture("ipv6.yaml"), &k, err, sizeof(err)), 0);
	assert_string_equal(k.host, "fd00:10:96::1");
	assert_int_equal(k.port, 6443);
	assert_string_equal(k.token, "t0k3n");
	gs_kubeconfig_free(&k);
}

/* The file-based failures: each message names the file and what is wrong. */
static void test_file_errors(void **state)
{
	static const struct {
		const char *file;
		int code;
		const char *msg;
	} cases[] = {
		{"missing-context.yaml", -ENOENT, "missing-context.yaml: context \"foo\" not found"},
		{"exec.yaml", -ENOTSUP,
		 "exec.yaml: user \"gke-user\": exec credential plugins are not supported (command "
		 "\"gke-gcloud-auth-plugin\")"},
		{"malformed.yaml", -EINVAL, "malformed.yaml: line 7: "},
		{"cert-no-key.yaml", -EINVAL, "user \"admin\": client-certificate set without client-key"},
		{"does-not-exist.yaml", -ENOENT, "does-not-exist.yaml: open "},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gs_kubeconfig k;
		char err[512] = "";
		int r = gs_kubeconfig_load(fixture(cases[i].file), &k, err, sizeof(err));
		if (r != cases[i].code || !strstr(err, cases[i].msg) || strncmp(err, "kubeconfig ", 11) != 0)
			fail_msg("%s: got %d \"%s\", want %d \"%s\"", cases[i].file, r, err, cases[i].code,
				 cases[i].msg);
		assert_null(k.server);
		assert_null(k.context);
	}
}

/* Inline cases: a base that works, with one thing changed each time. */
#define HEAD          "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
#define CLUSTER(body) "clusters:\n- name: c\n  cluster: " body "\n"
#define OK_CLUSTER    CLUSTER("{server: \"https://a.example\", insecure-skip-tls-verify: true}")
#define USER(body)    "users:\n- name: u\n  user: " body "\n"

static void test_parse_cases(void **state)
{
	static const struct {
		const char *yaml;
		int code;
		const char *msg; /* substring of err; NULL: must succeed */
	} cases[] = {
		{HEAD OK_CLUSTER USER("{token: abc}"), 0, NULL},
		{HEAD OK_CLUSTER USER("{}"), 0, NULL},
		{"", -EINVAL, "empty document"},
		{"- a\n- b\n", -EINVAL, "top level must be a mapping"},
		{"contexts: []\n", -EINVAL, "current-context is not set"},
		{"current-context: ''\n", -EINVAL, "current-context is not set"},
		{"current-context: [x]\n", -EINVAL, "current-context must be a string"},
		{"current-context: x\ncontexts: {x: 1}\n", -EINVAL, "contexts must be a list"},
		{"current-context: x\ncontexts: [1]\n", -EINVAL, "contexts: every entry must be a mapping"},
		{"current-context: x\ncontexts:\n- name: x\n  context: [1]\n", -EINVAL,
		 "context \"x\": context must be a mapping"},
		{"current-context: x\ncontexts:\n- name: x\n- name: x\n", -EINVAL, "context \"x\" is defined twice"},
		{"current-context: x\ncurrent-context: y\n", -EINVAL, "key \"current-context\" appears twice"},
		{"current-context: x\ncontexts:\n- name: x\n  context: {user: u}\n", -EINVAL,
		 "context \"x\": no cluster"},
		{HEAD, -ENOENT, "cluster \"c\" not found"},
		{HEAD CLUSTER("{insecure-skip-tls-verify: true}"), -EINVAL, "cluster \"c\": no server"},
		{HEAD CLUSTER("{server: \"http://a.example\", insecure-skip-tls-verify: true}"), -EINVAL,
		 "server \"http://a.example\" uses http://; only https:// is supported"},
		{HEAD CLUSTER("{server: \"a.example:6443\", insecure-skip-tls-verify: true}"), -EINVAL,
		 "is not an https:// URL"},
		{HEAD CLUSTER("{server: \"https://a.example/k8s/clusters/c-1\", insecure-skip-tls-verify: true}"),
		 -EINVAL, "has a path"},
		{HEAD CLUSTER("{server: \"https://u:p@a.example\", insecure-skip-tls-verify: true}"), -EINVAL,
		 "user info"},
		{HEAD CLUSTER("{server: \"https://fd00::1:6443\", insecure-skip-tls-verify: true}"), -EINVAL,
		 "[brackets]"},
		{HEAD CLUSTER("{server: \"https://[fd00::zz]:6443\", insecure-skip-tls-verify: true}"), -EINVAL,
		 "invalid IPv6 address"},
		{HEAD CLUSTER("{server: \"https://[fd00::1\", insecure-skip-tls-verify: true}"), -EINVAL,
		 "missing ']'"},
		{HEAD CLUSTER("{server: \"https://a.example:0\", insecure-skip-tls-verify: true}"), -EINVAL,
		 "port out of range"},
		{HEAD CLUSTER("{server: \"https://a.example:65536\", insecure-skip-tls-verify: true}"), -EINVAL,
		 "port out of range"},
		{HEAD CLUSTER("{server: \"https://a.example:\", insecure-skip-tls-verify: true}"), -EINVAL,
		 "invalid port"},
		{HEAD CLUSTER("{server: \"https://a.example:6x\", insecure-skip-tls-verify: true}"), -EINVAL,
		 "invalid port"},
		{HEAD CLUSTER("{server: \"https://[::1]x\", insecure-skip-tls-verify: true}"), -EINVAL, "invalid port"},
		{HEAD CLUSTER("{server: {a: 1}, insecure-skip-tls-verify: true}"), -EINVAL,
		 "cluster \"c\": server must be a string"},
		{HEAD CLUSTER("{server: \"https://a.example\", insecure-skip-tls-verify: maybe}"), -EINVAL,
		 "insecure-skip-tls-verify must be true or false"},
		{HEAD CLUSTER("{server: \"https://a.example\"}"), -EINVAL, "no certificate-authority(-data)"},
		{HEAD CLUSTER("{server: \"https://a.example\", certificate-authority-data: \"!!notbase64!!\"}"),
		 -EINVAL, "certificate-authority-data is not valid base64"},
		{HEAD CLUSTER(
			 "{server: \"https://a.example\", certificate-authority-data: \"QQ==\", insecure-skip-tls-verify: "
			 "true}"),
		 -EINVAL, "certificate-authority and insecure-skip-tls-verify are both set"},
		{HEAD CLUSTER(
			 "{server: \"https://a.example\", certificate-authority-data: \"QQ==\", certificate-authority: "
			 "ca.crt}"),
		 -EINVAL, "both certificate-authority and certificate-authority-data are set"},
		{HEAD CLUSTER("{server: \"https://a.example\", certificate-authority: /nonexistent/ca.crt}"), -ENOENT,
		 "cluster \"c\": certificate-authority /nonexistent/ca.crt: No such file or directory"},
		{HEAD CLUSTER(
			 "{server: \"https://a.example\", insecure-skip-tls-verify: true, proxy-url: \"http://p:3128\"}"),
		 -ENOTSUP, "proxy-url is not supported"},
		{HEAD OK_CLUSTER, -ENOENT, "user \"u\" not found"},
		{HEAD OK_CLUSTER USER("{username: admin, password: secret}"), -ENOTSUP,
		 "user \"u\": username/password authentication is not supported"},
		{HEAD OK_CLUSTER USER("{auth-provider: {name: oidc, config: {}}}"), -ENOTSUP,
		 "user \"u\": auth-provider \"oidc\" is not supported"},
		{HEAD OK_CLUSTER USER("{exec: [1]}"), -ENOTSUP,
		 "user \"u\": exec credential plugins are not supported"},
		{HEAD OK_CLUSTER USER("{token: abc, as: root}"), -ENOTSUP, "impersonation (as) is not supported"},
		{HEAD OK_CLUSTER USER("{token: [abc]}"), -EINVAL, "user \"u\": token must be a string"},
		{HEAD OK_CLUSTER USER("{client-key-data: QQ==}"), -EINVAL, "client-key set without client-certificate"},
		{HEAD OK_CLUSTER USER("{tokenFile: /nonexistent/token}"), -ENOENT, "tokenFile /nonexistent/token"},
		{HEAD OK_CLUSTER USER("{token: \"a\\0b\"}"), -EINVAL, "token contains a NUL byte"},
		{"a: &x [*x]\ncurrent-context: *x\n", -EINVAL, "current-context must be a string"},
		{"key: [unclosed\n", -EINVAL, "kubeconfig: line "},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gs_kubeconfig k;
		char err[512] = "";
		int r = gs_kubeconfig_parse(cases[i].yaml, strlen(cases[i].yaml), NULL, NULL, &k, err, sizeof(err));
		int ok = r == cases[i].code && (cases[i].msg ? strstr(err, cases[i].msg) != NULL : err[0] == '\0');
		if (!ok)
			fail_msg("case %zu: got %d \"%s\", want %d \"%s\"", i, r, err, cases[i].code,
				 cases[i].msg ? cases[i].msg : "");
		if (r < 0)
			assert_null(k.server);
		gs_kubeconfig_free(&k);
	}
}

/* The yaml need not be NUL-terminated: only len bytes are read. */
static void test_parse_len(void **state)
{
	const char yaml[] = HEAD OK_CLUSTER USER("{token: abc}") "garbage: [";
	struct gs_kubeconfig k;
	char err[256] = "";

	assert_int_equal(
		gs_kubeconfig_parse(yaml, sizeof(yaml) - 1 - strlen("garbage: ["), NULL, NULL, &k, err, sizeof(err)),
		0);
	assert_string_equal(k.token, "abc");
	gs_kubeconfig_free(&k);
	assert_int_equal(gs_kubeconfig_parse(yaml, sizeof(yaml) - 1, NULL, NULL, &k, err, sizeof(err)), -EINVAL);
}

/* ---- in-cluster ---------------------------------------------------------------------------------- */

static char sa_dir[64];

static void write_file(const char *dir, const char *name, const char *content)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static void remove_file(const char *dir, const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

static int sa_setup(void **state)
{
	strcpy(sa_dir, "/tmp/gs-test-sa-XXXXXX");
	if (!mkdtemp(sa_dir))
		return -1;
	write_file(sa_dir, "ca.crt", ca_pem);
	write_file(sa_dir, "token", "sa-token-123\n");
	write_file(sa_dir, "namespace", "gpu-system");
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	return 0;
}

static int sa_teardown(void **state)
{
	remove_file(sa_dir, "ca.crt");
	remove_file(sa_dir, "token");
	remove_file(sa_dir, "namespace");
	rmdir(sa_dir);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	return 0;
}

static void test_in_cluster(void **state)
{
	struct gs_kubeconfig k;
	char err[256] = "", want[128];

	assert_int_equal(gs_kubeconfig_in_cluster(sa_dir, &k, err, sizeof(err)), 0);
	assert_string_equal(k.server, "https://10.96.0.1:443");
	assert_string_equal(k.host, "10.96.0.1");
	assert_int_equal(k.port, 443);
	assert_null(k.tls_server_name);
	assert_string_equal(k.token, "sa-token-123");
	snprintf(want, sizeof(want), "%s/token", sa_dir);
	assert_string_equal(k.token_file, want);
	assert_string_equal(k.namespace, "gpu-system");
	assert_memory_equal(k.ca, ca_pem, k.ca_len);
	assert_false(k.insecure_skip_verify);
	gs_kubeconfig_free(&k);

	/* Rotation: the client re-reads token_file. */
	write_file(sa_dir, "token", "  rotated\n");
	char *tok = NULL;
	assert_int_equal(gs_kubeconfig_read_token(want, &tok, err, sizeof(err)), 0);
	assert_string_equal(tok, "rotated");
	free(tok);
	write_file(sa_dir, "token", " \n");
	assert_int_equal(gs_kubeconfig_read_token(want, &tok, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "empty"));
	assert_null(tok);
	write_file(sa_dir, "token", "sa-token-123\n");
}

static void test_in_cluster_ipv6_and_missing(void **state)
{
	struct gs_kubeconfig k;
	char err[256] = "";

	setenv("KUBERNETES_SERVICE_HOST", "fd00:10:96::1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
	remove_file(sa_dir, "namespace");
	assert_int_equal(gs_kubeconfig_in_cluster(sa_dir, &k, err, sizeof(err)), 0);
	assert_string_equal(k.server, "https://[fd00:10:96::1]:6443");
	assert_string_equal(k.host, "fd00:10:96::1");
	assert_int_equal(k.port, 6443);
	assert_null(k.namespace); /* no namespace file: the caller's default */
	gs_kubeconfig_free(&k);

	setenv("KUBERNETES_SERVICE_PORT", "https", 1);
	assert_int_equal(gs_kubeconfig_in_cluster(sa_dir, &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "invalid port"));

	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	remove_file(sa_dir, "token");
	assert_int_equal(gs_kubeconfig_in_cluster(sa_dir, &k, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "in-cluster config: token "));
	assert_null(k.server);
	write_file(sa_dir, "token", "sa-token-123\n");

	unsetenv("KUBERNETES_SERVICE_HOST");
	assert_int_equal(gs_kubeconfig_in_cluster(sa_dir, &k, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "KUBERNETES_SERVICE_HOST"));
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	write_file(sa_dir, "namespace", "gpu-system");
}

/* The size cap: a file one byte over GS_KUBECONFIG_FILE_MAX is refused. */
static void test_file_cap(void **state)
{
	char path[128], err[256] = "";
	struct gs_kubeconfig k;

	snprintf(path, sizeof(path), "%s/big", sa_dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	for (size_t i = 0; i < GS_KUBECONFIG_FILE_MAX + 1; i++)
		fputc('#', f);
	fclose(f);
	assert_int_equal(gs_kubeconfig_load(path, &k, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "larger than 1048576 bytes"));
	truncate(path, (off_t)GS_KUBECONFIG_FILE_MAX); /* at the cap: read, then refused as YAML */
	assert_int_equal(gs_kubeconfig_load(path, &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "empty document"));
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_token_inline),
		cmocka_unit_test(test_other_context_cert_data),
		cmocka_unit_test(test_token_file_relative),
		cmocka_unit_test(test_cert_files_relative),
		cmocka_unit_test(test_ipv6_json),
		cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_parse_cases),
		cmocka_unit_test(test_parse_len),
		cmocka_unit_test_setup_teardown(test_in_cluster, sa_setup, sa_teardown),
		cmocka_unit_test_setup_teardown(test_in_cluster_ipv6_and_missing, sa_setup, sa_teardown),
		cmocka_unit_test_setup_teardown(test_file_cap, sa_setup, sa_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
