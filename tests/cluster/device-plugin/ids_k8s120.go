//go:build k8s120

package main

import pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

// requestedIDs: the devices the kubelet chose for one container (gogo-protobuf's field name, 1.20).
func requestedIDs(c *pluginapi.ContainerAllocateRequest) []string { return c.DevicesIDs }
