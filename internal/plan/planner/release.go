package planner

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/sensitive"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// release plans one release instance. Its errors are masked with
// everything the release's sensitive values render to. A rename (rn not
// nil) whose new name has no revision of its own yet is planned from the
// old release's records as the rename copies them: an upgrade.
func (c *computer) release(ctx context.Context, inst *config.ReleaseInstance, rn *renaming) (_ *plan.ReleaseChange, err error) {
	// The records as their metadata tells them (partial: no chart, values
	// or manifest), which is all the fast path needs; readFull reads the
	// newest and deployed ones whole for everything else.
	rc, rd, hist, interrupted, err := c.begin(ctx, inst, false)
	if err != nil {
		return nil, err
	}
	renamed := rn != nil && rn.hist != nil
	if renamed {
		hist, interrupted = rn.hist, nil
	}
	var last, deployed *release.Release
	lastAndDeployed := func() {
		last, deployed = nil, nil
		for _, r := range hist {
			last = r
			if r.Info.Status == release.StatusDeployed {
				deployed = r
			}
		}
	}
	lastAndDeployed()
	if last == nil && !renamed {
		// No record in the stack's driver: none left in Helm's default
		// one either (a storage block changed without moving them).
		if err := c.view(rd).RecordsLeftBehind(ctx, inst.Namespace, inst.Name); err != nil {
			return nil, err
		}
	}
	readFull := func() error {
		if !renamed {
			if hist, _, err = c.observe(ctx, rd, inst.Namespace, inst.Name, true); err != nil {
				return err
			}
			lastAndDeployed()
		}
		if deployed != nil && deployed.Chart != nil && deployed.Chart.Metadata != nil {
			rc.Chart.Before = chartRef(deployed.Chart)
		}
		return nil
	}
	if last != nil {
		rc.Observed.LastRevision, rc.Observed.LastStatus = last.Version, string(last.Info.Status)
	}
	noteInterrupted(rc, interrupted)
	if c.ownership(rc, inst, last); rc.Refused() {
		rc.Action = plan.ActionUpgrade // what it would be: apply refuses
		return rc, readFull()
	}
	rc.Sensitive = resolve.SensitiveValues(inst) // the known part, for the unknown too
	if !inst.Known {
		known, changed, err := c.withOutputs(ctx, inst)
		if err != nil {
			return nil, err
		}
		if known == nil {
			if err := readFull(); err != nil {
				return nil, err
			}
			// The chart is known even when values are not: show it.
			if ch, err := c.in.Charts.Load(c.in.Stack.Dir, inst); err == nil {
				rc.Chart.After = chartRef(ch)
			}
			return c.knownAfterApply(rc, last, deployed, changed)
		}
		inst = known
		rc.Sensitive = resolve.SensitiveValues(inst)
		if len(changed) > 0 {
			// Planned with outputs this plan's changes keep: unchanged,
			// it says why it is not rendered again at apply.
			defer func() {
				if rc.Action == plan.ActionNoOp {
					rc.Reasons = append(rc.Reasons, plan.Reason{Kind: plan.ReasonDependency, Detail: "outputs of " + strings.Join(changed, ", ") + " read but unchanged"})
				}
			}()
		}
	}

	r, err := resolve.Resolve(c.in.Charts, c.in.Stack.Dir, inst)
	if err != nil {
		return nil, err
	}
	red := sensitive.New(rc.Sensitive)
	defer func() { err = red.Err(err) }()
	req := c.in.Request(r)
	if release.LargeChart(req.Chart) {
		// Its records, rendering, live objects and dry runs are each
		// about its size again.
		defer release.TightHeap()()
	}
	req.Lookups = c.lookup(ctx, rd)
	if !renamed && !c.explains(inst) {
		if same, err := c.unchanged(ctx, rd, rc, req, last, deployed, red); err != nil || same {
			return rc, err
		}
	}
	if err := readFull(); err != nil {
		return nil, err
	}
	var prep *release.Prepared
	if err := c.do(ctx, func() error {
		var err error
		c.stats.add(&c.stats.Renders, 1)
		prep, err = rd.PrepareWithHistory(ctx, req, hist)
		return err
	}); err != nil {
		if !meta.IsNoMatchError(err) {
			return nil, err
		}
		return c.unknownKinds(ctx, rd, rc, req, hist, last, deployed, &red, err)
	}
	derivedWarning, err := c.maskDerived(ctx, rd, rc, req, prep.Revision, prep.IsInstall, prep.Rendered, &red)
	if err != nil {
		return nil, err
	}
	if req.CreateNamespace {
		if _, err := c.namespaceAbsent(ctx, rd, req.Namespace); err != nil {
			return nil, err
		}
	}
	rc.Action = plan.ActionUpgrade
	if prep.IsInstall {
		rc.Action = plan.ActionInstall
	}
	rc.Chart.After = chartRef(prep.Rendered.Chart)
	rc.Saved = &plan.SavedRelease{Rendered: prep.Rendered, Settings: SettingsOf(req)}
	rc.StoredAPIs = storedAPIsOf(prep.StoredAPIs)
	observed := rc.Warnings // who owns it, what was interrupted
	rc.Warnings = append(slices.Clip(observed), warningsOf(prep.Rendered, red)...)
	crds, err := c.crdChanges(ctx, rd, prep.Rendered, rc.Action, req.CRDs)
	if err != nil {
		return nil, err
	}

	var before map[string]any
	base := valuesBase(hist, deployed, prep.IsInstall)
	if base != nil {
		before = base.Config
	}
	rc.Values = plan.Compare(orEmpty(before), orEmpty(req.Values))
	plan.MaskValues(rc.Values, red)

	// Why it changes: what upgrade changes (chart, values, the manifest and
	// the hooks it runs) and the record's state. Test hooks are not run by
	// an upgrade, so they do not count.
	var rendering renderingDelta
	// rendersSame: only values changed, and they render the deployed
	// revision's objects and hooks; skipped is their reason when
	// SkipNoOpUpgrades leaves the release alone.
	var rendersSame bool
	var skipped plan.Reason
	switch {
	case prep.IsInstall:
		rc.Reasons = append(rc.Reasons, installReason(last))
	default:
		if renamed {
			rc.Reasons = append(rc.Reasons, plan.Reason{Kind: plan.ReasonRename, Detail: fmt.Sprintf("Helm release %s is renamed %s", rn.oldName, inst.Name)})
		}
		rc.Reasons = append(rc.Reasons, stateReasons(last, deployed)...)
		if rc.Adopt {
			// The new revision is what carries this stack's label.
			rc.Reasons = append(rc.Reasons, plan.Reason{Kind: plan.ReasonAdopt, Detail: fmt.Sprintf("taken over from stack %q", rc.Owner)})
		}
		if deployed == nil {
			// Nothing deployed: the state says why; values as they differ
			// from the newest revision's.
			if !rc.Values.Empty() && base != nil {
				rc.Reasons = append(rc.Reasons, plan.Reason{Kind: plan.ReasonValues, Detail: fmt.Sprintf("%d %s changed since revision %d (%s)", len(rc.Values.Changes), plural(len(rc.Values.Changes), "value", "values"), base.Version, base.Info.Status)})
			}
			break
		}
		if rc.Chart.Changed() {
			rc.Reasons = append(rc.Reasons, plan.Reason{Kind: plan.ReasonChart, Detail: fmt.Sprintf("%s → %s", chartText(rc.Chart.Before), chartText(rc.Chart.After))})
		}
		if !rc.Values.Empty() {
			rc.Reasons = append(rc.Reasons, plan.Reason{Kind: plan.ReasonValues, Detail: fmt.Sprintf("%d %s changed", len(rc.Values.Changes), plural(len(rc.Values.Changes), "value", "values"))})
		}
		if len(rc.Reasons) == 0 {
			rendering, err = c.sameRendering(ctx, rd, req, prep, deployed)
			if err != nil {
				return nil, err
			}
			rc.Reasons = append(rc.Reasons, rendering.reasons()...)
		}
		if len(rc.Reasons) == 1 && rc.Reasons[0].Kind == plan.ReasonValues {
			// Values that render what the deployed revision holds (a
			// value set to the chart's default): the upgrade would
			// change no object. A template printing the revision makes
			// it look changed: the upgrade stays, as before.
			d := compareRecord(prep.Rendered, deployed)
			rendersSame = !d.manifest && !d.hooks
			if rendersSame && c.in.SkipNoOpUpgrades {
				skipped, rc.Reasons = rc.Reasons[0], nil
			}
		}
	}
	if len(rc.Reasons) == 0 {
		if r, ok := crdsReason(crds); ok {
			rc.Reasons = append(rc.Reasons, r)
		}
	}
	unchanged := len(rc.Reasons) == 0
	uncompared := replacedKinds(prep.Rendered, crds)
	appliedState, err := c.objects(ctx, rd, rc, prep, red, unchanged, uncompared)
	if err != nil {
		return nil, err
	}
	_, leftovers := leftoverReason(rc)
	drifted := len(rc.Drift)
	if unchanged && (len(rc.Drift) > 0 || leftovers) {
		// Correcting drift, or deleting what failed revisions left, is an
		// upgrade: show the next revision's objects.
		unchanged = false
		if len(rc.Drift) > 0 {
			rc.Reasons = append(rc.Reasons, plan.Reason{Kind: plan.ReasonDrift, Detail: fmt.Sprintf("%d %s changed outside convoy", len(rc.Drift), plural(len(rc.Drift), "object", "objects"))})
		}
		rc.Objects, rc.Drift, rc.Conflicts, rc.Warnings = nil, nil, nil, append(slices.Clip(observed), warningsOf(prep.Rendered, red)...)
		if _, err := c.objects(ctx, rd, rc, prep, red, false, uncompared); err != nil {
			return nil, err
		}
	}
	rc.Drifted = cmp.Or(len(rc.Drift), drifted)
	if r, ok := leftoverReason(rc); ok {
		rc.Reasons = append(rc.Reasons, r)
	}
	if err := c.conflictOwners(ctx, rd, rc); err != nil {
		return nil, err
	}
	if unchanged {
		rc.Action = plan.ActionNoOp
		for _, o := range rc.Objects {
			o.Action, o.Diff, o.Before, o.After = plan.ObjectNoOp, nil, nil, nil
		}
		if skipped.Kind == "" {
			// Not when values were left alone: the record's fingerprint
			// would then say it holds them.
			rc.Relabel = relabel(deployed, last, rc, req, prep.Rendered, appliedState)
		} else {
			rc.Warnings = append(rc.Warnings, fmt.Sprintf("%s, but they render the objects and hooks of revision %d: left alone (--skip-no-op-upgrades); its record keeps revision %d's values", skipped.Detail, deployed.Version, deployed.Version))
		}
		if c.in.PolicyObjects {
			keepDeployed(rc.Objects, release.WithOwnership(prep.Previous, prep.PreviousOwner(), req.Namespace), red)
		}
	}
	// Compared, the release needs its parsed objects no more, while its
	// record is sized and provenance renders it again: a large release's
	// are about its size again.
	prep.Objects, prep.Previous = nil, nil
	if rc.Action != plan.ActionNoOp {
		rc.ValuesBefore = valuesBefore(deployed, red)
	}
	rc.Objects = append(crds, rc.Objects...)
	if prep.NeedsCRDs {
		rc.Objects = append(rc.Objects, unservedObjects(rd, prep.Rendered, inst.Namespace, req.CRDs)...)
	}
	if rc.Action != plan.ActionNoOp && !req.DisableHooks {
		rc.Hooks = HookRuns(rd, prep.Rendered, inst.Namespace, rc.Action, red)
	}
	if rendersSame && rc.Action == plan.ActionUpgrade {
		rc.Warnings = append(rc.Warnings, noObjectChanges(deployed.Version, len(rc.Hooks)))
	}
	if rc.Action != plan.ActionNoOp {
		if err := c.sizeRecord(rd, rc, prep); err != nil {
			return nil, err
		}
	}
	if derivedWarning != "" {
		rc.Warnings = append(rc.Warnings, derivedWarning)
	}
	if rc.Action != plan.ActionNoOp || c.explains(inst) {
		// Only what attributes changes or explains fields reads them.
		c.valueOrigins(rc, r)
	}
	if rc.Action != plan.ActionNoOp {
		if err := c.attribute(ctx, rd, inst, rn, rc, req, prep, base, red); err != nil {
			return nil, err
		}
	}
	if c.explains(inst) {
		if err := c.explainFields(ctx, rd, rc, req, prep, red); err != nil {
			return nil, err
		}
	}
	if err := c.impact(ctx, rd, rc); err != nil {
		return nil, err
	}
	if req.ExpandClaims && rc.Action != plan.ActionNoOp {
		if rc.ClaimExpansions, err = c.claimExpansions(ctx, rd, rc); err != nil {
			return nil, err
		}
	}
	return rc, nil
}

