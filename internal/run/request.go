package run

import (
	"maps"

	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/release"
	"github.com/convoy-sh/convoy/internal/resolve"
)

// ReleaseRequest turns a resolved release of stack into the release
// engine's request, its records labelled with the stack
// (release.StackLabel).
func ReleaseRequest(stack string, r *resolve.Release, forceConflicts bool) *release.Request {
	inst := r.Instance
	labels := maps.Clone(inst.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[release.StackLabel] = stack
	return &release.Request{
		Name:            inst.Name,
		Namespace:       inst.Namespace,
		Chart:           r.Chart,
		Values:          r.Values,
		CreateNamespace: inst.CreateNamespace,
		Wait:            waitMode(inst),
		Timeout:         inst.Timeout,
		Atomic:          inst.Atomic,
		CleanupOnFail:   inst.CleanupOnFail,
		HistoryMax:      inst.HistoryMax,
		DisableHooks:    inst.DisableHooks,
		TakeOwnership:   inst.TakeOwnership,
		ForceConflicts:  forceConflicts,
		Labels:          labels,
	}
}

// waitMode is what a release waits for after applying.
func waitMode(inst *config.ReleaseInstance) release.WaitMode {
	switch {
	case !inst.Wait:
		return release.WaitNone
	case inst.WaitForJobs:
		return release.WaitReadyAndJobs
	}
	return release.WaitReady
}
