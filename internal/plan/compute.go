package plan

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/kube"
	"github.com/convoy-sh/convoy/internal/release"
	"github.com/convoy-sh/convoy/internal/resolve"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DefaultParallelism bounds concurrent work (renders, record reads, dry
// runs) when Input.Parallelism is 0.
const DefaultParallelism = 5

// Input is what Compute plans.
type Input struct {
	Stack *config.Stack
	// Order is the topological order of the stack's release instances
	// (Stack.Graph().TopologicalOrder() when nil).
	Order []config.ReleaseInstanceAddr
	// Engine returns the release engine of a cluster block (nil: the
	// default cluster). It may be called concurrently.
	Engine func(ctx context.Context, cluster *config.ClusterSpec) (*release.Engine, error)
	Charts *resolve.Charts
	// Targets limit the plan to these instances (plus their dependencies
	// with IncludeDeps). A targeted plan uninstalls nothing.
	Targets     []config.ReleaseInstanceAddr
	IncludeDeps bool
	Parallelism int
	// ConfigHash is recorded in the plan (ConfigHash function).
	ConfigHash     string
	ForceConflicts bool
}

// Compute plans the stack: every selected release is resolved, rendered
// with live lookups and diffed object by object against the cluster with
// server-side dry runs, concurrently within Parallelism. It changes
// nothing. Errors name the release; sensitive values are masked in them.
func Compute(ctx context.Context, in Input) (*Plan, error) {
	st := in.Stack
	g, diags := st.Graph()
	if diags.HasErrors() {
		return nil, errors.New(diags.Error())
	}
	order := in.Order
	if order == nil {
		if order, diags = g.TopologicalOrder(); diags.HasErrors() {
			return nil, errors.New(diags.Error())
		}
	}
	if len(in.Targets) > 0 {
		sub := g.Subgraph(in.Targets, in.IncludeDeps)
		order = slices.DeleteFunc(slices.Clone(order), func(a config.ReleaseInstanceAddr) bool { return !sub.Has(a) })
	}
	par := in.Parallelism
	if par <= 0 {
		par = DefaultParallelism
	}
	c := &computer{in: in, sem: make(chan struct{}, par), histories: map[string]*historyEntry{}, lists: map[string]*listEntry{}}
	p := &Plan{FormatVersion: FormatVersion, Stack: st.Name, ConfigHash: in.ConfigHash, CreatedAt: time.Now().UTC(), IncludeDeps: in.IncludeDeps}
	for _, t := range in.Targets {
		p.Targets = append(p.Targets, t.String())
	}

	changes := make([]*ReleaseChange, len(order))
	errs := make([]error, len(order))
	var wg sync.WaitGroup
	for i, addr := range order {
		inst := st.Release(addr)
		if inst == nil {
			errs[i] = fmt.Errorf("%s: not in the stack", addr)
			continue
		}
		wg.Go(func() {
			rc, err := c.release(ctx, inst)
			if err != nil {
				red := newRedactor(resolve.SensitiveValues(inst))
				errs[i] = fmt.Errorf("%s: %w", addr, red.err(err))
				return
			}
			changes[i] = rc
		})
	}
	var removed []*ReleaseChange
	var removedErr error
	if len(in.Targets) == 0 {
		wg.Go(func() { removed, removedErr = c.removed(ctx) })
	}
	wg.Wait()
	if err := errors.Join(append(errs, removedErr)...); err != nil {
		return nil, err
	}
	p.Releases = append(changes, removed...)
	return p, nil
}

// computer is one Compute run: the shared pool and the record lists.
type computer struct {
	in  Input
	sem chan struct{}

	mu        sync.Mutex
	histories map[string]*historyEntry // cluster "/" namespace
	lists     map[string]*listEntry    // cluster, apiVersion, kind, namespace
}

type listEntry struct {
	once sync.Once
	objs map[string]*unstructured.Unstructured
	err  error
}

// live reads the live object: one list per kind and namespace, shared by
// every release of the plan, instead of one request per object. Secrets
// are read one by one: listing them would fetch every release record.
func (c *computer) live(ctx context.Context, cluster string, kc *kube.Client, ref kube.Ref) (*unstructured.Unstructured, error) {
	if ref.Namespace == "" || (ref.Group == "" && ref.Kind == "Secret") {
		return getLive(ctx, kc, ref)
	}
	key := strings.Join([]string{cluster, ref.APIVersion(), ref.Kind, ref.Namespace}, "\x00")
	c.mu.Lock()
	e := c.lists[key]
	if e == nil {
		e = &listEntry{}
		c.lists[key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		list, err := kc.Lookup(ctx)(ref.APIVersion(), ref.Kind, ref.Namespace, "")
		if err != nil {
			e.err = fmt.Errorf("list %s %s in namespace %s: %w", ref.APIVersion(), ref.Kind, ref.Namespace, err)
			return
		}
		e.objs = map[string]*unstructured.Unstructured{}
		items, _ := list["items"].([]any)
		for _, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				continue
			}
			u := &unstructured.Unstructured{Object: m}
			if u.GetKind() == "" {
				u.SetAPIVersion(ref.APIVersion())
				u.SetKind(ref.Kind)
			}
			e.objs[u.GetName()] = u
		}
	})
	if e.err != nil {
		return nil, e.err
	}
	if o := e.objs[ref.Name]; o != nil {
		return o.DeepCopy(), nil
	}
	return nil, nil
}

