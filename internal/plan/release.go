package plan

import (
	"context"
	"fmt"
	"slices"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/release"
	"github.com/convoy-sh/convoy/internal/resolve"
	"k8s.io/apimachinery/pkg/api/meta"
)

// release plans one release instance.
func (c *computer) release(ctx context.Context, inst *config.ReleaseInstance) (*ReleaseChange, error) {
	rc := &ReleaseChange{Addr: inst.Addr.String(), Name: inst.Name, Namespace: inst.Namespace, Cluster: clusterName(inst.Cluster)}
	for _, d := range inst.DependsOn {
		rc.DependsOn = append(rc.DependsOn, d.Addr.String())
	}
	eng, err := c.in.Engine(ctx, inst.Cluster)
	if err != nil {
		return nil, err
	}
	hist, interrupted, err := c.observe(ctx, eng, inst.Namespace, inst.Name)
	if err != nil {
		return nil, err
	}
	var last, deployed *release.Release
	for _, r := range hist {
		last = r
		if r.Info.Status == release.StatusDeployed {
			deployed = r
		}
	}
	if last != nil {
		rc.Observed.LastRevision, rc.Observed.LastStatus = last.Version, string(last.Info.Status)
	}
	rc.interrupted(interrupted)
	if deployed != nil && deployed.Chart != nil && deployed.Chart.Metadata != nil {
		rc.Chart.Before = chartRef(deployed.Chart)
	}
	if c.ownership(rc, inst, last); rc.Refused() {
		rc.Action = ActionUpgrade // what it would be: apply refuses
		return rc, nil
	}
	rc.Sensitive = resolve.SensitiveValues(inst) // the known part, for the unknown too
	if !inst.Known {
		rc.KnownAfterApply = true
		rc.Action = ActionUpgrade
		if last == nil || (last.Info.Status == release.StatusUninstalled && deployed == nil) {
			rc.Action = ActionInstall
		}
		if last != nil && last.Info.Status.IsPending() {
			return nil, &release.PendingError{Name: last.Name, Namespace: last.Namespace, Status: last.Info.Status, Revision: last.Version, Since: last.Info.LastDeployed}
		}
		return rc, nil
	}

	r, err := resolve.Resolve(c.in.Charts, c.in.Stack.Dir, inst)
	if err != nil {
		return nil, err
	}
	red := NewRedactor(rc.Sensitive)
	req := c.in.Request(r)
	var prep *release.Prepared
	if err := c.do(ctx, func() error {
		var err error
		prep, err = eng.PrepareWithHistory(ctx, req, hist)
		return err
	}); err != nil {
		if !meta.IsNoMatchError(err) {
			return nil, err
		}
		return c.unknownKinds(ctx, eng, rc, req, last, deployed, red, err)
	}
	rc.Action = ActionUpgrade
	if prep.IsInstall {
		rc.Action = ActionInstall
	}
	rc.Chart.After = chartRef(prep.Rendered.Chart)
	saved := *req
	saved.Chart = nil
	rc.Saved = &SavedRelease{Rendered: prep.Rendered, Request: saved}
	observed := rc.Warnings // who owns it, what was interrupted
	rc.Warnings = append(slices.Clip(observed), warningsOf(prep.Rendered, red)...)
	if prep.NeedsCRDs {
		rc.Warnings = append(rc.Warnings, fmt.Sprintf("the chart installs %d CRDs first; objects of the kinds they define are known only after that, so they are not shown", len(prep.Rendered.CRDs)))
	}

	var before map[string]any
	if deployed != nil {
		before = deployed.Config
	}
	rc.Values = Compare(orEmpty(before), orEmpty(req.Values))
	MaskValues(rc.Values, red)

	unchanged := false
	// An adoption is an upgrade even when nothing else changes: the new
	// revision is what carries this stack's label.
	if !rc.Adopt && !prep.IsInstall && deployed != nil && deployed == last && !rc.Chart.Changed() && rc.Values.Empty() {
		unchanged, err = c.sameRendering(ctx, eng, req, prep, deployed)
		if err != nil {
			return nil, err
		}
	}
	if err := c.objects(ctx, eng, rc, prep, red, unchanged); err != nil {
		return nil, err
	}
	if unchanged && len(rc.Drift) > 0 {
		// Correcting drift is an upgrade: show the next revision's objects.
		unchanged = false
		rc.Objects, rc.Drift, rc.Warnings = nil, nil, append(slices.Clip(observed), warningsOf(prep.Rendered, red)...)
		if err := c.objects(ctx, eng, rc, prep, red, false); err != nil {
			return nil, err
		}
	}
	if unchanged && len(rc.Drift) == 0 {
		rc.Action = ActionNoOp
		for _, o := range rc.Objects {
			o.Action, o.Diff = ObjectNoOp, nil
		}
	}
	if rc.Action != ActionNoOp && !req.DisableHooks {
		rc.Hooks = hookRuns(prep.Rendered, prep.IsInstall)
	}
	return rc, nil
}

