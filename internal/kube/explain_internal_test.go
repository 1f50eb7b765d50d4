package kube

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
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
