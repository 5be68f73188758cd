/*
 * test_tls.c: src/core/tls.h. Client and server sessions are pumped against each other in memory;
 * a raw mbedTLS client stands in for old or weak peers. Certificates are made at test time with
 * gs_tls_generate(), and with openssl(1) where an independent encoder matters (IP SANs, RSA, a CA
 * name with several attributes).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/oid.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

#include "core/buf.h"
#include "core/tls.h"

/* ---- fixtures -------------------------------------------------------------------------------- */

struct pki {
	char dir[64];
	int have_openssl;
	char *ca, *ca_key;     /* trusted CA */
	char *ca2, *ca2_key;   /* another CA, not trusted by the clients */
	char *leaf, *leaf_key; /* localhost, 127.0.0.1, ::1; issued by ca */
	struct gs_tls_config *server;
	struct gs_tls_config *client; /* trusts ca */
};

static struct pki P;

static char *gen(const char *cn, const char *const *names, int is_ca, int64_t nb, int64_t na, const char *icert,
		 const char *ikey, char **key)
{
	struct gs_tls_cert_req req = {cn, names, is_ca, nb, na, 0};
	char err[256] = "", *cert = NULL;
	int r = gs_tls_generate(&req, icert, ikey, &cert, key, err, sizeof(err));
	if (r != 0)
		fail_msg("gs_tls_generate(%s): %d %s", cn, r, err);
	return cert;
}

static struct gs_tls_config *server_config(const char *cert, const char *key)
{
	struct gs_tls_config *c = NULL;
	char err[256] = "";
	int r = gs_tls_server_config_new(cert, strlen(cert), key, strlen(key), &c, err, sizeof(err));
	if (r != 0)
		fail_msg("server config: %d %s", r, err);
	return c;
}

static struct gs_tls_config *client_config(const char *ca, int insecure)
{
	struct gs_tls_client_opts o = {0};
	struct gs_tls_config *c = NULL;
	char err[256] = "";
	o.ca = ca;
	o.ca_len = ca ? strlen(ca) : 0;
	o.insecure_skip_verify = insecure;
	int r = gs_tls_client_config_new(&o, &c, err, sizeof(err));
	if (r != 0)
		fail_msg("client config: %d %s", r, err);
	return c;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *s;
	long n;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s = calloc(1, (size_t)n + 1);
	if (fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		s = NULL;
	}
	fclose(f);
	return s;
}

static void spit(const char *path, const char *s)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(s, 1, strlen(s), f), strlen(s));
	fclose(f);
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static int group_setup(void **state)
{
	static const char *const names[] = {"localhost", "127.0.0.1", "::1", NULL};
	int64_t now = time(NULL);

	snprintf(P.dir, sizeof(P.dir), "/tmp/gs-test-tls-XXXXXX");
	if (!mkdtemp(P.dir))
		return -1;
	P.have_openssl = sh("openssl version >/dev/null 2>&1") == 0;
	P.ca = gen("Test CA", NULL, 1, now - 3600, now + 86400, NULL, NULL, &P.ca_key);
	P.ca2 = gen("Other CA", NULL, 1, now - 3600, now + 86400, NULL, NULL, &P.ca2_key);
	P.leaf = gen("localhost", names, 0, now - 3600, now + 86400, P.ca, P.ca_key, &P.leaf_key);
	P.server = server_config(P.leaf, P.leaf_key);
	P.client = client_config(P.ca, 0);
	return 0;
}

static int group_teardown(void **state)
{
	gs_tls_config_unref(P.server);
	gs_tls_config_unref(P.client);
	free(P.ca);
	free(P.ca_key);
	free(P.ca2);
	free(P.ca2_key);
	free(P.leaf);
	free(P.leaf_key);
	sh("rm -rf '%s'", P.dir);
	return 0;
}

/* ---- pumping --------------------------------------------------------------------------------- */

static size_t transfer(struct gs_tls *from, struct gs_tls *to)
{
	struct gs_buf b;
	size_t n;
	gs_buf_init(&b, 0);
	assert_int_equal(gs_tls_flush(from, &b), 0);
	n = b.len;
	if (n)
		assert_int_equal(gs_tls_feed(to, b.data, b.len), 0);
	gs_buf_free(&b);
	return n;
}

/* Runs both handshakes until each has finished or failed (or nothing moves). */
static void handshake(struct gs_tls *c, struct gs_tls *s, int *rc, int *rs)
{
	*rc = *rs = 0;
	for (int i = 0; i < 20; i++) {
		size_t moved = 0;
		if (*rc == 0)
			*rc = gs_tls_handshake(c);
		moved += transfer(c, s);
		if (*rs == 0)
			*rs = gs_tls_handshake(s);
		moved += transfer(s, c);
		if ((*rc != 0 && *rs != 0) || !moved)
			break;
	}
}

/* A client session to name, against a fresh server session of cfg; returns the client's result. */
static int connect_to(struct gs_tls_config *ccfg, struct gs_tls_config *scfg, const char *name, struct gs_tls **c,
		      struct gs_tls **s, int *rs)
{
	int rc;
	assert_int_equal(gs_tls_client_new(ccfg, name, c), 0);
	assert_int_equal(gs_tls_server_new(scfg, s), 0);
	handshake(*c, *s, &rc, rs);
	return rc;
}

/* Expects the client to refuse name with -EACCES and a reason containing want. */
static void expect_refused(struct gs_tls_config *ccfg, struct gs_tls_config *scfg, const char *name, const char *want)
{
	struct gs_tls *c, *s;
	int rs, rc = connect_to(ccfg, scfg, name, &c, &s, &rs);
	assert_int_equal(rc, -EACCES);
	if (!strstr(gs_tls_error(c), want))
		fail_msg("reason \"%s\" lacks \"%s\"", gs_tls_error(c), want);
	/* The client told the server with an alert. */
	assert_int_equal(rs, -EPROTO);
	assert_non_null(strstr(gs_tls_error(s), "fatal alert"));
	assert_int_equal(gs_tls_handshake_done(c), 0);
	gs_tls_free(c);
	gs_tls_free(s);
}

static void expect_ok(struct gs_tls_config *ccfg, struct gs_tls_config *scfg, const char *name)
{
	struct gs_tls *c, *s;
	int rs, rc = connect_to(ccfg, scfg, name, &c, &s, &rs);
	if (rc != 1 || rs != 1)
		fail_msg("%s: client %d (%s) server %d (%s)", name, rc, gs_tls_error(c), rs, gs_tls_error(s));
	gs_tls_free(c);
	gs_tls_free(s);
}

/* ---- sessions -------------------------------------------------------------------------------- */

