/*
 * test_agent.c: the node agent's pure parts (k8s/agent.h): resource matching, List records -> the
 * devices published (duplicates, conflicts), the settle union, change detection, and the GPU index
 * table read from a directory shaped like /proc/driver/nvidia/gpus.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "k8s/agent.h"
#include "k8s/agent_nvml.h"

static void test_resource_match(void **state)
{
	assert_true(gs_agent_resource_match("nvidia.com/", "nvidia.com/gpu"));
	assert_true(gs_agent_resource_match("nvidia.com/", "nvidia.com/mig-1g.5gb"));
	assert_false(gs_agent_resource_match("nvidia.com/", "nvidia.com/"));
	assert_false(gs_agent_resource_match("nvidia.com/", "nvidia.comx/gpu"));
	assert_false(gs_agent_resource_match("nvidia.com/", "amd.com/gpu"));
	assert_true(gs_agent_resource_match("nvidia.com/gpu", "nvidia.com/gpu"));
	assert_false(gs_agent_resource_match("nvidia.com/gpu", "nvidia.com/gpu2"));
	assert_false(gs_agent_resource_match("nvidia.com/gpu", "nvidia.com/gp"));
	assert_true(gs_agent_resource_match(" amd.com/gpu , nvidia.com/ ", "amd.com/gpu"));
	assert_true(gs_agent_resource_match(" amd.com/gpu , nvidia.com/ ", "nvidia.com/gpu"));
	assert_false(gs_agent_resource_match(",, ,", "nvidia.com/gpu"));
	assert_false(gs_agent_resource_match("", "nvidia.com/gpu"));
}

#define REC(ns, pod, c, res, id)    \
	{                           \
		ns, pod, c, res, id \
	}

static int conflict_calls;
static void on_conflict(const struct gs_podres_dev *kept, const struct gs_podres_dev *dropped, void *ud)
{
	conflict_calls++;
	assert_string_equal(kept->pod, "train-0");
	assert_string_equal(dropped->pod, "infer-7");
	assert_string_equal(dropped->id, "GPU-bb");
	assert_ptr_equal(ud, &conflict_calls);
}

static void test_collect(void **state)
{
	struct gs_podres_dev recs[] = {
		REC("team-a", "train-0", "main", "nvidia.com/gpu", "GPU-bb"),
		REC("team-a", "train-0", "sidecar", "nvidia.com/gpu", "GPU-bb"), /* one pod, two containers */
		REC("team-a", "train-0", "main", "nvidia.com/gpu", "GPU-aa"),
		REC("team-b", "infer-7", "main", "nvidia.com/gpu", "GPU-bb"), /* another pod: a conflict */
		REC("team-b", "infer-7", "main", "example.com/nic", "NIC-1"), /* not a resource asked */
		REC("team-b", "infer-7", "main", "nvidia.com/mig-1g.5gb", "MIG-1"),
	};
	struct gs_podres_list l = {.devs = recs, .n = sizeof recs / sizeof *recs};
	struct gs_agent_devs s = {0};
	size_t conflicts = 99;

	conflict_calls = 0;
	gs_agent_collect(&l, "nvidia.com/", &s, &conflicts, on_conflict, &conflict_calls);
	assert_int_equal(conflicts, 1);
	assert_int_equal(conflict_calls, 1);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.devs[0].id, "GPU-bb");
	assert_string_equal(s.devs[0].holder, "team-a/train-0");
	assert_string_equal(s.devs[1].id, "GPU-aa");
	assert_string_equal(s.devs[2].resource, "nvidia.com/mig-1g.5gb");
	assert_string_equal(s.devs[2].holder, "team-b/infer-7");
	assert_int_equal(gs_agent_devs_find(&s, "nvidia.com/gpu", "GPU-aa"), 1);
	assert_int_equal(gs_agent_devs_find(&s, "example.com/nic", "NIC-1"), -1);

	/* formatted: sorted by resource then ID, one line each */
	struct gs_inuse u = {.at_ms = 1764084094000, .devs = s.devs, .n_devs = s.n};
	char err[256], *text = gs_inuse_format(&u, err, sizeof err);
	assert_non_null(text);
	assert_string_equal(text, "v1 2025-11-25T15:21:34Z\n"
				  "nvidia.com/gpu GPU-aa team-a/train-0\n"
				  "nvidia.com/gpu GPU-bb team-a/train-0\n"
				  "nvidia.com/mig-1g.5gb MIG-1 team-b/infer-7");
	free(text);
	gs_agent_devs_free(&s);
	gs_agent_devs_free(&s); /* twice is fine */

	/* nothing asked for: an empty set, no conflict */
	gs_agent_collect(&l, "amd.com/", &s, &conflicts, NULL, NULL);
	assert_int_equal(s.n, 0);
	assert_int_equal(conflicts, 0);
	gs_agent_devs_free(&s);
}

