package kube

import (
	"context"
	"fmt"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/engine"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/cli-utils/pkg/object"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// waitMode is what waiting is for.
type waitMode int

const (
	// modeReady: ready by kstatus's rules; Jobs are not waited for.
	modeReady waitMode = iota
	// modeReadyAndJobs: ready, and Jobs complete.
	modeReadyAndJobs
	// modeCompletion: Jobs complete and Pods succeeded (hooks).
	modeCompletion
)

// statusReader is kstatus's reader (which also looks at the ReplicaSets and
// Pods of workloads) with convoy's readiness rules laid over it.
type statusReader struct {
	inner  engine.StatusReader
	mode   waitMode
	health Health
}

func (r statusReader) Supports(gk schema.GroupKind) bool { return r.inner.Supports(gk) }

func (r statusReader) ReadStatus(ctx context.Context, cr engine.ClusterReader, id object.ObjMetadata) (*event.ResourceStatus, error) {
	rs, err := r.inner.ReadStatus(ctx, cr, id)
	return r.refine(rs), err
}

func (r statusReader) ReadStatusForObject(ctx context.Context, cr engine.ClusterReader, u *unstructured.Unstructured) (*event.ResourceStatus, error) {
	rs, err := r.inner.ReadStatusForObject(ctx, cr, u)
	return r.refine(rs), err
}

func (r statusReader) refine(rs *event.ResourceStatus) *event.ResourceStatus {
	if rs == nil || rs.Resource == nil || rs.Resource.GetDeletionTimestamp() != nil {
		return rs
	}
	if res := healthStatus(r.health, rs.Resource); res != nil {
		rs.Status, rs.Message, rs.Error = res.Status, res.Message, nil
		return rs
	}
	if res := refineStatus(rs.Resource, rs.Status, r.mode); res != nil {
		rs.Status, rs.Message = res.Status, res.Message
	}
	return rs
}

// refineStatus returns the status of u where convoy's rules differ from
// kstatus's (computed as computed), or nil where they agree.
func refineStatus(u *unstructured.Unstructured, computed status.Status, mode waitMode) *status.Result {
	obj := u.UnstructuredContent()
	switch u.GroupVersionKind().GroupKind() {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}:
		// A paused Deployment does not roll out; waiting for it would time
		// out for nothing (Helm skips them too).
		if paused, _, _ := unstructured.NestedBool(obj, "spec", "paused"); paused {
			return &status.Result{Status: status.CurrentStatus, Message: "Deployment is paused"}
		}
	case schema.GroupKind{Kind: "Service"}:
		// kstatus is satisfied by a cluster IP; a LoadBalancer is only usable
		// once the cloud gave it an address.
		if status.GetStringField(obj, ".spec.type", "") != "LoadBalancer" || computed != status.CurrentStatus {
			return nil
		}
		ingress, _, _ := unstructured.NestedSlice(obj, "status", "loadBalancer", "ingress")
		if len(ingress) == 0 {
			return &status.Result{Status: status.InProgressStatus, Message: "load balancer has no ingress address yet"}
		}
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		if mode != modeReady {
			return jobStatus(u)
		}
	case schema.GroupKind{Kind: "Pod"}:
		if mode == modeCompletion {
			return podCompletion(u)
		}
		// kstatus counts a Failed pod as done; for a pod that is waited for
		// it is a failure, and a final one.
		if status.GetStringField(obj, ".status.phase", "") == "Failed" {
			return podFailed(u)
		}
	}
	return nil
}

// podCompletion is done when the pod succeeded, and failed when it failed.
func podCompletion(u *unstructured.Unstructured) *status.Result {
	switch phase := status.GetStringField(u.Object, ".status.phase", ""); phase {
	case "Succeeded":
		return &status.Result{Status: status.CurrentStatus, Message: "pod completed"}
	case "Failed":
		return podFailed(u)
	case "":
		return &status.Result{Status: status.InProgressStatus, Message: "pod not started"}
	default:
		return &status.Result{Status: status.InProgressStatus, Message: "pod " + phase}
	}
}

func podFailed(u *unstructured.Unstructured) *status.Result {
	msg := "pod failed"
	if reason := status.GetStringField(u.Object, ".status.reason", ""); reason != "" {
		msg += ": " + reason
	}
	return &status.Result{Status: status.FailedStatus, Message: msg}
}

// jobStatus is ready only when the Job completed, and failed as soon as the
// Job controller decided it failed (FailureTarget comes before Failed, while
// the pods are still being terminated).
func jobStatus(u *unstructured.Unstructured) *status.Result {
	obj := u.UnstructuredContent()
	conds, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	for _, c := range conds {
		cond, _ := c.(map[string]any)
		if cond["status"] != "True" {
			continue
		}
		switch cond["type"] {
		case "Complete":
			return &status.Result{Status: status.CurrentStatus, Message: "Job completed"}
		case "Failed", "FailureTarget":
			msg := "Job failed"
			if reason, _ := cond["reason"].(string); reason != "" {
				msg = reason
			}
			if m, _ := cond["message"].(string); m != "" {
				msg += ": " + m
			}
			return &status.Result{Status: status.FailedStatus, Message: msg}
		}
	}
	parallelism := status.GetIntField(obj, ".spec.parallelism", 1)
	completions := status.GetIntField(obj, ".spec.completions", parallelism)
	succeeded := status.GetIntField(obj, ".status.succeeded", 0)
	active := status.GetIntField(obj, ".status.active", 0)
	failed := status.GetIntField(obj, ".status.failed", 0)
	return &status.Result{
		Status:  status.InProgressStatus,
		Message: fmt.Sprintf("%d/%d completions succeeded, %d active, %d failed", succeeded, completions, active, failed),
	}
}