// maskDerived adds what the release's sensitive values render to
// (derived.go) to rc.Sensitive and to *red. It returns a warning when that
// could not be found out.
func (c *computer) maskDerived(ctx context.Context, rd *release.Renderer, rc *plan.ReleaseChange, req *release.Request, revision int, install bool, rendered *chart.Rendered, red **sensitive.Redactor) (string, error) {
	if len(rc.Sensitive) == 0 {
		return "", nil
	}
	d, err := c.secretDerived(ctx, rd, req, revision, install, rendered, *red)
	if err != nil {
		return "", err
	}
	if len(d.values) > 0 {
		rc.Sensitive = append(rc.Sensitive, d.values...)
		slices.Sort(rc.Sensitive)
		rc.Sensitive = slices.Compact(rc.Sensitive)
	}
	*red = sensitive.New(rc.Sensitive).WithFields(d.fields)
	return d.warning, nil
}

// begin starts the plan of an instance: its identity and dependencies, its
// cluster's engine and its records (partial unless full: observe).
func (c *computer) begin(ctx context.Context, inst *config.ReleaseInstance, full bool) (*plan.ReleaseChange, *release.Renderer, []*release.Release, *plan.Interrupted, error) {
	rc := &plan.ReleaseChange{Addr: plan.InstanceAddr(inst.Addr), Name: inst.Name, Namespace: inst.Namespace, Cluster: clusterName(inst.Cluster), Labels: inst.Labels}
	for _, d := range inst.DependsOn {
		rc.DependsOn = append(rc.DependsOn, d.Addr)
	}
	rd, err := c.renderer(ctx, inst.Cluster)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	hist, interrupted, err := c.observe(ctx, rd, inst.Namespace, inst.Name, full)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return rc, rd, hist, interrupted, nil
}

