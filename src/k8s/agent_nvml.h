/*
 * agent_nvml.h: the node's MIG instances, for the node agent's mig line (sched/inuse.h; docs/agent.md,
 * "MIG").
 *
 * The driver's /proc files name a GPU's MIG instances only by number (capabilities/gpuN/mig/giX/ciY),
 * never by the MIG-<uuid> the device plugin hands them out as; NVIDIA's management library (NVML) is
 * the one public source of those UUIDs and their parent GPU, as for the device plugin itself. It comes
 * with the driver (libnvidia-ml.so.1), so the agent loads it at run time (dlopen: nothing to link, no
 * header to build with) from --nvml-library; a node without it has no MIG to tell.
 *
 * Only these NVML calls, each present since driver R450: nvmlInit_v2, nvmlShutdown, nvmlErrorString,
 * nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetUUID, nvmlDeviceGetMigMode,
 * nvmlDeviceGetMaxMigDeviceCount, nvmlDeviceGetMigDeviceHandleByIndex.
 */
#ifndef GS_K8S_AGENT_NVML_H
#define GS_K8S_AGENT_NVML_H

#include <stddef.h>

#include "k8s/podresources.h"

#define GS_AGENT_NVML_LIBRARY "libnvidia-ml.so.1"

/* One MIG instance: its UUID ("MIG-0c7e...") and its parent GPU's ("GPU-8f2c..."). */
struct gs_agent_mig {
	char id[GS_PODRES_MAX_ID + 1];
	char parent[GS_PODRES_MAX_ID + 1];
};

/*
 * The MIG instances of every GPU whose current MIG mode is on, read through the NVML of library (a path,
 * or a name the dynamic loader looks up). 0 with *out (malloc'd, free it; NULL when none) and *n;
 * -ENOENT when the library cannot be loaded (no driver: nothing to say); another negative code with err
 * (a symbol missing, an NVML call failing, a UUID not printable or too long, more than
 * GS_INUSE_MAX_MIG instances). Loads, initialises, reads, shuts NVML down and unloads it; NVML's
 * initialisation opens every GPU, so callers read it seldom (the agent: at start, then once a heartbeat).
 */
int gs_agent_nvml_mig(const char *library, struct gs_agent_mig **out, size_t *n, char *err, size_t errlen);

#endif
