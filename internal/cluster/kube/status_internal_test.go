package kube

import (
	"testing"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestRefineStatus(t *testing.T) {
	tests := []struct {
		name     string
		object   string
		computed status.Status
		mode     waitMode
		want     status.Status // "" when kstatus's verdict stands
		message  string
	}{
		{
			name:     "paused deployment",
			object:   "apiVersion: apps/v1\nkind: Deployment\nspec: {paused: true}",
			computed: status.InProgressStatus,
			want:     status.CurrentStatus, message: "Deployment is paused",
		},
		{
			name:     "deployment",
			object:   "apiVersion: apps/v1\nkind: Deployment\nspec: {replicas: 1}",
			computed: status.InProgressStatus,
		},
		{
			name:     "load balancer without ingress",
			object:   "apiVersion: v1\nkind: Service\nspec: {type: LoadBalancer, clusterIP: 10.0.0.1}",
			computed: status.CurrentStatus,
			want:     status.InProgressStatus, message: "load balancer has no ingress address yet",
		},
		{
			name:     "load balancer with ingress",
			object:   "apiVersion: v1\nkind: Service\nspec: {type: LoadBalancer}\nstatus: {loadBalancer: {ingress: [{ip: 192.0.2.1}]}}",
			computed: status.CurrentStatus,
		},
		{
			name:     "cluster IP service",
			object:   "apiVersion: v1\nkind: Service\nspec: {type: ClusterIP}",
			computed: status.CurrentStatus,
		},
		{
			name:     "job running",
			object:   "apiVersion: batch/v1\nkind: Job\nspec: {completions: 2}\nstatus: {startTime: x, active: 1, succeeded: 1}",
			computed: status.CurrentStatus, // kstatus: started is enough
			mode:     modeReadyAndJobs,
			want:     status.InProgressStatus, message: "1/2 completions succeeded, 1 active, 0 failed",
		},
		{
			name:     "job complete",
			object:   "apiVersion: batch/v1\nkind: Job\nstatus: {conditions: [{type: Complete, status: 'True'}]}",
			computed: status.CurrentStatus,
			mode:     modeReadyAndJobs,
			want:     status.CurrentStatus, message: "Job completed",
		},
		{
			name:     "job failure target",
			object:   "apiVersion: batch/v1\nkind: Job\nstatus: {conditions: [{type: FailureTarget, status: 'True', reason: BackoffLimitExceeded, message: Job has reached the specified backoff limit}]}",
			computed: status.InProgressStatus,
			mode:     modeReadyAndJobs,
			want:     status.FailedStatus, message: "BackoffLimitExceeded: Job has reached the specified backoff limit",
		},
		{
			name:     "job not waited for",
			object:   "apiVersion: batch/v1\nkind: Job\nstatus: {}",
			computed: status.InProgressStatus,
		},
		{
			name:     "pod running, waiting for completion",
			object:   "apiVersion: v1\nkind: Pod\nstatus: {phase: Running, conditions: [{type: Ready, status: 'True'}]}",
			computed: status.CurrentStatus,
			mode:     modeCompletion,
			want:     status.InProgressStatus, message: "pod Running",
		},
		{
			name:     "pod succeeded, waiting for completion",
			object:   "apiVersion: v1\nkind: Pod\nstatus: {phase: Succeeded}",
			computed: status.CurrentStatus,
			mode:     modeCompletion,
			want:     status.CurrentStatus, message: "pod completed",
		},
		{
			name:     "job complete, waiting for completion",
			object:   "apiVersion: batch/v1\nkind: Job\nstatus: {conditions: [{type: Complete, status: 'True'}]}",
			computed: status.CurrentStatus,
			mode:     modeCompletion,
			want:     status.CurrentStatus, message: "Job completed",
		},
		{
			name:     "failed pod",
			object:   "apiVersion: v1\nkind: Pod\nstatus: {phase: Failed, reason: Evicted}",
			computed: status.CurrentStatus, // kstatus: completed, if not successfully
			want:     status.FailedStatus, message: "pod failed: Evicted",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := yaml.YAMLToJSON([]byte(tt.object + "\nmetadata: {name: x}"))
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(data); err != nil {
				t.Fatal(err)
			}
			got := refineStatus(u, tt.computed, tt.mode)
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("refineStatus = %s %q, want kstatus's verdict", got.Status, got.Message)
			case tt.want != "" && got == nil:
				t.Errorf("refineStatus = nil, want %s", tt.want)
			case tt.want != "" && (got.Status != tt.want || got.Message != tt.message):
				t.Errorf("refineStatus = %s %q, want %s %q", got.Status, got.Message, tt.want, tt.message)
			}
		})
	}
}

func TestNotReadyErrorLines(t *testing.T) {
	err := &NotReadyError{Objects: []ObjectStatus{
		{Ref: Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"}, State: StateNotReady,
			Message: "0/2 replicas available", Details: []string{"pod web-1: container web: not ready (ContainersNotReady)", "event FailedCreate: quota"}},
		{Ref: Ref{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "cfg"}, State: StateNotFound},
	}}
	want := "apps/v1 Deployment shop/web: not ready: 0/2 replicas available; pod web-1: container web: not ready (ContainersNotReady); event FailedCreate: quota\n" +
		"v1 ConfigMap shop/cfg: not found"
	if err.Error() != want {
		t.Errorf("Error() =\n%s\nwant\n%s", err.Error(), want)
	}
}