// withOutputs evaluates a release whose values read attributes of other
// releases (revision, status, resources) once its dependencies are planned:
// when none of them changes in this plan, their outputs are what the stored
// records and the live cluster hold now, and the release is planned with
// them, as it is when the changes of those that change keep what it reads
// (outputsKept). It returns the changing dependencies, and nil for the
// release when its values are known only after apply.
func (c *computer) withOutputs(ctx context.Context, inst *config.ReleaseInstance) (*config.ReleaseInstance, []string, error) {
	var changed []string
	unknown := false
	for _, d := range inst.DependsOn {
		e := c.planned[d.Addr]
		if e == nil {
			continue // not in this plan (a target's dependency): unchanged
		}
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		if e.change == nil || e.change.Action != plan.ActionNoOp {
			changed = append(changed, d.Addr.String())
			if !c.outputsKept(inst, d.Addr, e.change) {
				unknown = true
			}
		}
	}
	if unknown || c.in.Outputs == nil {
		return nil, changed, nil
	}
	av := map[config.ReleaseInstanceAddr]config.AppliedRelease{}
	for _, d := range inst.DependsOn {
		dep := c.in.Stack.Release(d.Addr)
		if dep == nil {
			continue
		}
		// A dependency planned unchanged has every object as applied
		// (proven from their metadata, or planned in full): only the
		// objects the release reads are fetched. One outside the plan
		// is read whole.
		needs := config.ResourceNeeds{All: true}
		if c.planned[d.Addr] != nil {
			needs = c.in.Stack.ResourceNeeds(inst.Addr.Release.Name, d.Addr.Release.Name)
		}
		rd, err := c.renderer(ctx, dep.Cluster)
		if err != nil {
			return nil, nil, err
		}
		hist, err := c.history(ctx, rd, dep.Namespace, dep.Name)
		if err != nil {
			return nil, nil, err
		}
		deployed := deployedOf(hist)
		if deployed == nil {
			continue // not deployed: stays unknown
		}
		key := outputKey{revisionKey{nsKey{rd.ClusterID(), dep.Namespace}, dep.Name, deployed.Version}, needs.String()}
		a, err := c.outputs.Get(key, func() (config.AppliedRelease, error) {
			rec := deployed
			if _, ok := release.RecordObjectsOf(rec); !ok {
				// Its objects are read from its manifest: read it whole.
				var err error
				if rec, err = c.loadRecord(ctx, rd, rec); err != nil {
					return config.AppliedRelease{}, err
				}
			}
			// Outputs only reads the objects (it converts them to values):
			// the plan's shared ones, not copies.
			return c.in.Outputs(ctx, rd, rec, needs, c.view(rd).OutputObjects(rec, needs))
		})
		if err != nil {
			return nil, nil, fmt.Errorf("outputs of %s: %w", d.Addr, err)
		}
		av[d.Addr] = a
	}
	known, diags := c.in.Stack.EvaluateRelease(inst.Addr, av)
	if diags.HasErrors() {
		return nil, nil, diags
	}
	if !known.Known {
		return nil, changed, nil // a dependency is not deployed: known after apply
	}
	return known, changed, nil
}

