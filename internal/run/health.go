package run

import (
	"github.com/convoy-sh/convoy/internal/cluster/health"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
	"github.com/hashicorp/hcl/v2"
)

// compileHealth compiles every release block's health_check blocks once
// per run, into ls.Health.
func (ls *Loaded) compileHealth(cfg *config.Config) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, name := range cfg.SortedReleaseNames() {
		set, d := health.Compile(cfg.Releases[name].HealthChecks)
		diags = append(diags, d...)
		if set != nil {
			if ls.Health == nil {
				ls.Health = map[string]*health.Set{}
			}
			ls.Health[name] = set
		}
	}
	return diags
}

// healthOf is the compiled health checks of a release block (nil: none,
// so that the request's kube.Health stays a nil interface).
func (ls *Loaded) healthOf(block string) *health.Set { return ls.Health[block] }

// releaseRequest is ReleaseRequest with the release's compiled health
// checks.
func (ls *Loaded) releaseRequest(o Options, stack string, r *resolve.Release) *release.Request {
	req := o.releaseRequest(stack, r)
	if set := ls.healthOf(r.Instance.Addr.Release.Name); set != nil {
		req.Health = set
	}
	return req
}

// rollbackHealth is the health checks a rollback of inst waits with (a
// nil interface when it has none).
func (ls *Loaded) rollbackHealth(inst *config.ReleaseInstance) kube.Health {
	if set := ls.healthOf(inst.Addr.Release.Name); set != nil {
		return set
	}
	return nil
}
