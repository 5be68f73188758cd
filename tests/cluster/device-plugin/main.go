// gs-device-plugin: a device plugin for the test cluster's kubelets (tests/cluster/nodes.sh,
// GS_DEVICE_PLUGIN=1). It registers a resource (nvidia.com/gpu) with one kubelet's Registration service
// and serves the v1beta1 DevicePlugin API on a socket beside it, with COUNT healthy devices named like
// NVIDIA's (GPU-<uuid>, the UUID derived from the node name and index, so they are stable across
// restarts). Allocate sets NVIDIA_VISIBLE_DEVICES to the device IDs the kubelet chose, as NVIDIA's
// plugin does; nothing else is mounted. When the kubelet restarts it deletes the plugin sockets: the
// plugin sees its socket gone and serves and registers again.
//
// With --health-file the devices whose indexes that file lists (space or comma separated; a missing
// file lists none) are reported Unhealthy: the file is read every second and a change is sent on
// ListAndWatch, as NVIDIA's plugin reports an XID error. The kubelet then counts the device in the
// node's capacity but not in its allocatable.
//
// With --proc-dir it also writes what the NVIDIA driver shows in /proc/driver/nvidia/gpus: one
// directory per device named by a PCI bus address, with an `information` file holding its "GPU UUID"
// and "Bus Location". The bus addresses are not in the plugin's order (device 0 is not the lowest),
// so a reader that numbers GPUs by bus order, as the driver and nvidia-smi do, is told apart from one
// that takes the plugin's order (docs/agent.md, "The GPU index table").
//
// With --replicas R > 1 it shares each GPU as NVIDIA's plugin does with time-slicing or MPS: R devices
// per GPU named GPU-<uuid>::0 .. ::R-1 (its AnnotatedID), COUNT x R advertised; --proc-dir still lists
// the COUNT GPUs. Registered under another resource (--resource nvidia.com/gpu.shared, as with
// renameByDefault) it runs beside the whole-GPU plugin on the same node, on its own socket.
//
// Built by tests/cluster/build-device-plugin.sh against the deviceplugin v1beta1 API and grpc of the
// Kubernetes version the cluster runs: the module's (tests/cluster/go.mod), or with the build tag
// k8s120 the Kubernetes 1.20.2 source tree's vendored copy, whose generated field names differ
// (ids.go, ids_k8s120.go; docs/cluster.md, "The device plugin").
package main

import (
	"context"
	"crypto/sha1"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

type plugin struct {
	// Methods a newer API adds answer Unimplemented; grpc-go's generated servers require the embedding.
	pluginapi.UnimplementedDevicePluginServer
	devs       []*pluginapi.Device
	stop       chan struct{}
	healthFile string
}

func (p *plugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{}, nil
}

func (p *plugin) ListAndWatch(_ *pluginapi.Empty, s pluginapi.DevicePlugin_ListAndWatchServer) error {
	sent := ""
	for {
		devs, key := p.withHealth()
		if key != sent {
			if err := s.Send(&pluginapi.ListAndWatchResponse{Devices: devs}); err != nil {
				return err
			}
			sent = key
		}
		select { // the stream stays open until we stop or the kubelet leaves
		case <-p.stop:
			return nil
		case <-s.Context().Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

// withHealth: the devices with their health from --health-file, and a key that changes with it.
func (p *plugin) withHealth() ([]*pluginapi.Device, string) {
	bad := map[string]bool{}
	if p.healthFile != "" {
		if b, err := os.ReadFile(p.healthFile); err == nil {
			for _, f := range strings.FieldsFunc(string(b), func(r rune) bool { return r == ',' || r == ' ' || r == '\n' }) {
				bad[f] = true
			}
		}
	}
	devs, key := []*pluginapi.Device{}, ""
	for i, d := range p.devs {
		h := pluginapi.Healthy
		if bad[fmt.Sprint(i)] {
			h = pluginapi.Unhealthy
		}
		devs = append(devs, &pluginapi.Device{ID: d.ID, Health: h})
		key += h + " "
	}
	return devs, key
}

func (p *plugin) GetPreferredAllocation(context.Context, *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	return &pluginapi.PreferredAllocationResponse{}, nil
}

func (p *plugin) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	resp := &pluginapi.AllocateResponse{}
	for _, c := range req.ContainerRequests {
		ids := requestedIDs(c)
		log.Printf("allocate %s", strings.Join(ids, ","))
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerAllocateResponse{
			Envs: map[string]string{"NVIDIA_VISIBLE_DEVICES": strings.Join(ids, ",")},
		})
	}
	return resp, nil
}

func (p *plugin) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}

// uuid: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx from the node name and the index.
func uuid(node string, i int) string {
	h := sha1.Sum([]byte(fmt.Sprintf("gpu-scheduler test GPU %s %d", node, i)))
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// busOf: device i's PCI address among count devices, a rotation of the plugin's order.
func busOf(i, count int) string {
	return fmt.Sprintf("0000:%02x:00.0", (0x3b+0x25*((i+2)%count))&0xff)
}

// writeProc writes dir/<bus>/information for each device, as the driver lays them out.
func writeProc(dir string, devs []*pluginapi.Device) error {
	for i, d := range devs {
		bus := busOf(i, len(devs))
		sub := filepath.Join(dir, bus)
		if err := os.MkdirAll(sub, 0755); err != nil {
			return err
		}
		info := fmt.Sprintf("Model:           gpu-scheduler test GPU\nIRQ:             0\nGPU UUID:        %s\n"+
			"Video BIOS:      00.00.00.00.00\nBus Type:        PCIe\nBus Location:    %s\nDevice Minor:    %d\n",
			d.ID, bus, i)
		if err := os.WriteFile(filepath.Join(sub, "information"), []byte(info), 0644); err != nil {
			return err
		}
	}
	return nil
}

func dial(sock string) (*grpc.ClientConn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return grpc.DialContext(ctx, sock, grpc.WithInsecure(), grpc.WithBlock(),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", addr)
		}))
}