// outputsKept says whether what inst reads of the dependency at dep is
// the same after this plan's change to it (an upgrade) as now: it reads
// neither the revision nor the objects whole, and each object it reads
// is planned unchanged (no-op). Its status is deployed before and after.
// The dependent is then planned with the dependency's outputs as they are
// now, and is a no-op when it renders as deployed.
func (c *computer) outputsKept(inst *config.ReleaseInstance, dep config.ReleaseInstanceAddr, change *plan.ReleaseChange) bool {
	if change == nil || change.Action != plan.ActionUpgrade || change.KnownAfterApply || change.Rename != nil || change.Observed.LastStatus != string(release.StatusDeployed) {
		return false
	}
	needs := c.in.Stack.ResourceNeeds(inst.Addr.Release.Name, dep.Release.Name)
	if needs.All || needs.Revision {
		return false
	}
	for key := range needs.Objects {
		kept := false
		for _, o := range change.Objects {
			if config.ResourceKey(o.Ref.APIVersion(), o.Ref.Kind, o.Ref.Name) == key {
				kept = o.Action == plan.ObjectNoOp
				break
			}
		}
		if !kept {
			return false
		}
	}
	return true
}

// knownAfterApply plans a release whose values are known only once the
// dependencies it reads are applied.
func (c *computer) knownAfterApply(rc *plan.ReleaseChange, last, deployed *release.Release, changed []string) (*plan.ReleaseChange, error) {
	rc.KnownAfterApply = true
	rc.Action = plan.ActionUpgrade
	if last == nil || (last.Info.Status == release.StatusUninstalled && deployed == nil) {
		rc.Action = plan.ActionInstall
		rc.Reasons = append(rc.Reasons, installReason(last))
	}
	detail := "reads outputs of releases not deployed yet"
	if len(changed) > 0 {
		detail = "reads outputs of " + strings.Join(changed, ", ") + ", which change in this plan"
	}
	rc.Reasons = append(rc.Reasons, plan.Reason{Kind: plan.ReasonDependency, Detail: detail})
	if last != nil && last.Info.Status.IsPending() {
		return nil, &release.PendingError{Name: last.Name, Namespace: last.Namespace, Status: last.Info.Status, Revision: last.Version, Since: last.Info.LastDeployed, RunID: last.Labels[release.RunLabel]}
	}
	return rc, nil
}

