/*
 * grpc_peer.h: a small gRPC server over HTTP/2 (nghttp2's server side) on a unix socket, in a thread of
 * its own, for tests (tests/unit/test_grpc.c) and the HTTP/2 library measurement (bench/h2choice/).
 * It is the real peer the client talks to: a real socket, a real HTTP/2 session, real frames.
 *
 * It accepts connections one at a time and answers every request by its mode:
 *   GP_OK       200, application/grpc, the reply message (5-byte prefix + gp->reply), grpc-status 0
 *   GP_STATUS   trailers-only: 200, grpc-status gp->status, grpc-message gp->message
 *   GP_STALL    reads the request, never answers
 *   GP_GARBAGE  writes bytes that are not HTTP/2 as soon as it accepts, then closes
 *   GP_HANGUP   closes the connection once a request arrived (the peer is gone mid-call)
 *   GP_BIG      a reply whose prefix announces gp->big_len bytes, then some of them
 *   GP_HTTP404  :status 404, text/plain, no grpc-status
 *   GP_NOTRAILER 200, application/grpc, the reply message, and no trailers at all
 * What it saw is recorded for the test: gp->calls, the last :path, content-type, te and request body.
 */
#ifndef GS_TEST_GRPC_PEER_H
#define GS_TEST_GRPC_PEER_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

enum gp_mode { GP_OK, GP_STATUS, GP_STALL, GP_GARBAGE, GP_HANGUP, GP_BIG, GP_HTTP404, GP_NOTRAILER };

struct gp {
	char path[108];
	int lfd, stop[2], fd;
	pthread_t th;
	_Atomic int mode;
	const uint8_t *reply; /* borrowed; must outlive the peer */
	size_t reply_len;
	int status;
	const char *message;
	uint32_t big_len;
	/* seen */
	_Atomic unsigned calls, conns;
	char last_path[128], last_ct[64], last_te[32], last_timeout[32];
	uint8_t last_req[4096];
	size_t last_req_len;
	int hangup;
	void *outs[64]; /* replies of streams still open, freed with the session */
};

/* The reply being sent on one stream (its stream user data). */
struct gp_out {
	size_t len, off;
	int trailers;
	uint8_t data[];
};

static ssize_t gp__send(nghttp2_session *s, const uint8_t *data, size_t len, int flags, void *ud)
{
	struct gp *gp = ud;
	ssize_t n = send(gp->fd, data, len, MSG_NOSIGNAL);
	if (n < 0)
		return errno == EAGAIN ? NGHTTP2_ERR_WOULDBLOCK : NGHTTP2_ERR_CALLBACK_FAILURE;
	return n;
}

static void gp__copy(char *dst, size_t cap, const uint8_t *v, size_t len)
{
	if (len >= cap)
		len = cap - 1;
	memcpy(dst, v, len);
	dst[len] = '\0';
}

static int gp__on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t namelen,
			 const uint8_t *value, size_t valuelen, uint8_t flags, void *ud)
{
	struct gp *gp = ud;
	if (namelen == 5 && !memcmp(name, ":path", 5))
		gp__copy(gp->last_path, sizeof gp->last_path, value, valuelen);
	else if (namelen == 12 && !memcmp(name, "content-type", 12))
		gp__copy(gp->last_ct, sizeof gp->last_ct, value, valuelen);
	else if (namelen == 2 && !memcmp(name, "te", 2))
		gp__copy(gp->last_te, sizeof gp->last_te, value, valuelen);
	else if (namelen == 12 && !memcmp(name, "grpc-timeout", 12))
		gp__copy(gp->last_timeout, sizeof gp->last_timeout, value, valuelen);
	return 0;
}

static int gp__on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *ud)
{
	struct gp *gp = ud;
	size_t room = sizeof gp->last_req - gp->last_req_len;
	memcpy(gp->last_req + gp->last_req_len, data, len < room ? len : room);
	gp->last_req_len += len < room ? len : room;
	return 0;
}

static ssize_t gp__read_out(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
			    nghttp2_data_source *src, void *ud)
{
	struct gp_out *o = src->ptr;
	size_t n = o->len - o->off;
	if (n > len)
		n = len;
	memcpy(buf, o->data + o->off, n);
	o->off += n;
	if (o->off == o->len) {
		*flags |= NGHTTP2_DATA_FLAG_EOF;
		if (o->trailers) {
			nghttp2_nv tr[] = {{(uint8_t *)"grpc-status", (uint8_t *)"0", 11, 1, 0}};
			*flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
			nghttp2_submit_trailer(s, id, tr, 1);
		}
	}
	return (ssize_t)n;
}

#define GP_NV(n, v) {(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), 0}

static void gp__track(struct gp *gp, void *from, void *to)
{
	for (size_t i = 0; i < sizeof gp->outs / sizeof gp->outs[0]; i++)
		if (gp->outs[i] == from) {
			gp->outs[i] = to;
			return;
		}
}

static int gp__on_close(nghttp2_session *s, int32_t id, uint32_t ec, void *ud)
{
	void *o = nghttp2_session_get_stream_user_data(s, id);
	if (o)
		gp__track(ud, o, NULL);
	free(o);
	return 0;
}

