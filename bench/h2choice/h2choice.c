/*
 * h2choice: the measurement behind the HTTP/2 library choice (docs/decisions.md, "HTTP/2 for the gRPC
 * client"). N unary gRPC calls, one after the other on one connection, over a unix socket, to the test
 * peer (tests/grpc_peer.h, nghttp2 server side) running in a child process; prints the client process's
 * CPU time (user + sys) and wall time. Two clients doing the same thing:
 *   nghttp2  the library directly (blocking socket; the daemon's client drives it from libuv instead)
 *   curl     libcurl's easy interface, HTTP/2 with prior knowledge, CURLOPT_UNIX_SOCKET_PATH (a fresh
 *            connection per call: see run_curl)
 * Built and run by bench/h2choice/run.sh (not part of `make all`).
 */
#include <curl/curl.h>
#include <nghttp2/nghttp2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "grpc_peer.h"

static const uint8_t req_msg[] = {0, 0, 0, 0, 0}; /* an empty ListPodResourcesRequest, framed */
static uint8_t reply[2048];

/* ---- nghttp2 ---------------------------------------------------------------------------------- */
struct h2c {
	int fd, done;
	size_t got;
	char status[8];
};

static ssize_t h2c_send(nghttp2_session *s, const uint8_t *d, size_t n, int fl, void *ud)
{
	return send(((struct h2c *)ud)->fd, d, n, MSG_NOSIGNAL);
}
static int h2c_data(nghttp2_session *s, uint8_t fl, int32_t id, const uint8_t *d, size_t n, void *ud)
{
	((struct h2c *)ud)->got += n;
	return 0;
}
static int h2c_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *nm, size_t nl, const uint8_t *v,
		      size_t vl, uint8_t fl, void *ud)
{
	if (nl == 11 && !memcmp(nm, "grpc-status", 11))
		snprintf(((struct h2c *)ud)->status, 8, "%.*s", (int)vl, v);
	return 0;
}
static int h2c_close(nghttp2_session *s, int32_t id, uint32_t ec, void *ud)
{
	((struct h2c *)ud)->done = 1;
	return 0;
}
static ssize_t h2c_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *fl,
			nghttp2_data_source *src, void *ud)
{
	memcpy(buf, req_msg, sizeof req_msg);
	*fl |= NGHTTP2_DATA_FLAG_EOF;
	return sizeof req_msg;
}

static int run_nghttp2(const char *path, int n)
{
	struct h2c h = {0};
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	h.fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (connect(h.fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		return -1;
	nghttp2_session_callbacks *cb;
	nghttp2_session *s;
	nghttp2_session_callbacks_new(&cb);
	nghttp2_session_callbacks_set_send_callback(cb, h2c_send);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, h2c_data);
	nghttp2_session_callbacks_set_on_header_callback(cb, h2c_header);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, h2c_close);
	nghttp2_session_client_new(&s, cb, &h);
	nghttp2_session_callbacks_del(cb);
	nghttp2_submit_settings(s, 0, NULL, 0);
	nghttp2_nv hd[] = {GP_NV(":method", "POST"), GP_NV(":scheme", "http"), GP_NV(":authority", "localhost"),
			   GP_NV(":path", "/v1.PodResourcesLister/List"), GP_NV("content-type", "application/grpc"),
			   GP_NV("te", "trailers")};
	nghttp2_data_provider dp = {.read_callback = h2c_body};
	for (int i = 0; i < n; i++) {
		h.done = 0, h.got = 0, h.status[0] = 0;
		nghttp2_submit_request(s, NULL, hd, 6, &dp, NULL);
		while (!h.done) {
			uint8_t buf[16384];
			nghttp2_session_send(s);
			ssize_t r = recv(h.fd, buf, sizeof buf, 0);
			if (r <= 0 || nghttp2_session_mem_recv(s, buf, (size_t)r) < 0)
				return -1;
		}
		if (strcmp(h.status, "0") || h.got != 5 + sizeof reply)
			return -1;
	}
	nghttp2_session_del(s);
	close(h.fd);
	return 0;
}

/* ---- libcurl ---------------------------------------------------------------------------------- */
static size_t curl_body(char *p, size_t sz, size_t n, void *ud)
{
	*(size_t *)ud += sz * n;
	return sz * n;
}
static size_t curl_header(char *p, size_t sz, size_t n, void *ud)
{
	if (sz * n >= 13 && !strncmp(p, "grpc-status: ", 13))
		snprintf(ud, 8, "%c", p[13]);
	return sz * n;
}

static int run_curl(const char *path, int n)
{
	CURL *e = curl_easy_init();
	struct curl_slist *hd = NULL;
	size_t got;
	char status[8];
	hd = curl_slist_append(hd, "content-type: application/grpc");
	hd = curl_slist_append(hd, "te: trailers");
	curl_easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH, path);
	curl_easy_setopt(e, CURLOPT_VERBOSE, (long)(getenv("H2CHOICE_VERBOSE") != NULL));
	curl_easy_setopt(e, CURLOPT_URL, "http://localhost/v1.PodResourcesLister/List");
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, hd);
	/* Debian bookworm's libcurl 7.88.1 fails the second request on a reused prior-knowledge HTTP/2
	 * connection ("Error in the HTTP2 framing layer": curl/curl#10634, fixed in 8.0 by #10643), so
	 * each call takes a fresh connection here (H2CHOICE_REUSE=1 shows the failure). */
	curl_easy_setopt(e, CURLOPT_FORBID_REUSE, (long)(getenv("H2CHOICE_REUSE") == NULL));
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, (const char *)req_msg);
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)sizeof req_msg);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, curl_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, &got);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, curl_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, status);
	for (int i = 0; i < n; i++) {
		got = 0, status[0] = 0;
		CURLcode cc = curl_easy_perform(e);
		if (cc != CURLE_OK || strcmp(status, "0") || got != 5 + sizeof reply) {
			fprintf(stderr, "curl: call %d: %s, grpc-status \"%s\", %zu bytes\n", i, curl_easy_strerror(cc), status, got);
			return -1;
		}
	}
	curl_slist_free_all(hd);
	curl_easy_cleanup(e);
	return 0;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "nghttp2";
	int n = argc > 2 ? atoi(argv[2]) : 10000;
	char path[] = "/tmp/h2choice.sock";
	memset(reply, 'r', sizeof reply);
	pid_t pid = fork();
	if (pid == 0) {
		static struct gp gp;
		gp.reply = reply, gp.reply_len = sizeof reply;
		if (gp_start(&gp, path, GP_OK) < 0)
			_exit(1);
		gp.reply = reply, gp.reply_len = sizeof reply;
		pause();
		_exit(0);
	}
	usleep(200 * 1000);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	struct rusage a, b;
	getrusage(RUSAGE_SELF, &a);
	double t0 = now();
	int rc = !strcmp(which, "curl") ? run_curl(path, n) : run_nghttp2(path, n);
	double t1 = now();
	getrusage(RUSAGE_SELF, &b);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	double cpu = (double)(b.ru_utime.tv_sec - a.ru_utime.tv_sec + b.ru_stime.tv_sec - a.ru_stime.tv_sec) +
		     (double)(b.ru_utime.tv_usec - a.ru_utime.tv_usec + b.ru_stime.tv_usec - a.ru_stime.tv_usec) / 1e6;
	printf("%-8s calls=%d rc=%d cpu=%.3fs (%.1f us/call) wall=%.3fs maxrss=%ldKiB\n", which, n, rc, cpu,
	       cpu * 1e6 / n, t1 - t0, b.ru_maxrss);
	return rc ? 1 : 0;
}
