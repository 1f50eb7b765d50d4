package plan

import (
	"maps"

	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/kube"
	"github.com/convoy-sh/convoy/internal/release"
	"github.com/convoy-sh/convoy/internal/resolve"
)

// NewRequest turns a resolved release into the release engine's request,
// its records labelled with the stack (StackLabel).
func NewRequest(st *config.Stack, r *resolve.Release) *release.Request {
	inst := r.Instance
	wait := release.WaitNone
	if inst.Wait {
		wait = release.WaitReady
		if inst.WaitForJobs {
			wait = release.WaitReadyAndJobs
		}
	}
	labels := maps.Clone(inst.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[StackLabel] = st.Name
	return &release.Request{
		Name:            inst.Name,
		Namespace:       inst.Namespace,
		Chart:           r.Chart,
		Values:          r.Values,
		CreateNamespace: inst.CreateNamespace,
		Wait:            wait,
		Timeout:         inst.Timeout,
		Atomic:          inst.Atomic,
		CleanupOnFail:   inst.CleanupOnFail,
		HistoryMax:      inst.HistoryMax,
		DisableHooks:    inst.DisableHooks,
		TakeOwnership:   inst.TakeOwnership,
		IgnoreChanges:   ignoreRules(inst.IgnoreChanges),
		Labels:          labels,
	}
}

// ignoreRules are a release's ignore_changes for the cluster layer.
func ignoreRules(ics []config.IgnoreChange) kube.IgnoreRules {
	var out kube.IgnoreRules
	for _, ic := range ics {
		rule := kube.IgnoreRule{Kind: ic.Kind, Name: ic.Name}
		for _, toks := range ic.PathTokens {
			rule.Paths = append(rule.Paths, kube.Pointer(toks))
		}
		out = append(out, rule)
	}
	return out
}