// unknownKinds plans a release whose objects include kinds the cluster does
// not serve yet: their CRDs come from a release it depends on, installed
// earlier in the same apply. It is rendered and saved; its objects can
// only be diffed at apply time.
func (c *computer) unknownKinds(ctx context.Context, eng *release.Engine, rc *ReleaseChange, req *release.Request, last, deployed *release.Release, red *Redactor, cause error) (*ReleaseChange, error) {
	install := last == nil || (last.Info.Status == release.StatusUninstalled && deployed == nil)
	revision := 1
	if last != nil {
		revision = last.Version + 1
	}
	var rendered *chart.Rendered
	if err := c.do(ctx, func() error {
		var err error
		rendered, err = eng.RenderRevision(ctx, req, revision, install)
		return err
	}); err != nil {
		return nil, err
	}
	rc.Action = ActionUpgrade
	if install {
		rc.Action = ActionInstall
	}
	rc.Chart.After = chartRef(rendered.Chart)
	saved := *req
	saved.Chart = nil
	rc.Saved = &SavedRelease{Rendered: rendered, Request: saved}
	var before map[string]any
	if deployed != nil {
		before = deployed.Config
	}
	rc.Values = Compare(orEmpty(before), orEmpty(req.Values))
	MaskValues(rc.Values, red)
	rc.Warnings = append(append(rc.Warnings, warningsOf(rendered, red)...), fmt.Sprintf("its objects cannot be diffed before the cluster serves their kinds (installed by a dependency?): %s", red.Text(cause.Error())))
	if !req.DisableHooks {
		rc.Hooks = hookRuns(rendered, install)
	}
	return rc, nil
}

func warningsOf(r *chart.Rendered, red *Redactor) []string {
	var out []string
	for _, w := range r.Warnings {
		out = append(out, red.Text(w))
	}
	return out
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func chartRef(ch *chart.Chart) *ChartRef {
	if ch == nil || ch.Metadata == nil {
		return nil
	}
	return &ChartRef{Name: ch.Metadata.Name, Version: ch.Metadata.Version, AppVersion: ch.Metadata.AppVersion}
}

// sameRendering reports whether the chart renders now what the deployed
// revision recorded (manifest and hooks). Templates may print the revision
// number, so the deployed revision is rendered again as itself when the
// next revision's rendering differs.
func (c *computer) sameRendering(ctx context.Context, eng *release.Engine, req *release.Request, prep *release.Prepared, deployed *release.Release) (bool, error) {
	if sameRecord(prep.Rendered, deployed) {
		return true, nil
	}
	var again *chart.Rendered
	err := c.do(ctx, func() error {
		var err error
		again, err = eng.RenderRevision(ctx, req, deployed.Version, deployed.Version == 1)
		return err
	})
	if err != nil {
		return false, err
	}
	return sameRecord(again, deployed), nil
}

func sameRecord(r *chart.Rendered, rec *release.Release) bool {
	if r.Manifest(false) != rec.Manifest {
		return false
	}
	hooks := release.RecordHooks(r)
	if len(hooks) != len(rec.Hooks) {
		return false
	}
	for i, h := range hooks {
		o := rec.Hooks[i]
		if h.Name != o.Name || h.Kind != o.Kind || h.Path != o.Path || h.Manifest != o.Manifest || h.Weight != o.Weight ||
			!slices.Equal(h.Events, o.Events) || !slices.Equal(h.DeletePolicies, o.DeletePolicies) {
			return false
		}
	}
	return true
}

// hookRuns lists the hooks an install or upgrade runs, in execution order.
func hookRuns(r *chart.Rendered, install bool) []HookRun {
	events := []chart.HookEvent{chart.HookPreUpgrade, chart.HookPostUpgrade}
	if install {
		events = []chart.HookEvent{chart.HookPreInstall, chart.HookPostInstall}
	}
	var out []HookRun
	for _, ev := range events {
		for _, h := range chart.HooksFor(r.Hooks, ev) {
			out = append(out, HookRun{Name: h.Name, Kind: h.Kind, Path: h.Path, Events: []string{string(ev)}, Weight: h.Weight})
		}
	}
	return out
}