// valuesBase is the revision whose values a plan compares with: the
// deployed one; with none deployed, an upgrade compares with the newest
// revision that was deployed once (superseded), else the newest; an
// install with nothing.
func valuesBase(hist []*release.Release, deployed *release.Release, install bool) *release.Release {
	if deployed != nil || install || len(hist) == 0 {
		return deployed
	}
	for i := len(hist) - 1; i >= 0; i-- {
		if hist[i].Info != nil && hist[i].Info.Status == release.StatusSuperseded {
			return hist[i]
		}
	}
	return hist[len(hist)-1]
}

func installReason(last *release.Release) plan.Reason {
	if last != nil {
		return plan.Reason{Kind: plan.ReasonNew, Detail: fmt.Sprintf("revision %d is %s", last.Version, last.Info.Status)}
	}
	return plan.Reason{Kind: plan.ReasonNew, Detail: "not installed"}
}

// stateReasons say why the record's state alone makes an upgrade: the
// newest revision is not the deployed one.
func stateReasons(last, deployed *release.Release) []plan.Reason {
	switch {
	case last == nil:
		return nil
	case deployed == nil:
		return []plan.Reason{{Kind: plan.ReasonLastRevision, Detail: fmt.Sprintf("no revision is deployed; revision %d is %s", last.Version, last.Info.Status)}}
	case deployed != last:
		return []plan.Reason{{Kind: plan.ReasonLastRevision, Detail: fmt.Sprintf("the newest revision %d is %s (revision %d is deployed)", last.Version, last.Info.Status, deployed.Version)}}
	}
	return nil
}

