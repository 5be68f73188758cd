/*
 * podresources.h: the kubelet's PodResources API, v1 (Kubernetes 1.20+): the List reply decoder.
 *
 * The kubelet serves gRPC on /var/lib/kubelet/pod-resources/kubelet.sock; the call is
 * GS_PODRES_LIST_METHOD with an empty ListPodResourcesRequest (zero bytes). The reply, as defined by
 * kubelet's pkg/apis/podresources/v1/api.proto (kubernetes/kubernetes,
 * staging/src/k8s.io/kubelet/pkg/apis/podresources/v1/api.proto):
 *
 *   ListPodResourcesResponse { repeated PodResources pod_resources = 1; }
 *   PodResources             { string name = 1; string namespace = 2; repeated ContainerResources containers = 3; }
 *   ContainerResources       { string name = 1; repeated ContainerDevices devices = 2; }
 *   ContainerDevices         { string resource_name = 1; repeated string device_ids = 2; }
 *
 * The 1.20.2 tree (Debian's source package, the test cluster's kubelet) already has two more:
 * ContainerResources.cpu_ids = 3 and ContainerDevices.topology = 3; later kubelets add memory and dynamic
 * resources. Unknown fields are skipped, so the same decoder reads every v1 reply. The decoder flattens the tree into one record per device held:
 * (namespace, pod, container, resource, device id), in the order of the reply. Pods and containers
 * holding no device leave no record (they are counted).
 *
 * Bad input fails the whole reply with a message naming the field (pod_resources[2].containers[0]
 * .devices[1].device_ids[3]) and leaves nothing to free: a field of the wrong wire type, malformed
 * protobuf, a string over its cap, empty, or holding a byte outside printable ASCII, a pod without a
 * name or namespace, a container without a name, a device entry without a resource name, more records
 * than GS_PODRES_MAX_DEVICES.
 */
#ifndef GS_K8S_PODRESOURCES_H
#define GS_K8S_PODRESOURCES_H

#include <stddef.h>

#define GS_PODRES_LIST_METHOD "/v1.PodResourcesLister/List"
#define GS_PODRES_SOCKET      "/var/lib/kubelet/pod-resources/kubelet.sock"

/* Caps: records in one reply, and the length of each string (a DNS subdomain is 253; a device ID
 * from NVIDIA's plugin is a UUID or a MIG name, well under 128). */
#define GS_PODRES_MAX_DEVICES 65536
#define GS_PODRES_MAX_NAME    253
#define GS_PODRES_MAX_ID      256

/* One device held. The strings point into the list's arena (NUL-terminated, never NULL). */
struct gs_podres_dev {
	const char *ns, *pod, *container, *resource, *id;
};

struct gs_podres_list {
	struct gs_podres_dev *devs; /* n of them; NULL when n is 0 */
	size_t n;
	size_t pods, containers; /* as listed, with or without devices */
	char *arena;             /* every string, each once per message it came from */
};

/*
 * Decodes a ListPodResourcesResponse (data: the gRPC reply message, without its 5-byte prefix).
 * 0 and *out filled (free it with gs_podres_list_free); -EINVAL (malformed, err says where) or -E2BIG (over
 * GS_PODRES_MAX_DEVICES) with *out empty. err may be NULL.
 */
int gs_podres_list_decode(const void *data, size_t len, struct gs_podres_list *out, char *err, size_t errlen);

/* Frees what decode filled; safe on a zeroed list and twice. */
void gs_podres_list_free(struct gs_podres_list *l);

#endif
