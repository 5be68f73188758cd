/*
 * tls.c: gpu-scheduler-tls-bench, the CPU of one TLS handshake, full against resumed (core/tls.h), with
 * both ends in memory: no sockets, no latency, only the work of each end.
 *
 *   build/gpu-scheduler-tls-bench [--rounds 500] [--rsa]
 *
 * Certificates: a CA and a leaf for "localhost", ECDSA P-256 made by gs_tls_generate(), or with --rsa
 * RSA-2048 made by openssl(1) as tests/cluster/cluster.sh makes the apiserver's (the daemon's case).
 * Each round pairs a new client session with a new server session and runs the handshake to the end,
 * then one request and answer of 1 byte each way:
 *   full     a new client config per round (made outside the timed calls): nothing to resume, so the
 *            ECDHE key exchange, the server's signature and the chain verification, as before resumption
 *   resumed  one client config: its first handshake (not counted) saves the session, every round
 *            resumes it from the server's ticket
 * The CPU (CLOCK_THREAD_CPUTIME_ID) of every call into each end is summed on its own side, so the
 * client's figure is what the daemon pays per connection and the server's what the apiserver pays.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/tls.h"

struct side {
	double cpu;      /* seconds */
	uint64_t bytes;  /* ciphertext sent */
};

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "tls-bench: %s\n", what);
	exit(2);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		die("cannot read a generated file");
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = calloc(1, (size_t)n + 1);
	if (!s || fread(s, 1, (size_t)n, f) != (size_t)n)
		die("cannot read a generated file");
	fclose(f);
	return s;
}

/* Moves from's pending ciphertext into to; counts it on from's side. */
static size_t transfer(struct gs_tls *from, struct side *fs, struct gs_tls *to, struct side *ts)
{
	struct gs_buf b;
	size_t n;
	double t0;

	gs_buf_init(&b, 0);
	t0 = cpu_now();
	if (gs_tls_flush(from, &b) < 0)
		die("flush");
	fs->cpu += cpu_now() - t0;
	n = b.len;
	fs->bytes += n;
	if (n) {
		t0 = cpu_now();
		if (gs_tls_feed(to, b.data, b.len) < 0)
			die("feed");
		ts->cpu += cpu_now() - t0;
	}
	gs_buf_free(&b);
	return n;
}

/* One connection: handshake, one byte each way, close_notify. Returns whether it resumed. */
static int one(struct gs_tls_config *ccfg, struct gs_tls_config *scfg, struct side *cs, struct side *ss)
{
	struct gs_tls *c, *s;
	int rc = 0, rs = 0, resumed;
	char buf[8];
	double t0;

	t0 = cpu_now();
	if (gs_tls_client_new(ccfg, "localhost", &c) < 0)
		die("client session");
	cs->cpu += cpu_now() - t0;
	t0 = cpu_now();
	if (gs_tls_server_new(scfg, &s) < 0)
		die("server session");
	ss->cpu += cpu_now() - t0;
	for (int i = 0; i < 20 && (rc == 0 || rs == 0); i++) {
		if (rc == 0) {
			t0 = cpu_now();
			rc = gs_tls_handshake(c);
			cs->cpu += cpu_now() - t0;
		}
		transfer(c, cs, s, ss);
		if (rs == 0) {
			t0 = cpu_now();
			rs = gs_tls_handshake(s);
			ss->cpu += cpu_now() - t0;
		}
		transfer(s, ss, c, cs);
	}
	if (rc != 1 || rs != 1) {
		fprintf(stderr, "tls-bench: handshake: client %d (%s), server %d (%s)\n", rc, gs_tls_error(c), rs,
			gs_tls_error(s));
		exit(2);
	}
	t0 = cpu_now();
	if (gs_tls_write(c, "q", 1) < 0)
		die("write");
	cs->cpu += cpu_now() - t0;
	transfer(c, cs, s, ss);
	t0 = cpu_now();
	if (gs_tls_read(s, buf, sizeof(buf)) != 1 || gs_tls_write(s, "a", 1) < 0)
		die("server read/write");
	ss->cpu += cpu_now() - t0;
	transfer(s, ss, c, cs);
	t0 = cpu_now();
	if (gs_tls_read(c, buf, sizeof(buf)) != 1)
		die("client read");
	resumed = gs_tls_resumed(c);
	gs_tls_close_notify(c);
	gs_tls_free(c);
	cs->cpu += cpu_now() - t0;
	t0 = cpu_now();
	gs_tls_free(s);
	ss->cpu += cpu_now() - t0;
	return resumed;
}

static struct gs_tls_config *client_config(const char *ca)
{
	struct gs_tls_client_opts o = { .ca = ca, .ca_len = strlen(ca) };
	struct gs_tls_config *c;
	char err[256];
	if (gs_tls_client_config_new(&o, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "tls-bench: client config: %s\n", err);
		exit(2);
	}
	return c;
}