func chartText(r *plan.ChartRef) string {
	if r == nil {
		return "none"
	}
	return r.Name + " " + r.Version
}

// unknownKinds plans a release whose objects include kinds the cluster does
// not serve yet: their CRDs come from a release it depends on, installed
// earlier in the same apply. It is rendered and saved; its objects can
// only be diffed at apply time.
func (c *computer) unknownKinds(ctx context.Context, rd *release.Renderer, rc *plan.ReleaseChange, req *release.Request, hist []*release.Release, last, deployed *release.Release, redp **sensitive.Redactor, cause error) (*plan.ReleaseChange, error) {
	install := last == nil || (last.Info.Status == release.StatusUninstalled && deployed == nil)
	revision := 1
	if last != nil {
		revision = last.Version + 1
	}
	var rendered *chart.Rendered
	if err := c.do(ctx, func() error {
		var err error
		action := chart.ActionUpgrade
		if install {
			action = chart.ActionInstall
		}
		c.stats.add(&c.stats.Renders, 1)
		rendered, err = rd.RenderRevision(ctx, req, revision, action)
		return err
	}); err != nil {
		return nil, err
	}
	derivedWarning, err := c.maskDerived(ctx, rd, rc, req, revision, install, rendered, redp)
	if err != nil {
		return nil, err
	}
	red := *redp
	p := &release.Prepared{Request: req, History: hist, Revision: revision, IsInstall: install, Rendered: rendered}
	if err := c.sizeRecord(rd, rc, p); err != nil {
		return nil, err
	}
	rc.Action = plan.ActionUpgrade
	rc.Reasons = []plan.Reason{{Kind: plan.ReasonManifest, Detail: "its objects' kinds are not served yet, so they are applied without a comparison"}}
	if install {
		rc.Action = plan.ActionInstall
		rc.Reasons = []plan.Reason{installReason(last)}
	}
	rc.Chart.After = chartRef(rendered.Chart)
	rc.Saved = &plan.SavedRelease{Rendered: rendered, Settings: SettingsOf(req)}
	var before map[string]any
	if deployed != nil {
		before = deployed.Config
	}
	rc.Values = plan.Compare(orEmpty(before), orEmpty(req.Values))
	plan.MaskValues(rc.Values, red)
	rc.ValuesBefore = valuesBefore(deployed, red)
	rc.Warnings = append(append(rc.Warnings, warningsOf(rendered, red)...), fmt.Sprintf("its objects cannot be compared before the cluster serves their kinds: %s", red.Text(cause.Error())))
	crds, err := c.crdChanges(ctx, rd, rendered, rc.Action, req.CRDs)
	if err != nil {
		return nil, err
	}
	rc.Objects = append(crds, unservedObjects(rd, rendered, req.Namespace, req.CRDs)...)
	if derivedWarning != "" {
		rc.Warnings = append(rc.Warnings, derivedWarning)
	}
	if !req.DisableHooks {
		rc.Hooks = HookRuns(rd, rendered, req.Namespace, rc.Action, red)
	}
	return rc, nil
}

