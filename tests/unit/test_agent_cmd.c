/*
 * test_agent_cmd.c: `gpu-scheduler agent` (k8s/agent_cmd.h) against the gRPC test peer
 * (tests/grpc_peer.h) answering with PodResources List replies encoded by pb_encode.h: what --once
 * prints and its exit status, the errors, and the daemon's usage errors (the daemon itself:
 * tests/unit/test_agent.c for its pure parts, tests/integration/test_agent.sh against an apiserver).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "k8s/agent_cmd.h"
#include "grpc_peer.h"
#include "pb_encode.h"

static char sock[108];
static struct gp peer;
static struct gs_buf reply_a, reply_b;
static char out[8192], errout[8192];

static const char list_a[] =
	"{\"pod_resources\": [{\"name\": \"pod-a\", \"namespace\": \"ns\", \"containers\": [{\"name\": \"main\","
	" \"devices\": [{\"resource_name\": \"nvidia.com/gpu\", \"device_ids\": [\"GPU-1\", \"GPU-2\"]}]}]},"
	" {\"name\": \"web\", \"namespace\": \"ns\", \"containers\": [{\"name\": \"nginx\"}]}]}";
static const char list_b[] = /* the same length: the peer's reply pointer is swapped under it */
	"{\"pod_resources\": [{\"name\": \"pod-b\", \"namespace\": \"ns\", \"containers\": [{\"name\": \"main\","
	" \"devices\": [{\"resource_name\": \"nvidia.com/gpu\", \"device_ids\": [\"GPU-3\", \"GPU-4\"]}]}]},"
	" {\"name\": \"web\", \"namespace\": \"ns\", \"containers\": [{\"name\": \"nginx\"}]}]}";

static void encode(struct gs_buf *b, const char *json)
{
	cJSON *o = cJSON_Parse(json);
	assert_non_null(o);
	gs_buf_init(b, 0);
	assert_int_equal(pbe_msg(b, o, pbe_pr_list), 0);
	cJSON_Delete(o);
}

/* Runs the command with stdout and stderr captured into out and errout. */
static int run(int argc, const char **argv)
{
	FILE *o = tmpfile(), *e = tmpfile();
	int so = dup(1), se = dup(2), rc;
	size_t n;
	fflush(stdout), fflush(stderr);
	dup2(fileno(o), 1), dup2(fileno(e), 2);
	rc = gs_agent_cmd(argc, (char **)argv);
	fflush(stdout), fflush(stderr);
	dup2(so, 1), dup2(se, 2);
	close(so), close(se);
	rewind(o), rewind(e);
	n = fread(out, 1, sizeof out - 1, o);
	out[n] = '\0';
	n = fread(errout, 1, sizeof errout - 1, e);
	errout[n] = '\0';
	fclose(o), fclose(e);
	return rc;
}

static int setup(void **state)
{
	snprintf(sock, sizeof sock, "/tmp/gs-test-agent-%d.sock", (int)getpid());
	encode(&reply_a, list_a);
	encode(&reply_b, list_b);
	assert_int_equal(reply_a.len, reply_b.len);
	assert_int_equal(gp_start(&peer, sock, GP_OK), 0);
	peer.reply = (const uint8_t *)reply_a.data, peer.reply_len = reply_a.len;
	return 0;
}

static int teardown(void **state)
{
	gp_stop(&peer);
	gs_buf_free(&reply_a);
	gs_buf_free(&reply_b);
	return 0;
}

static void test_once_prints(void **state)
{
	const char *argv[] = {"agent", "--once", "--socket", sock, NULL};
	assert_int_equal(run(4, argv), 0);
	assert_string_equal(out, "ns/pod-a main nvidia.com/gpu GPU-1\nns/pod-a main nvidia.com/gpu GPU-2\n");
	assert_string_equal(peer.last_path, "/v1.PodResourcesLister/List");
	assert_int_equal(peer.last_req_len, 5); /* an empty ListPodResourcesRequest */
}

static void test_once_errors(void **state)
{
	char missing[140];
	snprintf(missing, sizeof missing, "%s.none", sock);
	const char *argv[] = {"agent", "--once", "--socket", missing, NULL};
	assert_int_equal(run(4, argv), 1);
	assert_string_equal(out, "");
	assert_non_null(strstr(errout, "the socket does not exist"));
	/* a reply that is not a List reply */
	static const uint8_t junk[] = {0x0a, 0x02, 0x08, 0x01}; /* pod_resources[0] = {1: varint} */
	peer.reply = junk, peer.reply_len = sizeof junk;
	const char *argv2[] = {"agent", "--once", "--socket", sock, NULL};
	assert_int_equal(run(4, argv2), 1);
	assert_non_null(strstr(errout, "pod_resources[0].name: varint, not a string"));
	/* a grpc-status */
	atomic_store(&peer.mode, GP_STATUS);
	peer.status = 14, peer.message = "kubelet going away";
	assert_int_equal(run(4, argv2), 1);
	assert_non_null(strstr(errout, "grpc-status 14 UNAVAILABLE: kubelet going away"));
	/* usage */
	const char *argv3[] = {"agent", "--interval-ms", "0", NULL};
	assert_int_equal(run(3, argv3), 2);
	const char *argv4[] = {"agent", "extra", NULL};
	assert_int_equal(run(2, argv4), 2);
}

/* The daemon's flags: --node is required (or NODE_NAME), the numbers are bounded, a kubeconfig that
 * cannot be read fails the start with 1. */
static void test_daemon_usage(void **state)
{
	unsetenv("NODE_NAME");
	const char *argv[] = {"agent", "--socket", sock, NULL};
	assert_int_equal(run(3, argv), 2);
	assert_non_null(strstr(errout, "--node (or env NODE_NAME) is required"));
	const char *argv2[] = {"agent", "--node", "n1", "--heartbeat-s", "0", NULL};
	assert_int_equal(run(5, argv2), 2);
	assert_non_null(strstr(errout, "--heartbeat-s: 1..86400"));
	const char *argv3[] = {"agent", "--node", "n1", "--settle-s", "-1", NULL};
	assert_int_equal(run(5, argv3), 2);
	const char *argv4[] = {"agent", "--node", "n1", "--resources", "", NULL};
	assert_int_equal(run(5, argv4), 2);
	const char *argv5[] = {"agent", "--node", "n1", "--kubeconfig", "/nonexistent/kubeconfig", NULL};
	assert_int_equal(run(5, argv5), 1);
	const char *argv6[] = {"agent", "--help", NULL};
	assert_int_equal(run(2, argv6), 0);
	assert_non_null(strstr(out, "--nvidia-proc-dir DIR"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_once_prints, setup, teardown),
		cmocka_unit_test_setup_teardown(test_once_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_daemon_usage, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
