/*
 * fuzz_grpc_client.c: libFuzzer driver for the gRPC client's reply path (src/core/grpc.h): the input is
 * what the server side of the unix socket sends (HTTP/2 frames, parsed by nghttp2, then our header,
 * data and stream-close handling and the gRPC framing). Per input: a client, one call, a real socket
 * whose server end (accepted here) writes the input and closes. Checks: done runs exactly once, never
 * inside gs_grpc_call; err is one the header lists; a success has a message within the cap and
 * grpc-status 0, a failure a reason; the client closes and frees everything (LeakSanitizer).
 *
 *   make fuzz FUZZ_NAMES=grpc_client FUZZ_SECONDS=60
 * Seeds (tests/fuzz/corpus/grpc_client/) are server replies written frame by frame with literal HPACK
 * headers: a reply with trailers, trailers-only, an HTTP 404.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/grpc.h"

#define CHECK(e) ((e) ? (void)0 : abort())
#define MAX_MSG 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uv_loop_t loop;
static int lfd = -1;
static char path[108];
static int dones, closed, in_call;

static void on_done(int err, const struct gs_grpc_reply *r, void *ud)
{
	CHECK(!in_call);
	CHECK(r && r->error && r->message);
	dones++;
	switch (err) {
	case 0:
		CHECK(r->status == 0 && r->len <= MAX_MSG && (r->len == 0 || r->msg) && r->error[0] == '\0');
		return;
	case GS_GRPC_ESTATUS:
		CHECK(r->status > 0);
		break;
	case -ECONNRESET: case -ETIMEDOUT: case -E2BIG: case -EPROTO:
		break;
	default:
		abort(); /* nothing else can come from a peer that connected */
	}
	CHECK(r->error[0] != '\0');
}

static void on_closed(void *ud)
{
	closed++;
}

static void setup(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	signal(SIGPIPE, SIG_IGN);
	uv_loop_init(&loop);
	snprintf(path, sizeof path, "/tmp/gs-fuzz-grpc-%d.sock", (int)getpid());
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	unlink(path);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(lfd, 4) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gs_grpc_client *cl;
	struct gs_grpc_client_opts o = {.path = path, .max_msg = MAX_MSG};
	int fd;
	if (lfd < 0)
		setup();
	dones = closed = 0;
	CHECK(gs_grpc_client_new(&loop, &o, &cl) == 0);
	in_call = 1;
	CHECK(gs_grpc_call(cl, "/v1.PodResourcesLister/List", NULL, 0, 2000, on_done, NULL) == 0);
	in_call = 0;
	CHECK(dones == 0);
	fd = accept(lfd, NULL, NULL); /* connect() on a unix socket is done once uv_pipe_connect returns */
	CHECK(fd >= 0);
	for (size_t off = 0; off < size;) {
		ssize_t n = send(fd, data + off, size - off, MSG_NOSIGNAL);
		if (n <= 0)
			break; /* the client closed already (it refused what came first) */
		off += (size_t)n;
		uv_run(&loop, UV_RUN_NOWAIT);
	}
	close(fd);
	while (dones == 0)
		uv_run(&loop, UV_RUN_ONCE);
	CHECK(dones == 1);
	gs_grpc_client_close(cl, on_closed, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	CHECK(closed == 1 && dones == 1);
	return 0;
}