type historyEntry struct {
	once sync.Once
	recs map[string][]*release.Release
	err  error
}

// do runs f holding one slot of the pool.
func (c *computer) do(ctx context.Context, f func() error) error {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-c.sem }()
	return f()
}

// history returns a release's records, listing each namespace once.
func (c *computer) history(ctx context.Context, eng *release.Engine, cluster, namespace, name string) ([]*release.Release, error) {
	c.mu.Lock()
	e := c.histories[cluster+"/"+namespace]
	if e == nil {
		e = &historyEntry{}
		c.histories[cluster+"/"+namespace] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		e.err = c.do(ctx, func() error {
			var err error
			e.recs, err = eng.Histories(ctx, namespace)
			return err
		})
	})
	return e.recs[name], e.err
}

func clusterName(spec *config.ClusterSpec) string {
	if spec == nil {
		return ""
	}
	return spec.Name
}

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
	hist, err := c.history(ctx, eng, rc.Cluster, inst.Namespace, inst.Name)
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
	if deployed != nil && deployed.Chart != nil && deployed.Chart.Metadata != nil {
		rc.Chart.Before = chartRef(deployed.Chart)
	}
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
	rc.Sensitive = resolve.SensitiveValues(inst)
	red := newRedactor(rc.Sensitive)
	req := NewRequest(c.in.Stack, r, c.in.ForceConflicts)
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
	rc.Warnings = warningsOf(prep.Rendered, red)
	if prep.NeedsCRDs {
		rc.Warnings = append(rc.Warnings, fmt.Sprintf("the chart installs %d CRDs first; objects of the kinds they define are known only after that, so they are not shown", len(prep.Rendered.CRDs)))
	}

	var before map[string]any
	if deployed != nil {
		before = deployed.Config
	}
	rc.Values = Compare(orEmpty(before), orEmpty(req.Values))
	maskValues(rc.Values, red)

	unchanged := false
	if !prep.IsInstall && deployed != nil && deployed == last && !rc.Chart.Changed() && rc.Values.Empty() {
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
		rc.Objects, rc.Drift, rc.Warnings = nil, nil, warningsOf(prep.Rendered, red)
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
func (c *computer) unknownKinds(ctx context.Context, eng *release.Engine, rc *ReleaseChange, req *release.Request, last, deployed *release.Release, red *redactor, cause error) (*ReleaseChange, error) {
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
	maskValues(rc.Values, red)
	rc.Warnings = append(warningsOf(rendered, red), fmt.Sprintf("its objects cannot be diffed before the cluster serves their kinds (installed by a dependency?): %s", red.text(cause.Error())))
	if !req.DisableHooks {
		rc.Hooks = hookRuns(rendered, install)
	}
	return rc, nil
}

func warningsOf(r *chart.Rendered, red *redactor) []string {
	var out []string
	for _, w := range r.Warnings {
		out = append(out, red.text(w))
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

// objects diffs the release's objects against the live cluster. With
// unchanged (the rendering equals the deployed revision's), the objects are
// the deployed ones: whatever differs live is drift.
func (c *computer) objects(ctx context.Context, eng *release.Engine, rc *ReleaseChange, prep *release.Prepared, red *redactor, unchanged bool) error {
	kc := eng.Kube()
	req := prep.Request
	previous := release.WithOwnership(prep.Previous, req.Name, req.Namespace)
	prevBy := map[string]*unstructured.Unstructured{}
	for _, o := range previous {
		prevBy[identityKey(kube.RefOf(o))] = o
	}
	current := prep.Objects
	if unchanged {
		current = previous
	}
	type result struct {
		change  *ObjectChange
		drift   *ObjectDrift
		warning string
		ref     string
		version string
		hash    string
	}
	var items []*unstructured.Unstructured
	items = append(items, current...)
	inCurrent := map[string]bool{}
	for _, o := range current {
		inCurrent[identityKey(kube.RefOf(o))] = true
	}
	var gone []*unstructured.Unstructured
	for _, o := range previous {
		if !inCurrent[identityKey(kube.RefOf(o))] && !release.IsKept(o) {
			gone = append(gone, o)
		}
	}
	results := make([]result, len(items)+len(gone))
	errs := make([]error, len(results))
	var wg sync.WaitGroup
	for i, obj := range items {
		wg.Go(func() {
			errs[i] = c.do(ctx, func() error {
				ref := kube.RefOf(obj)
				res := &results[i]
				res.ref = ref.String()
				live, err := c.live(ctx, rc.Cluster, kc, ref)
				if err != nil {
					return err
				}
				if live != nil {
					res.version, res.hash = live.GetResourceVersion(), contentHash(live)
				}
				prev := prevBy[identityKey(ref)]
				ch, drift, warn, err := diffObject(ctx, kc, obj, prev, live, req, red)
				if err != nil {
					return err
				}
				ch.Template = prep.TemplateOf(ref)
				res.change, res.drift, res.warning = ch, drift, warn
				return nil
			})
		})
	}
	for j, obj := range gone {
		i := len(items) + j
		wg.Go(func() {
			errs[i] = c.do(ctx, func() error {
				ref := kube.RefOf(obj)
				live, err := c.live(ctx, rc.Cluster, kc, ref)
				if err != nil || live == nil {
					return err
				}
				results[i] = result{ref: ref.String(), version: live.GetResourceVersion(), hash: contentHash(live), change: objectChange(ref, ObjectDelete)}
				return nil
			})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	rc.Observed.ObjectVersions, rc.Observed.ObjectHashes = map[string]string{}, map[string]string{}
	for _, r := range results {
		if r.ref == "" {
			continue
		}
		rc.Observed.ObjectVersions[r.ref] = r.version
		if r.hash != "" {
			rc.Observed.ObjectHashes[r.ref] = r.hash
		}
		if r.change != nil {
			rc.Objects = append(rc.Objects, r.change)
		}
		if r.drift != nil {
			rc.Drift = append(rc.Drift, r.drift)
		}
		if r.warning != "" {
			rc.Warnings = append(rc.Warnings, r.warning)
		}
	}
	return nil
}

func identityKey(r kube.Ref) string { return r.Group + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name }

func getLive(ctx context.Context, kc *kube.Client, ref kube.Ref) (*unstructured.Unstructured, error) {
	live, err := kc.Get(ctx, ref)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return live, err
}

// diffObject computes one object's change (live → dry-run of the new
// object) and its drift (what convoy last applied, dry-run again → live).
func diffObject(ctx context.Context, kc *kube.Client, obj, prev, live *unstructured.Unstructured, req *release.Request, red *redactor) (*ObjectChange, *ObjectDrift, string, error) {
	ref := kube.RefOf(obj)
	secret := secretPaths(ref.Kind)
	if live == nil {
		ch := objectChange(ref, ObjectCreate)
		ch.Diff = Compare(map[string]any{}, normalize(obj))
		maskDiff(ch.Diff, red, secret...)
		var drift *ObjectDrift
		if prev != nil {
			drift = &ObjectDrift{Ref: ref.String(), Missing: true, Corrected: true}
		}
		return ch, drift, "", nil
	}
	var warning string
	if prev == nil && !ownedByRelease(live, req.Name, req.Namespace) && !req.TakeOwnership {
		warning = fmt.Sprintf("%s exists and is not owned by release %s: apply refuses to adopt it unless take_ownership = true", ref, req.Name)
	}
	force := req.ForceConflicts || (prev == nil && req.TakeOwnership)
	dr, err := dryRun(ctx, kc, obj, force)
	if err != nil {
		return nil, nil, "", err
	}
	liveN := normalize(live)
	ch := objectChange(ref, ObjectUpdate)
	if dr.immutable != nil {
		ch.Action = ObjectReplace
		base := liveN
		if prev != nil {
			base = normalize(prev)
		}
		ch.Diff = Compare(base, normalize(obj))
		ch.Reason = red.text(dr.immutable.Error())
	} else {
		ch.Diff = Compare(liveN, normalize(dr.after))
		if ch.Diff.Empty() {
			ch.Action = ObjectNoOp
		}
	}
	maskDiff(ch.Diff, red, secret...)
	if dr.conflict != nil && warning == "" {
		warning = fmt.Sprintf("%s: %s", ref, conflictNote(dr.conflict, force))
	}
	if prev == nil {
		return ch, nil, warning, nil
	}
	// Drift: what convoy last applied, applied again, against live.
	applied := dr
	if !sameObject(prev, obj) {
		if applied, err = dryRun(ctx, kc, prev, true); err != nil {
			return nil, nil, "", err
		}
	}
	if applied.after == nil {
		return ch, nil, warning, nil
	}
	d := Compare(normalize(applied.after), liveN)
	if d.Empty() {
		return ch, nil, warning, nil
	}
	maskDiff(d, red, secret...)
	drift := &ObjectDrift{Ref: ref.String(), Diff: d, Corrected: true}
	changed := map[string]bool{}
	if ch.Diff != nil {
		for _, c := range ch.Diff.Changes {
			changed[c.Path] = true
		}
	}
	for _, c := range d.Changes {
		if !changed[c.Path] && ch.Action != ObjectReplace {
			drift.Corrected = false
		}
	}
	if dr.conflict != nil && !req.ForceConflicts {
		drift.Corrected = false
		drift.Note = conflictNote(dr.conflict, false)
		warning = "" // the drift says it
	}
	return ch, drift, warning, nil
}

// removed plans the uninstall of releases that carry this stack's label
// but are no longer in its files, on every cluster the stack uses.
func (c *computer) removed(ctx context.Context) ([]*ReleaseChange, error) {
	st := c.in.Stack
	clusters := map[string]*config.ClusterSpec{"": nil}
	inStack := map[string]bool{}
	for _, r := range st.Releases {
		key := clusterName(r.Cluster)
		if r.Cluster != nil {
			clusters[key] = r.Cluster
		}
		inStack[key+"/"+r.Namespace+"/"+r.Name] = true
	}
	var out []*ReleaseChange
	for _, key := range slices.Sorted(maps.Keys(clusters)) {
		eng, err := c.in.Engine(ctx, clusters[key])
		if err != nil {
			return nil, err
		}
		var recs []*release.Release
		if err := c.do(ctx, func() error {
			recs, err = eng.Storage("").Driver.List(ctx, map[string]string{"owner": "helm", StackLabel: st.Name})
			return err
		}); err != nil {
			return nil, err
		}
		latest := map[string]*release.Release{}
		for _, r := range recs {
			k := key + "/" + r.Namespace + "/" + r.Name
			if cur := latest[k]; cur == nil || r.Version > cur.Version {
				latest[k] = r
			}
		}
		for _, k := range slices.Sorted(maps.Keys(latest)) {
			r := latest[k]
			if inStack[k] || r.Info.Status == release.StatusUninstalled {
				continue
			}
			rc, err := c.uninstall(ctx, eng, key, r)
			if err != nil {
				return nil, fmt.Errorf("removed release %s/%s: %w", r.Namespace, r.Name, err)
			}
			out = append(out, rc)
		}
	}
	return out, nil
}

func (c *computer) uninstall(ctx context.Context, eng *release.Engine, cluster string, r *release.Release) (*ReleaseChange, error) {
	rc := &ReleaseChange{
		Addr: "removed:" + r.Namespace + "/" + r.Name, Name: r.Name, Namespace: r.Namespace, Cluster: cluster,
		Action:   ActionUninstall,
		Observed: Observed{LastRevision: r.Version, LastStatus: string(r.Info.Status), ObjectVersions: map[string]string{}, ObjectHashes: map[string]string{}},
	}
	rc.Chart.Before = chartRef(r.Chart)
	for _, h := range r.Hooks {
		for _, ev := range h.Events {
			if ev == chart.HookPreDelete || ev == chart.HookPostDelete {
				rc.Hooks = append(rc.Hooks, HookRun{Name: h.Name, Kind: h.Kind, Path: h.Path, Events: []string{string(ev)}, Weight: h.Weight})
			}
		}
	}
	objs, err := eng.Kube().Parse(r.Manifest, r.Namespace)
	if err != nil {
		rc.Warnings = append(rc.Warnings, fmt.Sprintf("the recorded manifest of revision %d cannot be read: %v", r.Version, err))
		return rc, nil
	}
	kc := eng.Kube()
	for _, o := range slices.Backward(objs) {
		ref := kube.RefOf(o)
		if release.IsKept(o) {
			ch := objectChange(ref, ObjectNoOp)
			ch.Reason = "kept (helm.sh/resource-policy: keep)"
			rc.Objects = append(rc.Objects, ch)
			continue
		}
		var live *unstructured.Unstructured
		if err := c.do(ctx, func() error {
			var err error
			live, err = c.live(ctx, cluster, kc, ref)
			return err
		}); err != nil {
			return nil, err
		}
		if live == nil {
			continue
		}
		rc.Observed.ObjectVersions[ref.String()] = live.GetResourceVersion()
		rc.Observed.ObjectHashes[ref.String()] = contentHash(live)
		rc.Objects = append(rc.Objects, objectChange(ref, ObjectDelete))
	}
	return rc, nil
}
