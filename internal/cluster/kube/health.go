package kube

import (
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Health judges the objects of some kinds by the user's own checks (a
// release's health_check blocks, compiled by internal/cluster/health) instead of
// kstatus's rules: custom resources whose controllers report readiness in
// fields of their own.
type Health interface {
	// Check judges u by the check of its kind; ok is false when there is
	// none, and kstatus's rules apply.
	Check(u *unstructured.Unstructured) (res HealthResult, ok bool)
}

// HealthResult is what a check says of an object.
type HealthResult struct {
	// Current: ready. Failed: failed, and the wait stops at once. Neither:
	// in progress.
	Current, Failed bool
	// Message says why (the expression that holds, or the one that does
	// not yet), for blocker lines and errors.
	Message string
}

// healthStatus is the kstatus result of a check, nil when h has none for u.
func healthStatus(h Health, u *unstructured.Unstructured) *status.Result {
	if h == nil || u == nil {
		return nil
	}
	res, ok := h.Check(u)
	if !ok {
		return nil
	}
	switch {
	case res.Failed:
		return &status.Result{Status: status.FailedStatus, Message: res.Message}
	case res.Current:
		return &status.Result{Status: status.CurrentStatus, Message: res.Message}
	}
	return &status.Result{Status: status.InProgressStatus, Message: res.Message}
}