func warningsOf(r *chart.Rendered, red *sensitive.Redactor) []string {
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

func chartRef(ch *chart.Chart) *plan.ChartRef {
	if ch == nil || ch.Metadata == nil {
		return nil
	}
	return &plan.ChartRef{Name: ch.Metadata.Name, Version: ch.Metadata.Version, AppVersion: ch.Metadata.AppVersion}
}

// noObjectChanges says of an upgrade whose values changed that it changes
// no object: the values render what revision holds.
func noObjectChanges(revision, hooks int) string {
	msg := fmt.Sprintf("values changed, no object changes: they render the objects and hooks of revision %d, so the upgrade only records them", revision)
	if hooks > 0 {
		msg += fmt.Sprintf(", and its %d %s run again", hooks, plural(hooks, "hook", "hooks"))
	}
	return msg + " (--skip-no-op-upgrades leaves it alone)"
}

// renderingDelta says what differs between a rendering and a record.
type renderingDelta struct {
	manifest, hooks bool
	// fields names the objects and fields that differ, when known.
	fields []fieldDelta
}

func (d renderingDelta) reasons() []plan.Reason {
	var out []plan.Reason
	if d.manifest {
		detail := "the rendered objects differ from the deployed revision's"
		if len(d.fields) > 0 {
			names := make([]string, len(d.fields))
			for i, f := range d.fields {
				names[i] = f.String()
			}
			detail += " (" + strings.Join(names, "; ") + ")"
		}
		out = append(out, plan.Reason{Kind: plan.ReasonManifest, Detail: detail})
	}
	if d.hooks {
		out = append(out, plan.Reason{Kind: plan.ReasonHooks, Detail: "the rendered hooks differ from the deployed revision's"})
	}
	return out
}

// sameRendering compares what the chart renders now with what the deployed
// revision recorded (manifest, and the hooks install and upgrade run; test
// hooks are not run by them). Templates may print the revision number, so
// the deployed revision is rendered again as itself when the next
// revision's rendering differs.
func (c *computer) sameRendering(ctx context.Context, rd *release.Renderer, req *release.Request, prep *release.Prepared, deployed *release.Release) (renderingDelta, error) {
	d := compareRecord(prep.Rendered, deployed)
	if !d.manifest && !d.hooks {
		return d, nil
	}
	var again *chart.Rendered
	err := c.do(ctx, func() error {
		var err error
		action := chart.ActionUpgrade
		if deployed.Version == 1 {
			action = chart.ActionInstall
		}
		c.stats.add(&c.stats.Renders, 1)
		again, err = rd.RenderRevision(ctx, req, deployed.Version, action)
		return err
	})
	if err != nil {
		return d, err
	}
	d = compareRecord(again, deployed)
	if !d.manifest {
		return d, nil
	}
	// Name what differs; when every difference is a field the live object
	// already holds as rendered (a lookup of live state), there is none.
	fields, ok := manifestDeltas(rd, again.Manifest(false), deployed.Manifest, req.Namespace)
	if !ok {
		return d, nil
	}
	fields, err = c.unsettled(ctx, rd, again.Manifest(false), fields, req.Namespace)
	if err != nil {
		return d, err
	}
	d.manifest, d.fields = len(fields) > 0, fields
	return d, nil
}

func compareRecord(r *chart.Rendered, rec *release.Release) renderingDelta {
	return renderingDelta{manifest: !sameObjects(r.Manifest(false), rec.Manifest), hooks: !sameHooks(release.RecordHooks(r), rec.Hooks)}
}

// sameObjects reports whether two manifests hold the same objects in the
// same order. Helm 3 stored each document with its trailing blank lines
// trimmed, Helm 4 and convoy store it as rendered: text that differs in
// nothing an object holds is no change (a `|+` block scalar's trailing
// newlines are in the object, and still count). Helm 3 also kept a chart's
// null defaults in the values templates print (`limits: null` from
// podinfo's `resources.limits:`), where Helm 4 and convoy drop them: a key
// whose value is null is compared as absent. That only decides whether the
// record needs a new revision; what the objects on the cluster would
// become is the dry run's to say.
func sameObjects(a, b string) bool {
	if a == b {
		return true
	}
	oa, err := kube.ParseUnmapped(a)
	if err != nil {
		return false
	}
	ob, err := kube.ParseUnmapped(b)
	if err != nil {
		return false
	}
	return slices.EqualFunc(oa, ob, func(x, y *unstructured.Unstructured) bool {
		return reflect.DeepEqual(x.Object, y.Object) || reflect.DeepEqual(withoutNulls(x.Object), withoutNulls(y.Object))
	})
}

// withoutNulls is v without the map keys whose value is null, at any
// depth (a null in a list stays: it holds a place).
func withoutNulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if e != nil {
				out[k] = withoutNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = withoutNulls(e)
		}
		return out
	}
	return v
}

