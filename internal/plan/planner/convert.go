package planner

import (
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
)

// The plan is data that reaches no cluster: these convert between what the
// engine takes and what the plan records.

// SettingsOf is what a saved plan records of a release request: everything
// but the chart (the rendering holds what gets recorded) and the run's
// identity and redactor, which the run that applies it sets.
func SettingsOf(req *release.Request) plan.ReleaseSettings {
	s := plan.ReleaseSettings{
		Values:          req.Values,
		CreateNamespace: req.CreateNamespace,
		Wait:            waitOf(req.Wait),
		Timeout:         req.Timeout,
		Atomic:          req.Atomic,
		CleanupOnFail:   req.CleanupOnFail,
		HistoryMax:      req.HistoryMax,
		DisableHooks:    req.DisableHooks,
		TakeOwnership:   req.TakeOwnership,
		ExpandClaims:    req.ExpandClaims,
		PostRender:      req.PostRender,
		Labels:          req.Labels,
		Fingerprint:     req.Fingerprint,
		CRDs:            string(req.CRDs),
	}
	for _, r := range req.IgnoreChanges {
		rule := plan.IgnoreRule{Kind: r.Kind, Name: r.Name}
		for _, p := range r.Paths {
			rule.Paths = append(rule.Paths, []string(p))
		}
		s.IgnoreChanges = append(s.IgnoreChanges, rule)
	}
	return s
}

// RequestOf is the release request of saved settings (SettingsOf's
// inverse), without a chart.
func RequestOf(name, namespace string, s plan.ReleaseSettings) release.Request {
	req := release.Request{
		Name:            name,
		Namespace:       namespace,
		Values:          s.Values,
		CreateNamespace: s.CreateNamespace,
		Wait:            waitMode(s.Wait),
		Timeout:         s.Timeout,
		Atomic:          s.Atomic,
		CleanupOnFail:   s.CleanupOnFail,
		HistoryMax:      s.HistoryMax,
		DisableHooks:    s.DisableHooks,
		TakeOwnership:   s.TakeOwnership,
		ExpandClaims:    s.ExpandClaims,
		PostRender:      s.PostRender,
		Labels:          s.Labels,
		Fingerprint:     s.Fingerprint,
		CRDs:            release.CRDPolicy(s.CRDs),
	}
	for _, r := range s.IgnoreChanges {
		rule := kube.IgnoreRule{Kind: r.Kind, Name: r.Name}
		for _, p := range r.Paths {
			rule.Paths = append(rule.Paths, kube.Pointer(p))
		}
		req.IgnoreChanges = append(req.IgnoreChanges, rule)
	}
	return req
}

// UninstallRequestOf is the uninstall request of a planned uninstall.
func UninstallRequestOf(name, namespace string, s *plan.UninstallSettings) release.UninstallRequest {
	req := release.UninstallRequest{Name: name, Namespace: namespace, Wait: true}
	if s != nil {
		req.DisableHooks, req.Wait, req.Timeout = s.DisableHooks, s.Wait, s.Timeout
	}
	return req
}

func waitOf(m release.WaitMode) plan.Wait {
	switch m {
	case release.WaitReady:
		return plan.WaitReady
	case release.WaitReadyAndJobs:
		return plan.WaitReadyAndJobs
	}
	return plan.WaitNone
}

func waitMode(w plan.Wait) release.WaitMode {
	switch w {
	case plan.WaitReady:
		return release.WaitReady
	case plan.WaitReadyAndJobs:
		return release.WaitReadyAndJobs
	}
	return release.WaitNone
}

// ObjectRef is the plan's identity of a kube.Ref.
func ObjectRef(r kube.Ref) plan.ObjectRef { return plan.ObjectRef(r) }

// KubeRef is the kube.Ref of a plan's object identity.
func KubeRef(r plan.ObjectRef) kube.Ref { return kube.Ref(r) }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
