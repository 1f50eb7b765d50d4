package kube

import (
	"context"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"
)

func TestPodProblems(t *testing.T) {
	notReady := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	tests := []struct {
		name string
		pod  corev1.PodStatus
		want []string
	}{
		{
			name: "ready",
			pod: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "web", Ready: true, State: running}}},
		},
		{
			name: "succeeded",
			pod:  corev1.PodStatus{Phase: corev1.PodSucceeded},
		},
		{
			name: "running not ready",
			pod: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{notReady},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "web", State: running}, {Name: "sidecar", Ready: true, State: running}}},
			want: []string{"container web: not ready (ContainersNotReady)"},
		},
		{
			name: "crash loop",
			pod: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{notReady},
				ContainerStatuses: []corev1.ContainerStatus{{
					Name:                 "web",
					State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container"}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 2}},
				}}},
			want: []string{"container web: waiting: CrashLoopBackOff: back-off 40s restarting failed container (last terminated: Error, exit code 2)"},
		},
		{
			name: "failed",
			pod: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
				Name:  "main",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, Message: "boom\nstack trace"}},
			}}},
			want: []string{"container main: terminated: Error (exit code 1): boom …"},
		},
		{
			name: "init container",
			pod: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{notReady},
				InitContainerStatuses: []corev1.ContainerStatus{{Name: "migrate", State: running}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "web",
					State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}},
			want: []string{"init container migrate: running", "container web: waiting: PodInitializing"},
		},
		{
			name: "unschedulable",
			pod: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available: 3 Insufficient cpu.",
			}}},
			want: []string{"not scheduled: Unschedulable: 0/3 nodes are available: 3 Insufficient cpu."},
		},
		{
			name: "evicted",
			pod:  corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory."},
			want: []string{"failed: Evicted: The node was low on resource: memory."},
		},
		{
			name: "pending",
			pod:  corev1.PodStatus{Phase: corev1.PodPending},
			want: []string{"pending"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := podProblems(&corev1.Pod{Status: tt.pod})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("podProblems =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestStuckOldRevision: a StatefulSet's pod of the previous revision that
// is not Running and Ready is never replaced (OrderedReady); the details say
// so and name the way out, instead of the old pod's scheduler message.
func TestStuckOldRevision(t *testing.T) {
	unschedulable := corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available: 3 Insufficient ephemeral-storage.",
	}}}
	pod := func(name, revision, index string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Labels: map[string]string{
				"app": "db", appsv1.ControllerRevisionHashLabelKey: revision, appsv1.PodIndexLabel: index,
			}},
			Status: unschedulable,
		}
	}
	sts := func(spec string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec:
  selector: {matchLabels: {app: db}}
`+spec+`
status: {currentRevision: db-old, updateRevision: db-new}
`), &u.Object); err != nil {
			t.Fatal(err)
		}
		return u
	}
	stuck := `pod db-0: of the previous revision (db-old) and Pending: the StatefulSet replaces no pod while one is not Running and Ready ` +
		`(podManagementPolicy OrderedReady; Kubernetes' known issue kubernetes#67250), so the rollout waits on it forever. ` +
		`Delete the pod (kubectl delete pod -n shop db-0): the StatefulSet recreates it from the new revision (db-new), as Kubernetes' "forced rollback" does`
	scheduler := "pod db-0: not scheduled: Unschedulable: 0/3 nodes are available: 3 Insufficient ephemeral-storage."
	tests := []struct {
		name string
		spec string
		pod  *corev1.Pod
		want []string
	}{
		{"old revision", "", pod("db-0", "db-old", "0"), []string{stuck}},
		{"new revision", "", pod("db-0", "db-new", "0"), []string{scheduler}},
		{"parallel", "  podManagementPolicy: Parallel", pod("db-0", "db-old", "0"), []string{scheduler}},
		{"on delete", "  updateStrategy: {type: OnDelete}", pod("db-0", "db-old", "0"), []string{scheduler}},
		{"below the partition", "  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 1}}", pod("db-0", "db-old", "0"), []string{scheduler}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Client{typed: fake.NewClientset(tt.pod)}
			got := c.details(context.Background(), sts(tt.spec), nil)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("details =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
