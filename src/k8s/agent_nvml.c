/*
 * agent_nvml.c: see agent_nvml.h. The NVML types and constants used are declared here as nvml.h
 * (NVIDIA's, MIT-licensed) defines them: an opaque device handle, int return codes.
 */
#include "k8s/agent_nvml.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "sched/inuse.h"

#define NVML_SUCCESS             0
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NOT_FOUND     6
#define NVML_DEVICE_MIG_ENABLE   1
#define NVML_UUID_BUFFER_SIZE    96 /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */

typedef struct nvml_device *nvml_device_t;

struct nvml {
	void *lib;
	int (*init)(void);
	int (*shutdown)(void);
	const char *(*error_string)(int);
	int (*count)(unsigned *);
	int (*by_index)(unsigned, nvml_device_t *);
	int (*uuid)(nvml_device_t, char *, unsigned);
	int (*mig_mode)(nvml_device_t, unsigned *, unsigned *);
	int (*mig_max)(nvml_device_t, unsigned *);
	int (*mig_by_index)(nvml_device_t, unsigned, nvml_device_t *);
};

/* Each symbol of the library into l's pointers; -EINVAL naming the first missing. */
static int bind_symbols(struct nvml *l, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		size_t at;
	} syms[] = {
		{"nvmlInit_v2", offsetof(struct nvml, init)},
		{"nvmlShutdown", offsetof(struct nvml, shutdown)},
		{"nvmlErrorString", offsetof(struct nvml, error_string)},
		{"nvmlDeviceGetCount_v2", offsetof(struct nvml, count)},
		{"nvmlDeviceGetHandleByIndex_v2", offsetof(struct nvml, by_index)},
		{"nvmlDeviceGetUUID", offsetof(struct nvml, uuid)},
		{"nvmlDeviceGetMigMode", offsetof(struct nvml, mig_mode)},
		{"nvmlDeviceGetMaxMigDeviceCount", offsetof(struct nvml, mig_max)},
		{"nvmlDeviceGetMigDeviceHandleByIndex", offsetof(struct nvml, mig_by_index)},
	};

	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *f = dlsym(l->lib, syms[i].name);
		if (!f) {
			snprintf(err, errlen, "the NVML library has no %s", syms[i].name);
			return -EINVAL;
		}
		memcpy((char *)l + syms[i].at, &f, sizeof(f)); /* a function pointer from dlsym (POSIX) */
	}
	return 0;
}

static int nvml_fail(const struct nvml *l, int rc, const char *what, char *err, size_t errlen)
{
	const char *s = l->error_string ? l->error_string(rc) : NULL;

	snprintf(err, errlen, "NVML %s: %s (%d)", what, s ? s : "error", rc);
	return -EIO;
}

/* The UUID of device d into out (GS_PODRES_MAX_ID + 1 bytes): printable, no blank, at most that long. */
static int read_uuid(const struct nvml *l, nvml_device_t d, char *out, char *err, size_t errlen)
{
	char buf[NVML_UUID_BUFFER_SIZE + 1] = "";
	size_t len;
	int rc = l->uuid(d, buf, NVML_UUID_BUFFER_SIZE);

	if (rc != NVML_SUCCESS)
		return nvml_fail(l, rc, "nvmlDeviceGetUUID", err, errlen);
	buf[NVML_UUID_BUFFER_SIZE] = '\0';
	len = strlen(buf);
	for (size_t i = 0; i < len; i++)
		if (buf[i] <= ' ' || buf[i] > '~' || buf[i] == '=')
			len = 0;
	if (!len || len > GS_PODRES_MAX_ID) {
		snprintf(err, errlen, "NVML gave a device UUID that is not one (%zu bytes)", strlen(buf));
		return -EINVAL;
	}
	memcpy(out, buf, len + 1);
	return 0;
}

/* The MIG instances of GPU g (UUID parent) appended to *out. */
static int read_gpu(const struct nvml *l, nvml_device_t g, const char *parent, struct gs_agent_mig **out, size_t *n,
		    char *err, size_t errlen)
{
	unsigned cur = 0, pending = 0, max = 0;
	int rc = l->mig_mode(g, &cur, &pending);

	if (rc == NVML_ERROR_NOT_SUPPORTED || (rc == NVML_SUCCESS && cur != NVML_DEVICE_MIG_ENABLE))
		return 0; /* a GPU without MIG, or with MIG off */
	if (rc != NVML_SUCCESS)
		return nvml_fail(l, rc, "nvmlDeviceGetMigMode", err, errlen);
	if ((rc = l->mig_max(g, &max)) != NVML_SUCCESS)
		return nvml_fail(l, rc, "nvmlDeviceGetMaxMigDeviceCount", err, errlen);
	for (unsigned i = 0; i < max; i++) {
		nvml_device_t m;
		if ((rc = l->mig_by_index(g, i, &m)) == NVML_ERROR_NOT_FOUND)
			continue; /* an empty slot */
		if (rc != NVML_SUCCESS)
			return nvml_fail(l, rc, "nvmlDeviceGetMigDeviceHandleByIndex", err, errlen);
		if (*n == GS_INUSE_MAX_MIG) {
			snprintf(err, errlen, "more than %d MIG instances", GS_INUSE_MAX_MIG);
			return -EINVAL;
		}
		*out = gs_xreallocarray(*out, *n + 1, sizeof(**out));
		if ((rc = read_uuid(l, m, (*out)[*n].id, err, errlen)) < 0)
			return rc;
		snprintf((*out)[*n].parent, sizeof((*out)[*n].parent), "%s", parent);
		(*n)++;
	}
	return 0;
}

static int read_all(const struct nvml *l, struct gs_agent_mig **out, size_t *n, char *err, size_t errlen)
{
	unsigned count = 0;
	int rc = l->count(&count);

	if (rc != NVML_SUCCESS)
		return nvml_fail(l, rc, "nvmlDeviceGetCount_v2", err, errlen);
	for (unsigned i = 0; i < count; i++) {
		char parent[GS_PODRES_MAX_ID + 1];
		nvml_device_t g;
		if ((rc = l->by_index(i, &g)) != NVML_SUCCESS)
			return nvml_fail(l, rc, "nvmlDeviceGetHandleByIndex_v2", err, errlen);
		if ((rc = read_uuid(l, g, parent, err, errlen)) < 0 ||
		    (rc = read_gpu(l, g, parent, out, n, err, errlen)) < 0)
			return rc;
	}
	return 0;
}

int gs_agent_nvml_mig(const char *library, struct gs_agent_mig **out, size_t *n, char *err, size_t errlen)
{
	struct nvml l = {0};
	int rc;

	*out = NULL;
	*n = 0;
	if (!(l.lib = dlopen(library, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(err, errlen, "%s", dlerror());
		return -ENOENT;
	}
	if ((rc = bind_symbols(&l, err, errlen)) == 0) {
		if ((rc = l.init()) != NVML_SUCCESS) {
			rc = nvml_fail(&l, rc, "nvmlInit_v2", err, errlen);
		} else {
			rc = read_all(&l, out, n, err, errlen);
			l.shutdown();
		}
	}
	dlclose(l.lib);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}
