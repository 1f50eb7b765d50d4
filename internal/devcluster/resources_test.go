package devcluster_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The fake nodes advertise what a real node does — cpu, memory,
// ephemeral-storage and pods, allocatable a little below capacity — so
// that a pod with the requests and limits of bitnami's default
// resourcesPreset schedules (issue 21: without ephemeral-storage it stayed
// Pending, "Insufficient ephemeral-storage").
func TestNodesAdvertiseRealisticResources(t *testing.T) {
	cluster.Need(t)
	ctx := context.Background()
	client := cluster.Client()
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("nodes: %v, %v", nodes, err)
	}
	for _, n := range nodes.Items {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, corev1.ResourcePods} {
			c, a := n.Status.Capacity[r], n.Status.Allocatable[r]
			if c.IsZero() || a.IsZero() || a.Cmp(c) > 0 {
				t.Errorf("node %s: %s capacity %s, allocatable %s", n.Name, r, c.String(), a.String())
			}
		}
	}

	ns := cluster.Namespace(t)
	// bitnami/postgresql's "nano" preset, and the largest, "2xlarge".
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "preset"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "nano", Image: "postgres:17", Resources: preset("100m", "128Mi", "50Mi", "150m", "192Mi", "2Gi")},
			{Name: "xxl", Image: "postgres:17", Resources: preset("1", "3072Mi", "50Mi", "6", "12288Mi", "2Gi")},
		}},
	}
	if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var last *corev1.Pod
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := client.CoreV1().Pods(ns).Get(ctx, "preset", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = p
		return p.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		t.Fatalf("a pod with bitnami's preset resources is not Running: %v; status %+v", err, last.Status)
	}
}

func preset(cpu, memory, storage, cpuLimit, memoryLimit, storageLimit string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory), corev1.ResourceEphemeralStorage: resource.MustParse(storage)},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuLimit), corev1.ResourceMemory: resource.MustParse(memoryLimit), corev1.ResourceEphemeralStorage: resource.MustParse(storageLimit)},
	}
}