static void add(struct gs_agent_devs *s, const char *id, const char *holder)
{
	assert_int_equal(gs_agent_devs_add(s, &(struct gs_inuse_dev){"nvidia.com/gpu", id, holder}), 1);
}

/* The settle window: what the kubelet says, plus what was published that it does not list. */
static void test_union(void **state)
{
	struct gs_agent_devs before = {0}, now = {0}, out = {0}, empty = {0};

	add(&before, "GPU-a", "ns/p1");
	add(&before, "GPU-b", "ns/p2");
	add(&now, "GPU-b", "ns/p3"); /* the kubelet's holder wins */
	add(&now, "GPU-c", "ns/p4");
	assert_int_equal(gs_agent_devs_add(&now, &(struct gs_inuse_dev){"nvidia.com/gpu", "GPU-c", "ns/p9"}), 0);
	gs_agent_union(&before, &now, &out);
	assert_int_equal(out.n, 3);
	assert_string_equal(out.devs[gs_agent_devs_find(&out, "nvidia.com/gpu", "GPU-a")].holder, "ns/p1");
	assert_string_equal(out.devs[gs_agent_devs_find(&out, "nvidia.com/gpu", "GPU-b")].holder, "ns/p3");
	assert_string_equal(out.devs[gs_agent_devs_find(&out, "nvidia.com/gpu", "GPU-c")].holder, "ns/p4");
	gs_agent_devs_free(&out);
	/* the restarted kubelet's empty first answer: everything published stays */
	gs_agent_union(&before, &empty, &out);
	assert_int_equal(out.n, 2);
	assert_string_equal(out.devs[0].id, "GPU-a");
	gs_agent_devs_free(&out);
	gs_agent_devs_free(&before);
	gs_agent_devs_free(&now);
}

static void test_same_data(void **state)
{
	assert_true(gs_agent_same_data("v1 2026-11-25T15:21:34Z\nnvidia.com/gpu GPU-a ns/p\n",
				       "v1 2026-11-25T15:31:34Z\nnvidia.com/gpu GPU-a ns/p\n"));
	assert_false(gs_agent_same_data("v1 2026-11-25T15:21:34Z\nnvidia.com/gpu GPU-a ns/p\n",
					"v1 2026-11-25T15:21:34Z\nnvidia.com/gpu GPU-a ns/q\n"));
	assert_false(gs_agent_same_data("v1 2026-11-25T15:21:34Z\nnvidia.com/gpu GPU-a ns/p\n",
					"v1 2026-11-25T15:21:34Z\n"));
	assert_true(gs_agent_same_data("v1 2026-11-25T15:21:34Z\n", "v1 2026-11-25T16:21:34Z\n"));
	assert_true(gs_agent_same_data("v1 2026-11-25T15:21:34Z", "v1 2026-11-25T16:21:34Z"));
	assert_false(gs_agent_same_data("v1 2026-11-25T15:21:34Z", "v1 2026-11-25T16:21:34Z\n"));
	assert_false(gs_agent_same_data("v1 X\nerror a\n", "v1 X\nerror b\n"));
}

/* As the driver writes it (an H100's, from NVIDIA driver 535; trailing blanks and other keys kept). */
static const char info_h100[] = "Model: \t\t NVIDIA H100 80GB HBM3\n"
				"IRQ:             10\n"
				"GPU UUID:        GPU-9221d5d1-b60b-a624-bf14-0a1819cfda3b  \n"
				"Video BIOS:      96.00.99.00.01\n"
				"Bus Type:        PCIe\n"
				"DMA Size:        52 bits\n"
				"DMA Mask:        0xfffffffffffff\n"
				"Bus Location:    0000:62:00.0\n"
				"Device Minor:    5\n"
				"GPU Firmware:    535.129.03\n"
				"GPU Excluded:    No\n";