// sameHooks compares the hooks an install, upgrade, rollback or uninstall
// runs; test hooks (helm test) are left out.
func sameHooks(a, b []*release.Hook) bool {
	a, b = withoutTestHooks(a), withoutTestHooks(b)
	if len(a) != len(b) {
		return false
	}
	for i, h := range a {
		o := b[i]
		if h.Name != o.Name || h.Kind != o.Kind || h.Path != o.Path || !sameObjects(h.Manifest, o.Manifest) || h.Weight != o.Weight ||
			!slices.Equal(h.Events, o.Events) || !slices.Equal(h.DeletePolicies, o.DeletePolicies) {
			return false
		}
	}
	return true
}

func withoutTestHooks(hs []*release.Hook) []*release.Hook {
	return slices.DeleteFunc(slices.Clone(hs), func(h *release.Hook) bool {
		return len(h.Events) > 0 && !slices.ContainsFunc(h.Events, func(ev chart.HookEvent) bool { return ev != chart.HookTest })
	})
}

// sizeRecord sizes the record the release's next revision writes, and
// refuses the release when its storage driver cannot hold it: the plan
// fails, before anything is applied (release.TooLargeError).
func (c *computer) sizeRecord(rd *release.Renderer, rc *plan.ReleaseChange, prep *release.Prepared) error {
	size, err := rd.RecordSize(prep)
	if err != nil {
		return err
	}
	c.stats.sized(size.Bytes)
	rc.RecordSize, rc.RecordLimit = size.Bytes, size.Limit
	if prunes := prep.Prunes(); len(prunes) > 0 {
		rc.Prunes = &plan.Pruning{Revisions: prunes, Keep: prep.Request.HistoryMax}
	}
	return rd.CheckSize(prep, size)
}