// serve starts the plugin's server on dir/endpoint and registers it with dir/kubelet.sock.
func serve(p *plugin, dir, endpoint, resource string) (*grpc.Server, error) {
	sock := filepath.Join(dir, endpoint)
	os.Remove(sock)
	l, err := net.Listen("unix", sock)
	if err != nil {
		return nil, err
	}
	srv := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(srv, p)
	go srv.Serve(l)
	if c, err := dial(sock); err != nil { // our own server answers before the kubelet is told
		srv.Stop()
		return nil, err
	} else {
		c.Close()
	}
	c, err := dial(filepath.Join(dir, "kubelet.sock"))
	if err != nil {
		srv.Stop()
		return nil, fmt.Errorf("kubelet.sock: %v", err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = pluginapi.NewRegistrationClient(c).Register(ctx, &pluginapi.RegisterRequest{
		Version: pluginapi.Version, Endpoint: endpoint, ResourceName: resource})
	if err != nil {
		srv.Stop()
		return nil, fmt.Errorf("register: %v", err)
	}
	return srv, nil
}

func main() {
	dir := flag.String("plugin-dir", pluginapi.DevicePluginPath, "the kubelet's device-plugins directory (holds kubelet.sock)")
	resource := flag.String("resource", "nvidia.com/gpu", "resource name to register")
	count := flag.Int("count", 4, "devices")
	node := flag.String("node", "", "node name (the device UUIDs derive from it)")
	procDir := flag.String("proc-dir", "", "write the devices there as the NVIDIA driver's /proc/driver/nvidia/gpus (empty: not)")
	healthFile := flag.String("health-file", "", "a file listing the indexes of the devices to report Unhealthy (empty: all healthy)")
	replicas := flag.Int("replicas", 1, "devices per GPU (time-slicing): GPU-<uuid>::<n>")
	flag.Parse()
	if *node == "" {
		*node, _ = os.Hostname()
	}
	p := &plugin{healthFile: *healthFile}
	gpus := []*pluginapi.Device{}
	for i := 0; i < *count; i++ {
		gpus = append(gpus, &pluginapi.Device{ID: uuid(*node, i), Health: pluginapi.Healthy})
		for r := 0; r < *replicas && *replicas > 1; r++ {
			p.devs = append(p.devs, &pluginapi.Device{ID: fmt.Sprintf("%s::%d", uuid(*node, i), r), Health: pluginapi.Healthy})
		}
	}
	if *replicas <= 1 {
		p.devs = gpus
	}
	if *procDir != "" {
		if err := writeProc(*procDir, gpus); err != nil {
			log.Fatalf("--proc-dir %s: %v", *procDir, err)
		}
	}
	endpoint := "gs-" + strings.ReplaceAll(*resource, "/", "-") + ".sock"
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	var srv *grpc.Server
	for {
		if srv == nil {
			p.stop = make(chan struct{})
			s, err := serve(p, *dir, endpoint, *resource)
			if err != nil {
				log.Printf("not registered yet: %v", err)
			} else {
				srv = s
				ids := []string{}
				for _, d := range p.devs {
					ids = append(ids, d.ID)
				}
				log.Printf("registered %s on %s: %s", *resource, *node, strings.Join(ids, " "))
			}
		}
		select {
		case <-sigs:
			if srv != nil {
				close(p.stop)
				srv.Stop()
			}
			os.Remove(filepath.Join(*dir, endpoint))
			return
		case <-time.After(time.Second):
		}
		if _, err := os.Stat(filepath.Join(*dir, endpoint)); srv != nil && err != nil {
			log.Printf("socket gone (kubelet restarted?): serving and registering again")
			close(p.stop)
			srv.Stop()
			srv = nil
		}
	}
}
