package run

import (
	"maps"

	"github.com/convoy-sh/convoy/internal/chart/postrender"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
)

// releaseRequest is ReleaseRequest for a run of o: the controller's
// records also name the Stack's namespace (release.StackNamespaceLabel).
func (o Options) releaseRequest(stack string, r *resolve.Release) *release.Request {
	req := ReleaseRequest(stack, r)
	if o.StackNamespace != "" {
		req.Labels[release.StackNamespaceLabel] = o.StackNamespace
	}
	return req
}

// ReleaseRequest turns a resolved release of stack into the release
// engine's request, its records labelled with the stack
// (release.StackLabel).
func ReleaseRequest(stack string, r *resolve.Release) *release.Request {
	inst := r.Instance
	labels := maps.Clone(inst.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[release.StackLabel] = stack
	labels[release.AddressLabel] = inst.Addr.LabelValue()
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
		ExpandClaims:    inst.ExpandClaims,
		IgnoreChanges:   ignoreRules(inst.IgnoreChanges),
		PostRender:      postRender(inst),
		Labels:          labels,
		CRDs:            crdPolicy(inst.CRDs),
	}
}

// crdPolicy is a release's crds for the release engine.
func crdPolicy(p config.CRDPolicy) release.CRDPolicy {
	switch p {
	case config.CRDsSkip:
		return release.CRDsSkip
	case config.CRDsCreateReplace:
		return release.CRDsCreateReplace
	}
	return release.CRDsCreate
}

// postRender is a release's patches and post_renderer for the release
// engine.
func postRender(inst *config.ReleaseInstance) postrender.Spec {
	var spec postrender.Spec
	for _, p := range inst.Patches {
		t := p.Target
		spec.Patches = append(spec.Patches, postrender.Patch{
			Name:     p.Name,
			Target:   postrender.Target{Kind: t.Kind, Name: t.Name, Namespace: t.Namespace, Labels: t.Labels},
			Patch:    p.Patch,
			JSON6902: p.JSON6902,
		})
	}
	if pr := inst.PostRenderer; pr != nil {
		spec.Exec = &postrender.Exec{Command: pr.Command, Args: pr.Args}
	}
	return spec
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