static void gp__answer(struct gp *gp, nghttp2_session *s, int32_t id)
{
	int mode = atomic_load(&gp->mode);
	struct gp_out *o;
	nghttp2_data_provider dp = {.read_callback = gp__read_out};
	atomic_fetch_add(&gp->calls, 1);
	if (mode == GP_STALL)
		return;
	if (mode == GP_HANGUP) {
		gp->hangup = 1;
		return;
	}
	if (mode == GP_STATUS) {
		char st[16];
		snprintf(st, sizeof st, "%d", gp->status);
		nghttp2_nv h[] = {GP_NV(":status", "200"), GP_NV("content-type", "application/grpc"),
				  GP_NV("grpc-status", st), GP_NV("grpc-message", gp->message ? gp->message : "")};
		nghttp2_submit_response(s, id, h, 4, NULL);
		return;
	}
	o = calloc(1, sizeof *o + 5 + 65536); /* freed when the stream closes, or with the session */
	gp__track(gp, NULL, o);
	dp.source.ptr = o;
	nghttp2_session_set_stream_user_data(s, id, o);
	if (mode == GP_HTTP404) {
		static const char body[] = "not found\n";
		nghttp2_nv h[] = {GP_NV(":status", "404"), GP_NV("content-type", "text/plain")};
		memcpy(o->data, body, sizeof body - 1);
		o->len = sizeof body - 1;
		nghttp2_submit_response(s, id, h, 2, &dp);
		return;
	}
	uint32_t n = mode == GP_BIG ? gp->big_len : (uint32_t)gp->reply_len;
	o->data[0] = 0;
	o->data[1] = (uint8_t)(n >> 24), o->data[2] = (uint8_t)(n >> 16), o->data[3] = (uint8_t)(n >> 8);
	o->data[4] = (uint8_t)n;
	size_t body = mode == GP_BIG ? 1024 : gp->reply_len;
	if (body > 65536)
		body = 65536;
	if (mode == GP_BIG)
		memset(o->data + 5, 'x', body);
	else if (body)
		memcpy(o->data + 5, gp->reply, body);
	o->len = 5 + body;
	o->trailers = mode == GP_OK;
	nghttp2_nv h[] = {GP_NV(":status", "200"), GP_NV("content-type", "application/grpc")};
	nghttp2_submit_response(s, id, h, 2, &dp);
}

static int gp__on_frame(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
	struct gp *gp = ud;
	if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) && (f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		gp__answer(gp, s, f->hd.stream_id);
	return 0;
}

static int gp__on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
	struct gp *gp = ud;
	if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_REQUEST)
		gp->last_req_len = 0;
	return 0;
}

static void gp__serve(struct gp *gp)
{
	nghttp2_session_callbacks *cbs;
	nghttp2_session *s;
	nghttp2_session_callbacks_new(&cbs);
	nghttp2_session_callbacks_set_send_callback(cbs, gp__send);
	nghttp2_session_callbacks_set_on_header_callback(cbs, gp__on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, gp__on_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, gp__on_frame);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, gp__on_begin_headers);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs, gp__on_close);
	nghttp2_session_server_new(&s, cbs, gp);
	nghttp2_session_callbacks_del(cbs);
	nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, NULL, 0);
	gp->hangup = 0;
	for (;;) {
		if (nghttp2_session_send(s) != 0 || gp->hangup)
			break;
		struct pollfd p[2] = {{gp->fd, POLLIN, 0}, {gp->stop[0], POLLIN, 0}};
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		uint8_t buf[16384];
		ssize_t n = recv(gp->fd, buf, sizeof buf, 0);
		if (n <= 0 || nghttp2_session_mem_recv(s, buf, (size_t)n) < 0)
			break;
	}
	nghttp2_session_del(s);
	for (size_t i = 0; i < sizeof gp->outs / sizeof gp->outs[0]; i++) {
		free(gp->outs[i]);
		gp->outs[i] = NULL;
	}
}

static void *gp__main(void *arg)
{
	struct gp *gp = arg;
	for (;;) {
		struct pollfd p[2] = {{gp->lfd, POLLIN, 0}, {gp->stop[0], POLLIN, 0}};
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!p[0].revents)
			continue;
		gp->fd = accept(gp->lfd, NULL, NULL);
		if (gp->fd < 0)
			continue;
		atomic_fetch_add(&gp->conns, 1);
		if (atomic_load(&gp->mode) == GP_GARBAGE) {
			static const char junk[] = "HTTP/1.1 400 Bad Request\r\n\r\nthis is not HTTP/2 at all......";
			(void)!write(gp->fd, junk, sizeof junk - 1);
		} else {
			gp__serve(gp);
		}
		close(gp->fd);
		gp->fd = -1;
	}
	return NULL;
}

/* Listens on path (removed first) and starts the thread. 0 or -errno. */
static int gp_start(struct gp *gp, const char *path, enum gp_mode mode)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	memset(gp, 0, sizeof *gp);
	snprintf(gp->path, sizeof gp->path, "%s", path);
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	atomic_store(&gp->mode, mode);
	gp->fd = -1;
	unlink(path);
	gp->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (gp->lfd < 0 || bind(gp->lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(gp->lfd, 16) < 0 ||
	    pipe(gp->stop) < 0)
		return -errno;
	return -pthread_create(&gp->th, NULL, gp__main, gp);
}

static void gp_stop(struct gp *gp)
{
	(void)!write(gp->stop[1], "x", 1);
	pthread_join(gp->th, NULL);
	close(gp->lfd);
	close(gp->stop[0]);
	close(gp->stop[1]);
	unlink(gp->path);
}

#endif