static void test_nvinfo_parse(void **state)
{
	struct gs_agent_gpu g;
	char err[256];

	assert_int_equal(gs_agent_nvinfo_parse(info_h100, strlen(info_h100), &g, err, sizeof err), 0);
	assert_string_equal(g.uuid, "GPU-9221d5d1-b60b-a624-bf14-0a1819cfda3b");
	assert_int_equal(g.bus, (0x62u << 8) | (0 << 3) | 0);
	/* CRLF, no final newline, a long domain, function 1 */
	static const char crlf[] = "Bus Location: 00000001:3b:1f.1\r\nGPU UUID: GPU-x\r";
	assert_int_equal(gs_agent_nvinfo_parse(crlf, strlen(crlf), &g, err, sizeof err), 0);
	assert_string_equal(g.uuid, "GPU-x");
	assert_int_equal(g.bus, (1ull << 16) | (0x3bu << 8) | (0x1f << 3) | 1);

	static const struct {
		const char *text, *why;
	} bad[] = {
		{"Bus Location: 0000:62:00.0\n", "no GPU UUID line"},
		{"GPU UUID: GPU-a\n", "no Bus Location line"},
		{"GPU UUID: GPU-a\nGPU UUID: GPU-b\nBus Location: 0000:62:00.0\n", "GPU UUID: twice"},
		{"GPU UUID: GPU-a\nBus Location: 0000:62:00.0\nBus Location: 0000:63:00.0\n", "Bus Location: twice"},
		{"GPU UUID:   \nBus Location: 0000:62:00.0\n", "GPU UUID: empty or over 256 bytes"},
		{"GPU UUID: GPU a\nBus Location: 0000:62:00.0\n", "GPU UUID: not printable ASCII without blanks"},
		{"GPU UUID: GPU-\x80\nBus Location: 0000:62:00.0\n", "GPU UUID: not printable ASCII without blanks"},
		{"GPU UUID: GPU-a\nBus Location: 0000:62:00\n", "Bus Location: not DOMAIN:BB:DD.F"},
		{"GPU UUID: GPU-a\nBus Location: 0000:62:20.0\n", "Bus Location: not DOMAIN:BB:DD.F"},
		{"GPU UUID: GPU-a\nBus Location: 0000:62:00.8\n", "Bus Location: not DOMAIN:BB:DD.F"},
		{"GPU UUID: GPU-a\nBus Location: 0000:62:00.0 x\n", "Bus Location: not DOMAIN:BB:DD.F"},
		{"GPU UUID: GPU-a\nBus Location: 123456789:62:00.0\n", "Bus Location: not DOMAIN:BB:DD.F"},
		{"", "no GPU UUID line"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		err[0] = 0;
		assert_int_equal(gs_agent_nvinfo_parse(bad[i].text, strlen(bad[i].text), &g, err, sizeof err), -EINVAL);
		assert_string_equal(err, bad[i].why);
	}
	/* a UUID of 257 bytes */
	char big[400];
	int n = snprintf(big, sizeof big, "Bus Location: 0000:01:00.0\nGPU UUID: ");
	memset(big + n, 'a', 257);
	big[n + 257] = 0;
	assert_int_equal(gs_agent_nvinfo_parse(big, strlen(big), &g, err, sizeof err), -EINVAL);
	big[n + 256] = 0;
	assert_int_equal(gs_agent_nvinfo_parse(big, strlen(big), &g, err, sizeof err), 0);
}

static char dir[64];

static void write_gpu(const char *name, const char *text)
{
	char path[256];
	FILE *f;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/%s/information", dir, name);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static void info(char *buf, size_t size, const char *uuid, const char *bus)
{
	snprintf(buf, size, "Model:           Test\nGPU UUID:        %s\nBus Location:    %s\n", uuid, bus);
}

static int make_dir(void **state)
{
	snprintf(dir, sizeof dir, "/tmp/gs-test-nvidia-%d", (int)getpid());
	return mkdir(dir, 0755);
}

static int remove_dir(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd);
}

/* Four GPUs whose directory order and UUIDs say nothing of their bus order: index = bus order. */
static void test_nvinfo_read(void **state)
{
	struct gs_agent_gpu *gpus;
	size_t n;
	char err[512], buf[256];

	info(buf, sizeof buf, "GPU-cc", "0000:86:00.0");
	write_gpu("0000:86:00.0", buf);
	info(buf, sizeof buf, "GPU-aa", "0000:3b:00.0");
	write_gpu("0000:3b:00.0", buf);
	info(buf, sizeof buf, "GPU-dd", "0000:af:00.0");
	write_gpu("0000:af:00.0", buf);
	info(buf, sizeof buf, "GPU-bb", "0000:1a:00.0");
	write_gpu("0000:1a:00.0", buf);
	assert_int_equal(gs_agent_nvinfo_read(dir, &gpus, &n, err, sizeof err), 0);
	assert_int_equal(n, 4);
	assert_string_equal(gpus[0].uuid, "GPU-bb");
	assert_string_equal(gpus[1].uuid, "GPU-aa");
	assert_string_equal(gpus[2].uuid, "GPU-cc");
	assert_string_equal(gpus[3].uuid, "GPU-dd");

	/* as the annotation's index line */
	const char *ids[4] = {gpus[0].uuid, gpus[1].uuid, gpus[2].uuid, gpus[3].uuid};
	struct gs_inuse u = {.at_ms = 0, .index = ids, .n_index = 4};
	char *text = gs_inuse_format(&u, err, sizeof err);
	assert_string_equal(text, "v1 1970-01-01T00:00:00Z\nindex 0=GPU-bb 1=GPU-aa 2=GPU-cc 3=GPU-dd");
	free(text);
	free(gpus);

	/* one GPU's file is malformed: no table at all (an index cannot be guessed), with the file named */
	write_gpu("0000:ff:00.0", "GPU UUID: GPU-ee\n");
	assert_int_equal(gs_agent_nvinfo_read(dir, &gpus, &n, err, sizeof err), -EINVAL);
	assert_null(gpus);
	assert_int_equal(n, 0);
	assert_non_null(strstr(err, "/0000:ff:00.0/information: no Bus Location line"));
	/* two directories saying one bus location */
	char path[256];
	snprintf(path, sizeof path, "%s/0000:ff:00.0/information", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("GPU UUID: GPU-ee\nBus Location: 0000:1a:00.0\n", f);
	fclose(f);
	assert_int_equal(gs_agent_nvinfo_read(dir, &gpus, &n, err, sizeof err), -EINVAL);
	assert_non_null(strstr(err, "two GPUs on one bus location"));
	/* a directory without its file */
	unlink(path);
	assert_int_equal(gs_agent_nvinfo_read(dir, &gpus, &n, err, sizeof err), -ENOENT);
	assert_non_null(strstr(err, "/0000:ff:00.0/information: No such file or directory"));
	/* a file over the cap */
	f = fopen(path, "w");
	for (int i = 0; i < GS_AGENT_NVINFO_MAX / 8 + 1; i++)
		fputs("IRQ: 10\n", f);
	fclose(f);
	assert_int_equal(gs_agent_nvinfo_read(dir, &gpus, &n, err, sizeof err), -E2BIG);
	/* no such directory: no table, nothing to say */
	snprintf(path, sizeof path, "%s/none", dir);
	err[0] = 0;
	assert_int_equal(gs_agent_nvinfo_read(path, &gpus, &n, err, sizeof err), -ENOENT);
	assert_string_equal(err, "");
}

static void test_nvinfo_order(void **state)
{
	struct gs_agent_gpu g[GS_INUSE_MAX_INDEX + 1];
	const char *ids[GS_INUSE_MAX_INDEX + 1];
	char err[256];

	memset(g, 0, sizeof g);
	for (int i = 0; i <= GS_INUSE_MAX_INDEX; i++) {
		snprintf(g[i].uuid, sizeof g[i].uuid, "GPU-%d", i);
		g[i].bus = (uint64_t)(GS_INUSE_MAX_INDEX + 1 - i) << 8;
	}
	assert_int_equal(gs_agent_nvinfo_order(g, GS_INUSE_MAX_INDEX + 1, ids, err, sizeof err), -EINVAL);
	assert_int_equal(gs_agent_nvinfo_order(g, GS_INUSE_MAX_INDEX, ids, err, sizeof err), 0);
	assert_string_equal(ids[0], "GPU-63");
	assert_string_equal(ids[63], "GPU-0");
	strcpy(g[1].uuid, g[0].uuid);
	assert_int_equal(gs_agent_nvinfo_order(g, 2, ids, err, sizeof err), -EINVAL);
	assert_string_equal(err, "one GPU UUID twice");
	assert_int_equal(gs_agent_nvinfo_order(g, 0, ids, err, sizeof err), 0);
}

/* The MIG reader over the stand-in NVML built beside this test (tests/fixtures/nvml/fake_nvml.c). */
static void test_nvml_mig(void **state)
{
	char lib[4096], err[256] = "";
	struct gs_agent_mig *m;
	size_t n;
	ssize_t len = readlink("/proc/self/exe", lib, sizeof(lib) - 32);
	(void)state;

	assert_true(len > 0);
	lib[len] = '\0';
	strcpy(strrchr(lib, '/') + 1, "libfake-nvml.so");
	/* GPU 0 with two instances and an empty slot, GPU 1 without MIG, GPU 2 with MIG on and none */
	setenv("GS_FAKE_NVML", "GPU-aa=MIG-a1,,MIG-a3;GPU-bb;GPU-cc=", 1);
	unsetenv("GS_FAKE_NVML_FAIL");
	assert_int_equal(gs_agent_nvml_mig(lib, &m, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_string_equal(m[0].id, "MIG-a1");
	assert_string_equal(m[0].parent, "GPU-aa");
	assert_string_equal(m[1].id, "MIG-a3");
	assert_string_equal(m[1].parent, "GPU-aa");
	free(m);
	/* no MIG anywhere: none */
	setenv("GS_FAKE_NVML", "GPU-aa;GPU-bb", 1);
	assert_int_equal(gs_agent_nvml_mig(lib, &m, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 0);
	assert_null(m);
	/* a call failing: said, nothing kept */
	setenv("GS_FAKE_NVML", "GPU-aa=MIG-a1", 1);
	setenv("GS_FAKE_NVML_FAIL", "nvmlDeviceGetMigDeviceHandleByIndex", 1);
	assert_int_equal(gs_agent_nvml_mig(lib, &m, &n, err, sizeof(err)), -EIO);
	assert_string_equal(err, "NVML nvmlDeviceGetMigDeviceHandleByIndex: Unknown Error (999)");
	assert_null(m);
	setenv("GS_FAKE_NVML_FAIL", "nvmlInit_v2", 1);
	assert_int_equal(gs_agent_nvml_mig(lib, &m, &n, err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "nvmlInit_v2"));
	unsetenv("GS_FAKE_NVML_FAIL");
	/* a UUID with a blank is not one */
	setenv("GS_FAKE_NVML", "GPU-aa=MIG a1", 1);
	assert_int_equal(gs_agent_nvml_mig(lib, &m, &n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not one"));
	/* no library (no driver): -ENOENT; a library without NVML's calls: says which */
	assert_int_equal(gs_agent_nvml_mig("/nonexistent/libnvidia-ml.so.1", &m, &n, err, sizeof(err)), -ENOENT);
	assert_int_equal(gs_agent_nvml_mig("libc.so.6", &m, &n, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "the NVML library has no nvmlInit_v2");
	unsetenv("GS_FAKE_NVML");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resource_match),
		cmocka_unit_test(test_collect),
		cmocka_unit_test(test_union),
		cmocka_unit_test(test_same_data),
		cmocka_unit_test(test_nvinfo_parse),
		cmocka_unit_test_setup_teardown(test_nvinfo_read, make_dir, remove_dir),
		cmocka_unit_test(test_nvinfo_order),
		cmocka_unit_test(test_nvml_mig),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