static void test_handshake_and_data(void **state)
{
	struct gs_tls *c, *s;
	char buf[64];
	int rs;

	assert_int_equal(gs_tls_client_new(P.client, "localhost", &c), 0);
	assert_int_equal(gs_tls_server_new(P.server, &s), 0);
	assert_null(gs_tls_version(c));
	assert_null(gs_tls_ciphersuite(c));
	assert_int_equal(gs_tls_write(c, "x", 1), -EINVAL);
	assert_string_equal(gs_tls_error(c), "");
	/* Reading before the handshake drives it. */
	assert_int_equal(gs_tls_read(s, buf, sizeof(buf)), 0);

	int rc;
	handshake(c, s, &rc, &rs);
	assert_int_equal(rc, 1);
	assert_int_equal(rs, 1);
	assert_true(gs_tls_handshake_done(c));
	assert_true(gs_tls_handshake_done(s));
	assert_string_equal(gs_tls_version(c), "TLSv1.2");
	assert_string_equal(gs_tls_version(s), "TLSv1.2");
	/* ChaCha20-Poly1305 is our first choice (tls.c says why), and both ends are ours. */
	assert_string_equal(gs_tls_ciphersuite(c), "TLS-ECDHE-ECDSA-WITH-CHACHA20-POLY1305-SHA256");
	assert_int_equal(gs_tls_handshake(c), 1);

	assert_int_equal(gs_tls_read(s, buf, sizeof(buf)), 0);
	assert_int_equal(gs_tls_write(c, "GET / HTTP/1.1\r\n\r\n", 18), 0);
	assert_true(transfer(c, s) > 18);
	assert_int_equal(gs_tls_read(s, buf, sizeof(buf)), 18);
	assert_memory_equal(buf, "GET / HTTP/1.1\r\n\r\n", 18);
	assert_int_equal(gs_tls_read(s, buf, sizeof(buf)), 0);

	/* Two records in one feed, read with a small buffer. */
	assert_int_equal(gs_tls_write(s, "hello ", 6), 0);
	assert_int_equal(gs_tls_write(s, "world", 5), 0);
	transfer(s, c);
	char got[16] = "";
	size_t n = 0;
	int r;
	while ((r = gs_tls_read(c, got + n, 4)) > 0)
		n += (size_t)r;
	assert_int_equal(r, 0);
	assert_int_equal(n, 11);
	assert_memory_equal(got, "hello world", 11);
	gs_tls_free(c);
	gs_tls_free(s);
}

static void test_large_write(void **state)
{
	const size_t total = 1u << 20;
	char *data = malloc(total), *got = malloc(total), buf[4096];
	struct gs_tls *c, *s;
	struct gs_buf wire;
	size_t recs = 0, off, n = 0;
	int rs;

	for (size_t i = 0; i < total; i++)
		data[i] = (char)(i * 31 + (i >> 12));
	assert_int_equal(connect_to(P.client, P.server, "localhost", &c, &s, &rs), 1);
	assert_int_equal(gs_tls_write(c, data, total), 0);
	gs_buf_init(&wire, 0);
	assert_int_equal(gs_tls_flush(c, &wire), 0);
	/* Application-data records of at most 16 KiB of plaintext: 64 of them. */
	for (off = 0; off + 5 <= wire.len; recs++) {
		size_t len = ((unsigned char)wire.data[off + 3] << 8) | (unsigned char)wire.data[off + 4];
		assert_int_equal((unsigned char)wire.data[off], 23);
		assert_true(len <= 16384 + 16);
		off += 5 + len;
	}
	assert_int_equal(off, wire.len);
	assert_int_equal(recs, 64);
	assert_int_equal(wire.len, total + 64 * 21); /* ChaCha20-Poly1305: 5 header + 16 tag, no explicit nonce */

	/* Fed in odd slices, as TCP would cut it, and read in small pieces. */
	for (off = 0; off < wire.len; off += 7001) {
		size_t len = wire.len - off < 7001 ? wire.len - off : 7001;
		int r;
		assert_int_equal(gs_tls_feed(s, wire.data + off, len), 0);
		while ((r = gs_tls_read(s, buf, sizeof(buf))) > 0) {
			assert_true(n + (size_t)r <= total);
			memcpy(got + n, buf, (size_t)r);
			n += (size_t)r;
		}
		assert_int_equal(r, 0);
	}
	assert_int_equal(n, total);
	assert_memory_equal(got, data, total);

	/* And back, in one feed. */
	assert_int_equal(gs_tls_write(s, data, total), 0);
	gs_buf_reset(&wire);
	assert_int_equal(gs_tls_flush(s, &wire), 0);
	assert_int_equal(gs_tls_feed(c, wire.data, wire.len), 0);
	n = 0;
	int r;
	while ((r = gs_tls_read(c, got + n, total - n < 20000 ? total - n : 20000)) > 0)
		n += (size_t)r;
	assert_int_equal(r, 0);
	assert_int_equal(n, total);
	assert_memory_equal(got, data, total);

	gs_buf_free(&wire);
	gs_tls_free(c);
	gs_tls_free(s);
	free(data);
	free(got);
}

static void test_feed_cap(void **state)
{
	struct gs_tls *s;
	char *junk = calloc(1, 1u << 20);
	int r = 0;
	assert_int_equal(gs_tls_server_new(P.server, &s), 0);
	for (int i = 0; i < 5 && r == 0; i++)
		r = gs_tls_feed(s, junk, 1u << 20);
	assert_int_equal(r, -E2BIG);
	gs_tls_free(s);
	free(junk);
}