static void report(const char *mode, int rounds, const struct side *cs, const struct side *ss)
{
	printf("%-8s %6d  %10.1f  %10.1f  %8.0f  %8.0f\n", mode, rounds, cs->cpu / rounds * 1e6, ss->cpu / rounds * 1e6,
	       (double)cs->bytes / rounds, (double)ss->bytes / rounds);
}

static void make_rsa(char **ca, char **cert, char **key)
{
	char dir[] = "/tmp/gs-tls-bench-XXXXXX", cmd[2048], path[256];

	if (!mkdtemp(dir))
		die("mkdtemp");
	snprintf(cmd, sizeof(cmd),
		 "cd %s && printf '%s' >x.cnf && "
		 "openssl req -x509 -new -nodes -newkey rsa:2048 -keyout ca.key -out ca.crt -days 2 -sha256 "
		 "-subj /CN=bench-ca -config x.cnf -extensions ca 2>/dev/null && "
		 "openssl req -new -nodes -newkey rsa:2048 -keyout leaf.key -out leaf.csr -subj /CN=localhost "
		 "-config x.cnf 2>/dev/null && "
		 "openssl x509 -req -in leaf.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -sha256 "
		 "-extfile x.cnf -extensions leaf -out leaf.crt 2>/dev/null",
		 dir,
		 "[req]\\ndistinguished_name=dn\\n[dn]\\n"
		 "[ca]\\nbasicConstraints=critical,CA:TRUE\\nkeyUsage=critical,keyCertSign,cRLSign\\n"
		 "[leaf]\\nbasicConstraints=CA:FALSE\\nkeyUsage=critical,digitalSignature,keyEncipherment\\n"
		 "extendedKeyUsage=serverAuth\\nsubjectAltName=DNS:localhost,IP:127.0.0.1\\n");
	if (system(cmd) != 0)
		die("openssl could not make the RSA certificates (is openssl(1) installed?)");
	snprintf(path, sizeof(path), "%s/ca.crt", dir);
	*ca = slurp(path);
	snprintf(path, sizeof(path), "%s/leaf.crt", dir);
	*cert = slurp(path);
	snprintf(path, sizeof(path), "%s/leaf.key", dir);
	*key = slurp(path);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "tls-bench: could not remove %s\n", dir);
}

static void make_ecdsa(char **ca, char **cert, char **key)
{
	static const char *const names[] = { "localhost", "127.0.0.1", NULL };
	int64_t now = time(NULL);
	struct gs_tls_cert_req careq = { "bench-ca", NULL, 1, now - 60, now + 86400, 0 };
	struct gs_tls_cert_req req = { "localhost", names, 0, now - 60, now + 86400, 0 };
	char err[256], *ca_key;

	if (gs_tls_generate(&careq, NULL, NULL, ca, &ca_key, err, sizeof(err)) < 0 ||
	    gs_tls_generate(&req, *ca, ca_key, cert, key, err, sizeof(err)) < 0) {
		fprintf(stderr, "tls-bench: certificates: %s\n", err);
		exit(2);
	}
	free(ca_key);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "rsa", no_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	int rounds = 500, rsa = 0, o, n_resumed = 0;
	char *ca, *cert, *key, err[256];
	struct gs_tls_config *scfg, *ccfg;
	struct side full_c = { 0 }, full_s = { 0 }, res_c = { 0 }, res_s = { 0 }, warm_c = { 0 }, warm_s = { 0 };

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o == 'r')
			rounds = atoi(optarg);
		else if (o == 'R')
			rsa = 1;
		else
			return 2;
	}
	if (rounds < 1)
		die("--rounds must be >= 1");
	if (rsa)
		make_rsa(&ca, &cert, &key);
	else
		make_ecdsa(&ca, &cert, &key);
	if (gs_tls_server_config_new(cert, strlen(cert), key, strlen(key), &scfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "tls-bench: server config: %s\n", err);
		return 2;
	}

	for (int i = 0; i < rounds; i++) {
		ccfg = client_config(ca);
		if (one(ccfg, scfg, &full_c, &full_s))
			die("a new config resumed");
		gs_tls_config_unref(ccfg);
	}
	ccfg = client_config(ca);
	if (one(ccfg, scfg, &warm_c, &warm_s))
		die("the first handshake of a config resumed");
	for (int i = 0; i < rounds; i++)
		n_resumed += one(ccfg, scfg, &res_c, &res_s);
	if (n_resumed != rounds)
		die("not every handshake resumed");
	gs_tls_config_unref(ccfg);
	gs_tls_config_unref(scfg);

	printf("# %s certificates, %d rounds; CPU per connection (handshake, 1 byte each way, close_notify)\n",
	       rsa ? "RSA-2048" : "ECDSA P-256", rounds);
	printf("mode     rounds  client_us   server_us   c->s_B    s->c_B\n");
	report("full", rounds, &full_c, &full_s);
	report("resumed", rounds, &res_c, &res_s);
	printf("client: resumed costs %.1f%% of full (%.1fx less)\n", 100.0 * res_c.cpu / full_c.cpu, full_c.cpu / res_c.cpu);
	free(ca);
	free(cert);
	free(key);
	return 0;
}