static void test_garbage_input(void **state)
{
	struct gs_tls *s;
	static const char req[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	assert_int_equal(gs_tls_server_new(P.server, &s), 0);
	assert_int_equal(gs_tls_feed(s, req, sizeof(req) - 1), 0);
	assert_int_equal(gs_tls_handshake(s), -EPROTO);
	assert_true(strlen(gs_tls_error(s)) > 0);
	/* The error is latched. */
	assert_int_equal(gs_tls_handshake(s), -EPROTO);
	char buf[8];
	assert_int_equal(gs_tls_read(s, buf, sizeof(buf)), -EPROTO);
	gs_tls_free(s);
}

static void test_close_notify(void **state)
{
	struct gs_tls *c, *s;
	char buf[16];
	int rs;

	assert_int_equal(connect_to(P.client, P.server, "localhost", &c, &s, &rs), 1);
	assert_int_equal(gs_tls_write(c, "bye", 3), 0);
	gs_tls_close_notify(c);
	transfer(c, s);
	assert_int_equal(gs_tls_read(s, buf, sizeof(buf)), 3);
	assert_int_equal(gs_tls_read(s, buf, sizeof(buf)), -ECONNRESET);
	assert_non_null(strstr(gs_tls_error(s), "close_notify"));
	assert_int_equal(gs_tls_read(s, buf, sizeof(buf)), -ECONNRESET);
	assert_int_equal(gs_tls_write(s, "x", 1), -ECONNRESET);
	gs_tls_free(c);
	gs_tls_free(s);
}

/* ---- session resumption ---------------------------------------------------------------------- */

/* Connects a client of ccfg to a server of scfg as name, expects both to finish, exchanges a byte each
 * way, and returns whether the handshake resumed (both ends must agree). */
static int connect_resumed(struct gs_tls_config *ccfg, struct gs_tls_config *scfg, const char *name)
{
	struct gs_tls *c, *s;
	char buf[8];
	int rs, rc = connect_to(ccfg, scfg, name, &c, &s, &rs);
	if (rc != 1 || rs != 1)
		fail_msg("%s: client %d (%s) server %d (%s)", name, rc, gs_tls_error(c), rs, gs_tls_error(s));
	assert_int_equal(gs_tls_resumed(c), gs_tls_resumed(s));
	assert_int_equal(gs_tls_write(c, "q", 1), 0);
	transfer(c, s);
	assert_int_equal(gs_tls_read(s, buf, sizeof(buf)), 1);
	assert_int_equal(gs_tls_write(s, "a", 1), 0);
	transfer(s, c);
	assert_int_equal(gs_tls_read(c, buf, sizeof(buf)), 1);
	assert_int_equal(buf[0], 'a');
	rc = gs_tls_resumed(c);
	gs_tls_free(c);
	gs_tls_free(s);
	return rc;
}

static void expect_stats(struct gs_tls_config *cfg, uint64_t full, uint64_t resumed)
{
	struct gs_tls_stats st;
	gs_tls_config_stats(cfg, &st);
	if (st.full != full || st.resumed != resumed)
		fail_msg("handshakes full %llu resumed %llu, want %llu and %llu", (unsigned long long)st.full,
			 (unsigned long long)st.resumed, (unsigned long long)full, (unsigned long long)resumed);
}

static void test_resume(void **state)
{
	struct gs_tls_config *srv = server_config(P.leaf, P.leaf_key), *cli = client_config(P.ca, 0);
	struct gs_tls *early, *s;
	int rc, rs;

	/* Opened before any handshake completed: it offers what exists when its handshake starts. */
	assert_int_equal(gs_tls_client_new(cli, "localhost", &early), 0);
	assert_false(gs_tls_config_resumable(cli, "localhost"));
	assert_int_equal(connect_resumed(cli, srv, "localhost"), 0);
	expect_stats(cli, 1, 0);
	expect_stats(srv, 1, 0);
	assert_true(gs_tls_config_resumable(cli, "localhost"));
	assert_false(gs_tls_config_resumable(cli, "127.0.0.1"));

	/* The second and later connections resume the first one's session, the early one included. */
	assert_int_equal(connect_resumed(cli, srv, "localhost"), 1);
	assert_int_equal(connect_resumed(cli, srv, "localhost"), 1);
	assert_int_equal(gs_tls_server_new(srv, &s), 0);
	handshake(early, s, &rc, &rs);
	assert_int_equal(rc, 1);
	assert_int_equal(rs, 1);
	assert_true(gs_tls_resumed(early));
	assert_true(gs_tls_resumed(s));
	/* A resumed session is the negotiated one: same protocol and suite. */
	assert_string_equal(gs_tls_version(early), "TLSv1.2");
	assert_string_equal(gs_tls_ciphersuite(early), "TLS-ECDHE-ECDSA-WITH-CHACHA20-POLY1305-SHA256");
	gs_tls_free(early);
	gs_tls_free(s);
	expect_stats(cli, 1, 3);
	expect_stats(srv, 1, 3);
	gs_tls_config_unref(srv);
	gs_tls_config_unref(cli);
}

static void test_resume_refused(void **state)
{
	static const char *const names[] = {"localhost", NULL};
	int64_t now = time(NULL);
	struct gs_tls_config *srv = server_config(P.leaf, P.leaf_key), *cli = client_config(P.ca, 0);
	/* Same certificate, other ticket keys: its tickets are not ours. */
	struct gs_tls_config *srv2 = server_config(P.leaf, P.leaf_key);
	/* Names localhost too, but issued by a CA the client does not trust. */
	char *key, *cert = gen("localhost", names, 0, now - 60, now + 3600, P.ca2, P.ca2_key, &key);
	struct gs_tls_config *rogue = server_config(cert, key);

	assert_int_equal(connect_resumed(cli, srv, "localhost"), 0);
	assert_true(gs_tls_config_resumable(cli, "localhost"));

	/* The ticket is offered and refused: the client runs a full handshake and verifies the chain. */
	expect_refused(cli, rogue, "localhost", "certificate not trusted by the configured CA");
	expect_stats(rogue, 0, 0);
	expect_stats(cli, 1, 0);
	/* A refused resumption against a trusted server is a full handshake, which replaces the saved
	 * session: the next connection to that server resumes, the first server's ticket is gone. */
	assert_int_equal(connect_resumed(cli, srv2, "localhost"), 0);
	expect_stats(cli, 2, 0);
	assert_int_equal(connect_resumed(cli, srv2, "localhost"), 1);
	assert_int_equal(connect_resumed(cli, srv, "localhost"), 0);
	expect_stats(cli, 3, 1);
	expect_stats(srv, 2, 0);
	expect_stats(srv2, 1, 1);
	gs_tls_config_unref(srv);
	gs_tls_config_unref(srv2);
	gs_tls_config_unref(rogue);
	gs_tls_config_unref(cli);
	free(cert);
	free(key);
}

static void test_resume_same_config_and_name_only(void **state)
{
	struct gs_tls_config *srv = server_config(P.leaf, P.leaf_key), *cli = client_config(P.ca, 0);
	struct gs_tls_config *same_ca = client_config(P.ca, 0), *insecure = client_config(NULL, 1);

	assert_int_equal(connect_resumed(cli, srv, "localhost"), 0);
	/* The server would take the ticket from anyone (it is its own): a full handshake means that the
	 * client did not offer it. Another config, even one trusting the same CA, has no session. */
	assert_int_equal(connect_resumed(same_ca, srv, "localhost"), 0);
	assert_int_equal(connect_resumed(insecure, srv, "localhost"), 0);
	/* The same config towards another name (which the certificate also carries) does not offer the
	 * session verified for localhost; that full handshake then replaces it. */
	assert_int_equal(connect_resumed(cli, srv, "127.0.0.1"), 0);
	assert_false(gs_tls_config_resumable(cli, "localhost"));
	assert_true(gs_tls_config_resumable(cli, "127.0.0.1"));
	assert_int_equal(connect_resumed(cli, srv, "localhost"), 0);
	assert_int_equal(connect_resumed(cli, srv, "localhost"), 1);
	expect_stats(cli, 3, 1);
	/* A refused name after a saved session: the name check still runs (no session for it). */
	expect_refused(cli, srv, "other.example", "certificate does not name other.example");
	/* Only completed handshakes count: the server saw the client's alert, not a Finished. */
	expect_stats(srv, 5, 1);
	expect_stats(cli, 3, 1);
	/* Configs of insecure_skip_verify resume their own sessions too. */
	assert_int_equal(connect_resumed(insecure, srv, "localhost"), 1);
	gs_tls_config_unref(srv);
	gs_tls_config_unref(cli);
	gs_tls_config_unref(same_ca);
	gs_tls_config_unref(insecure);
}

/* ---- verification ---------------------------------------------------------------------------- */

static void test_wrong_ca(void **state)
{
	struct gs_tls_config *other = client_config(P.ca2, 0);
	expect_refused(other, P.server, "localhost", "certificate not trusted by the configured CA");
	gs_tls_config_unref(other);
}

/* A client with a certificate (and its key) of issuer (icert, ikey), trusting P.ca. */
static struct gs_tls_config *client_with_cert(const char *icert, const char *ikey, char **cert, char **key)
{
	int64_t now = time(NULL);
	struct gs_tls_client_opts o = {0};
	struct gs_tls_config *c = NULL;
	char err[256] = "";

	struct gs_tls_cert_req req = {"kube-apiserver-webhook-client", NULL, 0, now - 3600, now + 86400, 1};

	if (gs_tls_generate(&req, icert, ikey, cert, key, err, sizeof(err)) != 0)
		fail_msg("client certificate: %s", err);
	o.ca = P.ca;
	o.ca_len = strlen(P.ca);
	o.cert = *cert;
	o.cert_len = strlen(*cert);
	o.key = *key;
	o.key_len = strlen(*key);
	if (gs_tls_client_config_new(&o, &c, err, sizeof(err)) != 0)
		fail_msg("client config with a certificate: %s", err);
	return c;
}

/* Expects the server to refuse the client (no certificate, or one of another CA). */
static void expect_client_refused(struct gs_tls_config *ccfg, struct gs_tls_config *scfg)
{
	struct gs_tls *c, *s;
	int rs, rc = connect_to(ccfg, scfg, "localhost", &c, &s, &rs);
	if (rs >= 0 || (rc == 1 && gs_tls_handshake_done(s)))
		fail_msg("server %d (%s), client %d (%s)", rs, gs_tls_error(s), rc, gs_tls_error(c));
	gs_tls_free(c);
	gs_tls_free(s);
}

/* --webhook-client-ca-file: only a client with a certificate of the configured CA completes a handshake. */
static void test_client_certificate_required(void **state)
{
	struct gs_tls_config *strict = server_config(P.leaf, P.leaf_key), *good, *other, *anon;
	char *gc, *gk, *oc, *ok, err[256] = "";

	/* A bad CA leaves the config as it was: no client certificate asked. */
	struct gs_tls_config *lax = server_config(P.leaf, P.leaf_key);
	assert_int_equal(gs_tls_server_config_require_client(lax, "junk", 4, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "client-ca: no PEM certificate found");
	expect_ok(P.client, lax, "localhost");
	gs_tls_config_unref(lax);

	assert_int_equal(gs_tls_server_config_require_client(strict, P.ca2, strlen(P.ca2), err, sizeof(err)), 0);
	good = client_with_cert(P.ca2, P.ca2_key, &gc, &gk);
	other = client_with_cert(P.ca, P.ca_key, &oc, &ok);
	expect_ok(good, strict, "localhost");
	anon = client_config(P.ca, 0);        /* fresh: P.client holds a ticket of strict from before */
	expect_client_refused(anon, strict);  /* no certificate */
	expect_client_refused(other, strict); /* one of a CA the server does not take */
	/* The server that asks for none still takes a client that has one. */
	expect_ok(good, P.server, "localhost");
	gs_tls_config_unref(strict);
	gs_tls_config_unref(good);
	gs_tls_config_unref(other);
	gs_tls_config_unref(anon);
	free(gc);
	free(gk);
	free(oc);
	free(ok);
}

static void test_dns_mismatch(void **state)
{
	expect_refused(P.client, P.server, "other.example",
		       "certificate does not name other.example (its names: DNS:localhost, IP:127.0.0.1, IP:::1)");
}

static void test_ip_literals(void **state)
{
	expect_ok(P.client, P.server, "127.0.0.1");
	expect_ok(P.client, P.server, "::1");
	expect_ok(P.client, P.server, "[::1]");
	expect_refused(
		P.client, P.server, "127.0.0.2",
		"certificate does not name IP address 127.0.0.2 (its names: DNS:localhost, IP:127.0.0.1, IP:::1)");
	expect_refused(P.client, P.server, "::2", "certificate does not name IP address ::2");
	/* "localhost" resolving to 127.0.0.1 is no licence: an IP literal needs an IP SAN. */
	static const char *const dns_only[] = {"localhost", NULL};
	int64_t now = time(NULL);
	char *key, *cert = gen("localhost", dns_only, 0, now - 60, now + 3600, P.ca, P.ca_key, &key);
	struct gs_tls_config *srv = server_config(cert, key);
	expect_refused(P.client, srv, "127.0.0.1",
		       "certificate does not name IP address 127.0.0.1 (its names: DNS:localhost)");
	gs_tls_config_unref(srv);
	free(cert);
	free(key);
}

/* The ClientHello carries the server name (SNI) in clear text: present for DNS names only. */
static void test_sni(void **state)
{
	struct gs_tls *c;
	struct gs_buf hello;

	gs_buf_init(&hello, 0);
	assert_int_equal(gs_tls_client_new(P.client, "localhost", &c), 0);
	assert_int_equal(gs_tls_handshake(c), 0);
	assert_int_equal(gs_tls_flush(c, &hello), 0);
	assert_non_null(memmem(hello.data, hello.len, "localhost", 9));
	assert_non_null(memmem(hello.data, hello.len, "http/1.1", 8)); /* ALPN */
	gs_tls_free(c);

	gs_buf_reset(&hello);
	assert_int_equal(gs_tls_client_new(P.client, "127.0.0.1", &c), 0);
	assert_int_equal(gs_tls_handshake(c), 0);
	assert_int_equal(gs_tls_flush(c, &hello), 0);
	assert_true(hello.len > 50);
	assert_null(memmem(hello.data, hello.len, "127.0.0.1", 9));
	gs_tls_free(c);
	gs_buf_free(&hello);
}

static void test_expired(void **state)
{
	static const char *const names[] = {"localhost", NULL};
	int64_t now = time(NULL);
	char *key, *cert = gen("localhost", names, 0, now - 2 * 86400, now - 86400, P.ca, P.ca_key, &key);
	struct gs_tls_config *srv = server_config(cert, key);
	expect_refused(P.client, srv, "localhost", "certificate has expired");
	gs_tls_config_unref(srv);
	free(cert);
	free(key);
}

static void test_insecure_skip_verify(void **state)
{
	struct gs_tls_config *ins = client_config(NULL, 1);
	struct gs_tls_config *ins_ca = client_config(P.ca2, 1);
	expect_ok(ins, P.server, "wrong.example");
	expect_ok(ins, P.server, "10.9.8.7");
	expect_ok(ins_ca, P.server, "localhost");
	/* No name at all is allowed only when nothing is verified. */
	struct gs_tls *c;
	assert_int_equal(gs_tls_client_new(ins, NULL, &c), 0);
	gs_tls_free(c);
	assert_int_equal(gs_tls_client_new(P.client, NULL, &c), -EINVAL);
	assert_null(c);
	assert_int_equal(gs_tls_client_new(P.client, "", &c), -EINVAL);
	gs_tls_config_unref(ins);
	gs_tls_config_unref(ins_ca);
}

/* ---- a raw mbedTLS client, for peers our own client cannot be -------------------------------- */

struct raw {
	mbedtls_entropy_context entropy;
	mbedtls_ctr_drbg_context drbg;
	mbedtls_ssl_config conf;
	mbedtls_ssl_context ssl;
	mbedtls_x509_crt crt; /* a raw server's own */
	mbedtls_pk_context pk;
	struct gs_buf in, out;
	size_t in_off;
};

static int raw_send(void *ctx, const unsigned char *p, size_t n)
{
	struct raw *r = ctx;
	return gs_buf_append(&r->out, p, n) == 0 ? (int)n : MBEDTLS_ERR_SSL_ALLOC_FAILED;
}

static int raw_recv(void *ctx, unsigned char *p, size_t n)
{
	struct raw *r = ctx;
	size_t avail = r->in.len - r->in_off;
	if (!avail)
		return MBEDTLS_ERR_SSL_WANT_READ;
	if (n > avail)
		n = avail;
	memcpy(p, r->in.data + r->in_off, n);
	r->in_off += n;
	return (int)n;
}

/* The part every raw peer shares: all contexts initialised, a seeded DRBG, mbedTLS's default
 * configuration for the endpoint (MBEDTLS_SSL_IS_CLIENT or _SERVER). */
static void raw_setup(struct raw *r, int endpoint)
{
	memset(r, 0, sizeof(*r));
	mbedtls_entropy_init(&r->entropy);
	mbedtls_ctr_drbg_init(&r->drbg);
	mbedtls_ssl_config_init(&r->conf);
	mbedtls_ssl_init(&r->ssl);
	mbedtls_x509_crt_init(&r->crt);
	mbedtls_pk_init(&r->pk);
	gs_buf_init(&r->in, 0);
	gs_buf_init(&r->out, 0);
	assert_int_equal(mbedtls_ctr_drbg_seed(&r->drbg, mbedtls_entropy_func, &r->entropy, NULL, 0), 0);
	assert_int_equal(mbedtls_ssl_config_defaults(&r->conf, endpoint, MBEDTLS_SSL_TRANSPORT_STREAM,
						     MBEDTLS_SSL_PRESET_DEFAULT),
			 0);
	mbedtls_ssl_conf_rng(&r->conf, mbedtls_ctr_drbg_random, &r->drbg);
}

static void raw_init(struct raw *r, int min_minor, int max_minor, const int *suites, const char **alpn)
{
	raw_setup(r, MBEDTLS_SSL_IS_CLIENT);
	mbedtls_ssl_conf_authmode(&r->conf, MBEDTLS_SSL_VERIFY_NONE);
	mbedtls_ssl_conf_min_version(&r->conf, 3, min_minor);
	mbedtls_ssl_conf_max_version(&r->conf, 3, max_minor);
	if (suites)
		mbedtls_ssl_conf_ciphersuites(&r->conf, suites);
	if (alpn)
		assert_int_equal(mbedtls_ssl_conf_alpn_protocols(&r->conf, alpn), 0);
	assert_int_equal(mbedtls_ssl_setup(&r->ssl, &r->conf), 0);
	mbedtls_ssl_set_bio(&r->ssl, r, raw_send, raw_recv, NULL);
}

static void raw_free(struct raw *r);

/* A raw TLS 1.2 server with mbedTLS's defaults and no session tickets (nor cache): it resumes nothing. */
static void raw_server_init(struct raw *r, const char *cert, const char *key)
{
	static const char *alpn[] = {"http/1.1", NULL};
	raw_setup(r, MBEDTLS_SSL_IS_SERVER);
	assert_int_equal(mbedtls_x509_crt_parse(&r->crt, (const unsigned char *)cert, strlen(cert) + 1), 0);
	assert_int_equal(mbedtls_pk_parse_key(&r->pk, (const unsigned char *)key, strlen(key) + 1, NULL, 0), 0);
	assert_int_equal(mbedtls_ssl_conf_own_cert(&r->conf, &r->crt, &r->pk), 0);
	assert_int_equal(mbedtls_ssl_conf_alpn_protocols(&r->conf, alpn), 0);
	assert_int_equal(mbedtls_ssl_setup(&r->ssl, &r->conf), 0);
	mbedtls_ssl_set_bio(&r->ssl, r, raw_send, raw_recv, NULL);
}

/* The raw peer's input gets what our session t wrote. */
static void raw_take(struct raw *r, struct gs_tls *t)
{
	struct gs_buf b;
	gs_buf_init(&b, 0);
	assert_int_equal(gs_tls_flush(t, &b), 0);
	if (b.len)
		assert_int_equal(gs_buf_append(&r->in, b.data, b.len), 0);
	gs_buf_free(&b);
}

/* Our session t gets what the raw peer wrote. */
static void raw_give(struct raw *r, struct gs_tls *t)
{
	if (r->out.len)
		assert_int_equal(gs_tls_feed(t, r->out.data, r->out.len), 0);
	gs_buf_reset(&r->out);
}

/* Handshakes a client session with the raw server; returns the client's gs_tls_handshake() result. */
static int raw_server_handshake(struct gs_tls *c, struct raw *r, int *rr)
{
	int rc = 0;
	*rr = MBEDTLS_ERR_SSL_WANT_READ;
	for (int i = 0; i < 20; i++) {
		if (rc == 0)
			rc = gs_tls_handshake(c);
		raw_take(r, c);
		if (*rr == MBEDTLS_ERR_SSL_WANT_READ)
			*rr = mbedtls_ssl_handshake(&r->ssl);
		raw_give(r, c);
		if (rc != 0 && *rr != MBEDTLS_ERR_SSL_WANT_READ)
			break;
	}
	return rc;
}

static void test_resume_no_ticket_server(void **state)
{
	struct gs_tls_config *srv = server_config(P.leaf, P.leaf_key), *cli = client_config(P.ca, 0);
	struct gs_tls *c;
	struct raw r;
	int rr;

	assert_int_equal(connect_resumed(cli, srv, "localhost"), 0);
	assert_true(gs_tls_config_resumable(cli, "localhost"));
	/* A server that knows no tickets ignores the one offered: a full handshake (verified: the same
	 * server with an untrusted certificate is refused below). */
	raw_server_init(&r, P.leaf, P.leaf_key);
	assert_int_equal(gs_tls_client_new(cli, "localhost", &c), 0);
	assert_int_equal(raw_server_handshake(c, &r, &rr), 1);
	assert_int_equal(rr, 0);
	assert_false(gs_tls_resumed(c));
	gs_tls_free(c);
	raw_free(&r);
	expect_stats(cli, 2, 0);
	/* That full handshake gave no ticket: nothing is saved any more, so nothing stale is offered. */
	assert_false(gs_tls_config_resumable(cli, "localhost"));
	assert_int_equal(connect_resumed(cli, srv, "localhost"), 0);
	assert_int_equal(connect_resumed(cli, srv, "localhost"), 1);
	expect_stats(cli, 3, 1);

	/* A handshake that offered the saved session and failed drops it: the next one is full. */
	assert_true(gs_tls_config_resumable(cli, "localhost"));
	assert_int_equal(gs_tls_client_new(cli, "localhost", &c), 0);
	assert_int_equal(gs_tls_handshake(c), 0);
	assert_int_equal(gs_tls_feed(c, "HTTP/1.1 400 Bad Request\r\n\r\n", 28), 0);
	assert_int_equal(gs_tls_handshake(c), -EPROTO);
	gs_tls_free(c);
	assert_false(gs_tls_config_resumable(cli, "localhost"));
	assert_int_equal(connect_resumed(cli, srv, "localhost"), 0);
	expect_stats(cli, 4, 1);

	/* The same raw server with a certificate the client does not trust, while a ticket is offered:
	 * refused. */
	static const char *const names[] = {"localhost", NULL};
	int64_t now = time(NULL);
	char *key, *cert = gen("localhost", names, 0, now - 60, now + 3600, P.ca2, P.ca2_key, &key);
	raw_server_init(&r, cert, key);
	assert_int_equal(gs_tls_client_new(cli, "localhost", &c), 0);
	assert_int_equal(raw_server_handshake(c, &r, &rr), -EACCES);
	assert_non_null(strstr(gs_tls_error(c), "certificate not trusted by the configured CA"));
	gs_tls_free(c);
	raw_free(&r);
	free(cert);
	free(key);
	gs_tls_config_unref(srv);
	gs_tls_config_unref(cli);
}

static void raw_free(struct raw *r)
{
	mbedtls_ssl_free(&r->ssl);
	mbedtls_x509_crt_free(&r->crt);
	mbedtls_pk_free(&r->pk);
	mbedtls_ssl_config_free(&r->conf);
	mbedtls_ctr_drbg_free(&r->drbg);
	mbedtls_entropy_free(&r->entropy);
	gs_buf_free(&r->in);
	gs_buf_free(&r->out);
}

/* Handshakes the raw client with a server session; returns mbedtls_ssl_handshake()'s last result. */
static int raw_handshake(struct raw *r, struct gs_tls *s, int *rs)
{
	int rr = MBEDTLS_ERR_SSL_WANT_READ;
	*rs = 0;
	for (int i = 0; i < 20; i++) {
		if (rr == MBEDTLS_ERR_SSL_WANT_READ)
			rr = mbedtls_ssl_handshake(&r->ssl);
		raw_give(r, s);
		if (*rs == 0)
			*rs = gs_tls_handshake(s);
		raw_take(r, s);
		if (rr != MBEDTLS_ERR_SSL_WANT_READ && *rs != 0)
			break;
	}
	return rr;
}

/* A raw client (raw_init's parameters) handshakes with a new session *s of P.server; returns
 * raw_handshake()'s result. raw_end() frees both. */
static int raw_connect(struct raw *r, int min_minor, int max_minor, const int *suites, const char **alpn,
		       struct gs_tls **s, int *rs)
{
	raw_init(r, min_minor, max_minor, suites, alpn);
	assert_int_equal(gs_tls_server_new(P.server, s), 0);
	return raw_handshake(r, *s, rs);
}

static void raw_end(struct raw *r, struct gs_tls *s)
{
	gs_tls_free(s);
	raw_free(r);
}

static void test_raw_client_accepted(void **state)
{
	static const char *alpn[] = {"h2", "http/1.1", NULL};
	struct raw r;
	struct gs_tls *s;
	int rs;

	/* The harness itself works: a TLS 1.0-1.2 client with default suites gets TLS 1.2 and ALPN. */
	assert_int_equal(raw_connect(&r, 1, 3, NULL, alpn, &s, &rs), 0);
	assert_int_equal(rs, 1);
	assert_string_equal(mbedtls_ssl_get_version(&r.ssl), "TLSv1.2");
	assert_string_equal(mbedtls_ssl_get_alpn_protocol(&r.ssl), "http/1.1");
	raw_end(&r, s);

	/* No ALPN offered is fine too. */
	assert_int_equal(raw_connect(&r, 3, 3, NULL, NULL, &s, &rs), 0);
	assert_int_equal(rs, 1);
	assert_null(mbedtls_ssl_get_alpn_protocol(&r.ssl));
	raw_end(&r, s);
}

static void test_tls11_refused(void **state)
{
	struct raw r;
	struct gs_tls *s;
	int rs, rr;

	rr = raw_connect(&r, 1, 2, NULL, NULL, &s, &rs);
	assert_int_equal(rs, -EPROTO);
	assert_non_null(strstr(gs_tls_error(s), "TLS 1.2"));
	assert_int_equal(rr, MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE);
	raw_end(&r, s);
}

static void test_weak_suites_refused(void **state)
{
	static const int cbc[] = {
		MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
		MBEDTLS_TLS_RSA_WITH_AES_128_GCM_SHA256,         MBEDTLS_TLS_ECDH_ECDSA_WITH_AES_128_GCM_SHA256,
		MBEDTLS_TLS_DHE_RSA_WITH_AES_128_GCM_SHA256,     0,
	};
	struct raw r;
	struct gs_tls *s;
	int rs, rr;

	rr = raw_connect(&r, 3, 3, cbc, NULL, &s, &rs);
	assert_int_equal(rs, -EPROTO);
	assert_non_null(strstr(gs_tls_error(s), "no cipher suite in common"));
	assert_int_not_equal(rr, 0);
	raw_end(&r, s);
}

/* A peer that offers only AES-GCM (a server keeping its own order answers the same way) gets it. */
static void test_aes_gcm_peer_accepted(void **state)
{
	static const int gcm[] = {MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, 0};
	struct raw r;
	struct gs_tls *s;
	int rs;

	assert_int_equal(raw_connect(&r, 3, 3, gcm, NULL, &s, &rs), 0);
	assert_int_equal(rs, 1);
	assert_string_equal(gs_tls_ciphersuite(s), "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256");
	raw_end(&r, s);
}

static void test_alpn_mismatch_refused(void **state)
{
	static const char *h2[] = {"h2", NULL};
	struct raw r;
	struct gs_tls *s;
	int rs;

	assert_int_not_equal(raw_connect(&r, 3, 3, NULL, h2, &s, &rs), 0);
	assert_int_equal(rs, -EPROTO);
	raw_end(&r, s);
}

/* ---- configs --------------------------------------------------------------------------------- */

static void test_config_refcount(void **state)
{
	static const char *const names[] = {"localhost", NULL};
	int64_t now = time(NULL);
	char *key, *cert = gen("localhost", names, 0, now - 60, now + 3600, P.ca, P.ca_key, &key);
	struct gs_tls_config *srv = server_config(cert, key), *cli = client_config(P.ca, 0);
	struct gs_tls *c, *s;
	char buf[8];
	int rc, rs;

	assert_int_equal(gs_tls_server_new(srv, &s), 0);
	assert_int_equal(gs_tls_client_new(cli, "localhost", &c), 0);
	/* Swapped out, as on a reload: the sessions keep both configs alive. */
	gs_tls_config_unref(srv);
	gs_tls_config_unref(cli);
	free(cert);
	free(key);
	handshake(c, s, &rc, &rs);
	assert_int_equal(rc, 1);
	assert_int_equal(rs, 1);
	assert_int_equal(gs_tls_write(s, "ok", 2), 0);
	transfer(s, c);
	assert_int_equal(gs_tls_read(c, buf, sizeof(buf)), 2);
	gs_tls_free(c); /* frees cli */
	gs_tls_free(s); /* frees srv */

	gs_tls_config_ref(P.server);
	gs_tls_config_unref(P.server);
	gs_tls_config_unref(NULL);
	gs_tls_free(NULL);
}

static void test_config_errors(void **state)
{
	struct gs_tls_client_opts o = {0};
	struct gs_tls_config *c = (void *)1;
	char err[256];
	struct gs_tls *t;

	assert_int_equal(gs_tls_client_config_new(&o, &c, err, sizeof(err)), -EINVAL);
	assert_null(c);
	assert_non_null(strstr(err, "certificate-authority"));
	o.ca = "hello";
	o.ca_len = 5;
	assert_int_equal(gs_tls_client_config_new(&o, &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "certificate-authority: no PEM certificate found");
	o.ca = P.ca;
	o.ca_len = strlen(P.ca);
	o.cert = P.leaf;
	o.cert_len = strlen(P.leaf);
	assert_int_equal(gs_tls_client_config_new(&o, &c, err, sizeof(err)), -EINVAL);
	o.key = P.leaf_key;
	o.key_len = strlen(P.leaf_key);
	assert_int_equal(gs_tls_client_config_new(&o, &c, err, sizeof(err)), 0);
	assert_int_equal(gs_tls_config_not_after(c), 0);
	assert_int_equal(gs_tls_server_new(c, &t), -EINVAL);
	gs_tls_config_unref(c);

	/* Key of another certificate. */
	assert_int_equal(
		gs_tls_server_config_new(P.leaf, strlen(P.leaf), P.ca_key, strlen(P.ca_key), &c, err, sizeof(err)),
		-EINVAL);
	assert_string_equal(err, "certificate and key do not match");
	assert_int_equal(gs_tls_server_config_new(P.leaf, strlen(P.leaf), "junk", 4, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "key: cannot parse private key"));
	assert_int_equal(gs_tls_server_config_new(P.leaf_key, strlen(P.leaf_key), P.leaf_key, strlen(P.leaf_key), &c,
						  err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "certificate: no PEM certificate found");
	assert_int_equal(gs_tls_client_new(P.server, "localhost", &t), -EINVAL);
}

/* PEM with and without its NUL counted, DER, and a chain (leaf + CA). */
static void test_config_encodings(void **state)
{
	struct gs_tls_config *c;
	char err[256], chain[8192];
	mbedtls_x509_crt crt;
	mbedtls_pk_context pk;
	unsigned char kder[512];
	int klen;

	assert_int_equal(gs_tls_server_config_new(P.leaf, strlen(P.leaf) + 1, P.leaf_key, strlen(P.leaf_key) + 1, &c,
						  err, sizeof(err)),
			 0);
	expect_ok(P.client, c, "localhost");
	gs_tls_config_unref(c);

	mbedtls_x509_crt_init(&crt);
	mbedtls_pk_init(&pk);
	assert_int_equal(mbedtls_x509_crt_parse(&crt, (const unsigned char *)P.leaf, strlen(P.leaf) + 1), 0);
	assert_int_equal(mbedtls_pk_parse_key(&pk, (const unsigned char *)P.leaf_key, strlen(P.leaf_key) + 1, NULL, 0),
			 0);
	klen = mbedtls_pk_write_key_der(&pk, kder, sizeof(kder));
	assert_true(klen > 0);
	assert_int_equal(gs_tls_server_config_new((const char *)crt.raw.p, crt.raw.len,
						  (const char *)kder + sizeof(kder) - klen, (size_t)klen, &c, err,
						  sizeof(err)),
			 0);
	expect_ok(P.client, c, "localhost");
	gs_tls_config_unref(c);
	mbedtls_x509_crt_free(&crt);
	mbedtls_pk_free(&pk);

	snprintf(chain, sizeof(chain), "%s%s", P.leaf, P.ca);
	c = server_config(chain, P.leaf_key);
	expect_ok(P.client, c, "localhost");
	gs_tls_config_unref(c);

	/* The CA as DER, not NUL-terminated. */
	mbedtls_x509_crt_init(&crt);
	assert_int_equal(mbedtls_x509_crt_parse(&crt, (const unsigned char *)P.ca, strlen(P.ca) + 1), 0);
	struct gs_tls_client_opts o = {.ca = (const char *)crt.raw.p, .ca_len = crt.raw.len};
	assert_int_equal(gs_tls_client_config_new(&o, &c, err, sizeof(err)), 0);
	expect_ok(c, P.server, "localhost");
	gs_tls_config_unref(c);
	mbedtls_x509_crt_free(&crt);
}

/* ---- generation ------------------------------------------------------------------------------ */

static void test_not_after(void **state)
{
	static const char *const names[] = {"a.example", NULL};
	const int64_t t1 = 2000000000, t2 = 2600000000; /* 2033 (UTCTime), 2052 (GeneralizedTime) */
	char *key, *cert;
	struct gs_tls_config *c;

	cert = gen("a", names, 0, 1700000000, t1, P.ca, P.ca_key, &key);
	c = server_config(cert, key);
	assert_int_equal(gs_tls_config_not_after(c), t1);
	gs_tls_config_unref(c);
	free(cert);
	free(key);
	cert = gen("a", names, 0, 1700000000, t2, P.ca, P.ca_key, &key);
	c = server_config(cert, key);
	assert_int_equal(gs_tls_config_not_after(c), t2);
	gs_tls_config_unref(c);
	free(cert);
	free(key);
	assert_int_equal(gs_tls_config_not_after(P.server), (int64_t)gs_tls_config_not_after(P.server));
}

static void test_generate_contents(void **state)
{
	static const char *const names[] = {"svc.ns.svc", "*.ns.svc", "10.0.0.1", "fd00::1", NULL};
	int64_t now = time(NULL);
	char *key, *cert = gen("svc, with comma", names, 0, now - 60, now + 3600, P.ca, P.ca_key, &key);
	mbedtls_x509_crt crt, ca;
	mbedtls_pk_context pk;
	uint32_t flags = 0;

	mbedtls_x509_crt_init(&crt);
	mbedtls_x509_crt_init(&ca);
	mbedtls_pk_init(&pk);
	assert_int_equal(mbedtls_x509_crt_parse(&crt, (const unsigned char *)cert, strlen(cert) + 1), 0);
	assert_int_equal(mbedtls_x509_crt_parse(&ca, (const unsigned char *)P.ca, strlen(P.ca) + 1), 0);
	assert_int_equal(mbedtls_pk_parse_key(&pk, (const unsigned char *)key, strlen(key) + 1, NULL, 0), 0);
	assert_true(mbedtls_pk_can_do(&pk, MBEDTLS_PK_ECDSA));
	assert_int_equal(mbedtls_pk_get_bitlen(&pk), 256);
	assert_int_equal(crt.sig_md, MBEDTLS_MD_SHA256);
	assert_int_equal(crt.version, 3);
	assert_int_equal(crt.ca_istrue, 0);
	assert_int_equal(crt.serial.len, 16);
	assert_true(crt.key_usage & MBEDTLS_X509_KU_DIGITAL_SIGNATURE);
	assert_false(crt.key_usage & MBEDTLS_X509_KU_KEY_CERT_SIGN);
	assert_int_equal(mbedtls_x509_crt_check_extended_key_usage(&crt, MBEDTLS_OID_SERVER_AUTH,
								   sizeof(MBEDTLS_OID_SERVER_AUTH) - 1),
			 0);
	assert_int_not_equal(mbedtls_x509_crt_check_extended_key_usage(&crt, MBEDTLS_OID_CLIENT_AUTH,
								       sizeof(MBEDTLS_OID_CLIENT_AUTH) - 1),
			     0);
	assert_int_equal(mbedtls_x509_crt_verify(&crt, &ca, NULL, "svc.ns.svc", &flags, NULL, NULL), 0);
	assert_int_equal(mbedtls_x509_crt_verify(&crt, &ca, NULL, "x.ns.svc", &flags, NULL, NULL), 0);
	assert_int_not_equal(mbedtls_x509_crt_verify(&crt, &ca, NULL, "svc.other", &flags, NULL, NULL), 0);
	char dn[128];
	assert_true(mbedtls_x509_dn_gets(dn, sizeof(dn), &crt.subject) > 0);
	assert_string_equal(dn, "CN=svc\\, with comma"); /* dn_gets escapes; the DER holds "svc, with comma" */
	assert_true(mbedtls_x509_dn_gets(dn, sizeof(dn), &crt.issuer) > 0);
	assert_string_equal(dn, "CN=Test CA");

	/* The IP entries are iPAddress SANs our client accepts. */
	struct gs_tls_config *srv = server_config(cert, key);
	expect_ok(P.client, srv, "10.0.0.1");
	expect_ok(P.client, srv, "fd00::1");
	expect_refused(P.client, srv, "10.0.0.2", "(its names: DNS:svc.ns.svc, DNS:*.ns.svc, IP:10.0.0.1, IP:fd00::1)");
	gs_tls_config_unref(srv);

	/* Two certificates get different serials. */
	char *key2, *cert2 = gen("svc", names, 0, now - 60, now + 3600, P.ca, P.ca_key, &key2);
	mbedtls_x509_crt crt2;
	mbedtls_x509_crt_init(&crt2);
	assert_int_equal(mbedtls_x509_crt_parse(&crt2, (const unsigned char *)cert2, strlen(cert2) + 1), 0);
	assert_memory_not_equal(crt.serial.p, crt2.serial.p, 16);
	mbedtls_x509_crt_free(&crt2);
	free(cert2);
	free(key2);

	mbedtls_x509_crt_free(&crt);
	mbedtls_x509_crt_free(&ca);
	mbedtls_pk_free(&pk);
	free(cert);
	free(key);
}

static void test_generate_errors(void **state)
{
	static const char *const bad[] = {"ok.example", "bad name", NULL};
	struct gs_tls_cert_req req = {"x", NULL, 0, 1000, 2000, 0};
	char err[256], *cert = (void *)1, *key = (void *)1;

	assert_int_equal(gs_tls_generate(&req, P.ca, NULL, &cert, &key, err, sizeof(err)), -EINVAL);
	assert_null(cert);
	assert_null(key);
	req.not_after = 1000;
	assert_int_equal(gs_tls_generate(&req, NULL, NULL, &cert, &key, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not_after"));
	req.not_after = 2000;
	req.dns_names = bad;
	assert_int_equal(gs_tls_generate(&req, NULL, NULL, &cert, &key, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad name"));
	req.dns_names = NULL;
	req.common_name = "";
	assert_int_equal(gs_tls_generate(&req, NULL, NULL, &cert, &key, err, sizeof(err)), -EINVAL);
	req.common_name = "x";
	/* The issuer must be a CA and its key must match. */
	assert_int_equal(gs_tls_generate(&req, P.leaf, P.leaf_key, &cert, &key, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a CA"));
	assert_int_equal(gs_tls_generate(&req, P.ca, P.ca2_key, &cert, &key, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "do not match"));
}

/* ---- against openssl(1) ---------------------------------------------------------------------- */

static void test_openssl_verify(void **state)
{
	char ca[128], leaf[128], ca2[128];

	if (!P.have_openssl)
		skip();
	snprintf(ca, sizeof(ca), "%s/ca.pem", P.dir);
	snprintf(ca2, sizeof(ca2), "%s/ca2.pem", P.dir);
	snprintf(leaf, sizeof(leaf), "%s/leaf.pem", P.dir);
	spit(ca, P.ca);
	spit(ca2, P.ca2);
	spit(leaf, P.leaf);
	assert_int_equal(sh("openssl verify -x509_strict -purpose sslserver -CAfile %s %s >/dev/null 2>&1", ca, leaf),
			 0);
	assert_int_not_equal(sh("openssl verify -CAfile %s %s >/dev/null 2>&1", ca2, leaf), 0);
	assert_int_equal(sh("openssl verify -x509_strict -CAfile %s %s >/dev/null 2>&1", ca, ca), 0);
	assert_int_equal(sh("openssl x509 -in %s -noout -text | grep -q 'DNS:localhost, IP Address:127.0.0.1, "
			    "IP Address:0:0:0:0:0:0:0:1'",
			    leaf),
			 0);
	assert_int_equal(sh("openssl x509 -in %s -noout -text | grep -q 'TLS Web Server Authentication'", leaf), 0);
	assert_int_equal(sh("openssl x509 -in %s -noout -text | grep -q 'CA:TRUE'", ca), 0);
}

/* An RSA certificate with IP SANs written by openssl: our SAN walker against another encoder, and
 * the ECDHE-RSA suites. */
static void test_openssl_rsa_ip_cert(void **state)
{
	char cert[128], key[128];
	char *c, *k;

	if (!P.have_openssl)
		skip();
	snprintf(cert, sizeof(cert), "%s/rsa.pem", P.dir);
	snprintf(key, sizeof(key), "%s/rsa.key", P.dir);
	assert_int_equal(sh("openssl req -x509 -newkey rsa:2048 -nodes -keyout %s -out %s -days 2 -subj /CN=rsa-ip "
			    "-addext subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1 >/dev/null 2>&1",
			    key, cert),
			 0);
	c = slurp(cert);
	k = slurp(key);
	assert_non_null(c);
	assert_non_null(k);

	struct gs_tls_config *srv = server_config(c, k), *cli = client_config(c, 0);
	struct gs_tls *tc, *ts;
	int rs;
	assert_int_equal(connect_to(cli, srv, "127.0.0.1", &tc, &ts, &rs), 1);
	assert_string_equal(gs_tls_ciphersuite(tc), "TLS-ECDHE-RSA-WITH-CHACHA20-POLY1305-SHA256");
	gs_tls_free(tc);
	gs_tls_free(ts);
	expect_ok(cli, srv, "::1");
	expect_ok(cli, srv, "localhost");
	expect_refused(
		cli, srv, "127.0.0.2",
		"certificate does not name IP address 127.0.0.2 (its names: DNS:localhost, IP:127.0.0.1, IP:::1)");
	gs_tls_config_unref(srv);
	gs_tls_config_unref(cli);
	free(c);
	free(k);
}

/* A leaf issued by an openssl CA whose name has several attributes (and a comma): the issuer name
 * must be reproduced exactly for openssl to build the chain. */
static void test_openssl_ca_issues(void **state)
{
	static const char *const names[] = {"localhost", NULL};
	char cap[128], keyp[128], leafp[128];
	int64_t now = time(NULL);

	if (!P.have_openssl)
		skip();
	snprintf(cap, sizeof(cap), "%s/oca.pem", P.dir);
	snprintf(keyp, sizeof(keyp), "%s/oca.key", P.dir);
	snprintf(leafp, sizeof(leafp), "%s/oleaf.pem", P.dir);
	assert_int_equal(sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout %s -out %s "
			    "-days 2 -subj '/C=US/O=Test, Inc/OU=One/OU=Two/CN=Outside CA' "
			    "-addext keyUsage=critical,keyCertSign,cRLSign >/dev/null 2>&1",
			    keyp, cap),
			 0);
	char *ca = slurp(cap), *cakey = slurp(keyp), *key;
	char *leaf = gen("localhost", names, 0, now - 60, now + 3600, ca, cakey, &key);
	spit(leafp, leaf);
	assert_int_equal(sh("openssl verify -x509_strict -purpose sslserver -CAfile %s %s >/dev/null 2>&1", cap, leafp),
			 0);
	struct gs_tls_config *srv = server_config(leaf, key), *cli = client_config(ca, 0);
	expect_ok(cli, srv, "localhost");
	gs_tls_config_unref(srv);
	gs_tls_config_unref(cli);
	free(ca);
	free(cakey);
	free(leaf);
	free(key);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handshake_and_data),
		cmocka_unit_test(test_large_write),
		cmocka_unit_test(test_feed_cap),
		cmocka_unit_test(test_garbage_input),
		cmocka_unit_test(test_close_notify),
		cmocka_unit_test(test_resume),
		cmocka_unit_test(test_resume_refused),
		cmocka_unit_test(test_resume_same_config_and_name_only),
		cmocka_unit_test(test_resume_no_ticket_server),
		cmocka_unit_test(test_client_certificate_required),
		cmocka_unit_test(test_wrong_ca),
		cmocka_unit_test(test_dns_mismatch),
		cmocka_unit_test(test_ip_literals),
		cmocka_unit_test(test_sni),
		cmocka_unit_test(test_expired),
		cmocka_unit_test(test_insecure_skip_verify),
		cmocka_unit_test(test_raw_client_accepted),
		cmocka_unit_test(test_tls11_refused),
		cmocka_unit_test(test_weak_suites_refused),
		cmocka_unit_test(test_aes_gcm_peer_accepted),
		cmocka_unit_test(test_alpn_mismatch_refused),
		cmocka_unit_test(test_config_refcount),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_config_encodings),
		cmocka_unit_test(test_not_after),
		cmocka_unit_test(test_generate_contents),
		cmocka_unit_test(test_generate_errors),
		cmocka_unit_test(test_openssl_verify),
		cmocka_unit_test(test_openssl_rsa_ip_cert),
		cmocka_unit_test(test_openssl_ca_issues),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
