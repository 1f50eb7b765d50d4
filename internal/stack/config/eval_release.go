package config

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	ctyyaml "github.com/zclconf/go-cty-yaml"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// MaxInstances bounds count and for_each, so that a typo such as
// count = 1e9 is an error rather than an out-of-memory crash.
const MaxInstances = 1000

// expand evaluates count or for_each and records the instance keys.
func (e *evaluator) expand(rel *Release) hcl.Diagnostics {
	switch {
	case rel.Count != nil:
		if e.badExprs[rel.Count] {
			return nil
		}
		val, diags := e.evalSimple(rel.Count, "count")
		if diags.HasErrors() {
			return diags
		}
		n, d := asInt(val, rel.Count, "count")
		diags = append(diags, d...)
		if d.HasErrors() {
			return diags
		}
		if n < 0 || n > MaxInstances {
			return append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid count",
				Detail:   fmt.Sprintf("count must be between 0 and %d, not %d.", MaxInstances, n),
				Subject:  rel.Count.Range().Ptr(),
			})
		}
		for i := range n {
			e.expansions[rel.Name] = append(e.expansions[rel.Name], instanceKeyValue{key: IntKey(i)})
		}
		return diags
	case rel.ForEach != nil:
		if e.badExprs[rel.ForEach] {
			return nil
		}
		val, diags := e.evalSimple(rel.ForEach, "for_each")
		if diags.HasErrors() {
			return diags
		}
		bad := func(detail string) hcl.Diagnostics {
			return append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid for_each",
				Detail:   detail,
				Subject:  rel.ForEach.Range().Ptr(),
			})
		}
		if val.IsMarked() {
			return bad("for_each cannot use sensitive values: the keys appear in release addresses.")
		}
		if !val.IsWhollyKnown() {
			return bad("for_each must be known before apply.")
		}
		if val.IsNull() {
			return bad("for_each must be a map, an object or a set of strings, not null.")
		}
		ty := val.Type()
		switch {
		case ty.IsMapType() || ty.IsObjectType():
		case ty.IsSetType() && ty.ElementType() == cty.String:
		default:
			return bad(fmt.Sprintf("for_each must be a map, an object or a set of strings, not %s. Convert a list with toset().", ty.FriendlyName()))
		}
		if val.LengthInt() > MaxInstances {
			return bad(fmt.Sprintf("for_each may have at most %d elements.", MaxInstances))
		}
		for it := val.ElementIterator(); it.Next(); {
			k, v := it.Element()
			if k.IsNull() || v.IsNull() && ty.IsSetType() {
				return bad("for_each keys cannot be null.")
			}
			if ty.IsSetType() {
				k = v
			}
			e.expansions[rel.Name] = append(e.expansions[rel.Name], instanceKeyValue{key: StringKey(k.AsString()), value: v})
		}
		return diags
	default:
		e.expansions[rel.Name] = []instanceKeyValue{{key: NoKey}}
		return nil
	}
}

// releaseValue is what release.<name> evaluates to in expressions: an object
// for a single instance, a tuple for count, an object keyed by for_each key.
func (e *evaluator) releaseValue(name string, applied map[ReleaseInstanceAddr]AppliedRelease) cty.Value {
	rel := e.cfg.Releases[name]
	if _, ok := e.expansions[name]; !ok {
		return cty.DynamicVal
	}
	base, _ := e.releaseValues.Get(name, func() (releaseBase, error) { return e.releaseBase(rel), nil })
	// The instances applied replace their unapplied values: every reader
	// of a block of 1,000 would otherwise build 1,000 objects.
	var patched []cty.Value
	var patchedMap map[string]cty.Value
	for addr, a := range applied {
		if addr.Release != rel.Addr() {
			continue
		}
		v := e.instanceValue(addr, &a)
		switch {
		case rel.Count != nil:
			i, ok := base.index[addr.Key]
			if !ok {
				continue
			}
			if patched == nil {
				patched = base.val.AsValueSlice()
			}
			patched[i] = v
		case rel.ForEach != nil:
			if _, ok := base.index[addr.Key]; !ok {
				continue
			}
			if patchedMap == nil {
				patchedMap = base.val.AsValueMap()
			}
			patchedMap[addr.Key.Str] = v
		case addr.Key == NoKey:
			return v
		}
	}
	switch {
	case patched != nil:
		return cty.TupleVal(patched)
	case patchedMap != nil:
		return cty.ObjectVal(patchedMap)
	}
	return base.val
}

// releaseBase is the value of release block rel before apply (release.x in
// expressions: an instance, or a tuple or object of them), computed once:
// Evaluate asks for it only once rel's instances are evaluated.
type releaseBase struct {
	val   cty.Value
	index map[InstanceKey]int // each instance's position
}

func (e *evaluator) releaseBase(rel *Release) releaseBase {
	kvs := e.expansions[rel.Name]
	b := releaseBase{index: make(map[InstanceKey]int, len(kvs))}
	for i, kv := range kvs {
		b.index[kv.key] = i
	}
	switch {
	case rel.Count != nil:
		vals := make([]cty.Value, len(kvs))
		for i, kv := range kvs {
			vals[i] = e.instanceValue(rel.Addr().Instance(kv.key), nil)
		}
		b.val = cty.TupleVal(vals)
	case rel.ForEach != nil:
		vals := map[string]cty.Value{}
		for _, kv := range kvs {
			vals[kv.key.Str] = e.instanceValue(rel.Addr().Instance(kv.key), nil)
		}
		b.val = cty.ObjectVal(vals)
	default:
		b.val = e.instanceValue(rel.Addr().Instance(NoKey), nil)
	}
	return b
}

// instanceValue is release.x (or one element of it) for an instance:
// name, namespace, chart and version once evaluated, and revision, status
// and resources once applied (a nil a: unknown).
func (e *evaluator) instanceValue(addr ReleaseInstanceAddr, a *AppliedRelease) cty.Value {
	st, ok := e.static[addr]
	if !ok || !st.ok {
		return cty.DynamicVal
	}
	attrs := map[string]cty.Value{
		"name":      cty.StringVal(st.name),
		"namespace": cty.StringVal(st.namespace),
		"chart":     cty.StringVal(st.chart),
		"version":   cty.StringVal(st.version),
		"revision":  cty.UnknownVal(cty.Number),
		"status":    cty.UnknownVal(cty.String),
		"resources": cty.DynamicVal,
	}
	if a != nil {
		attrs["revision"] = cty.NumberIntVal(int64(a.Revision))
		attrs["status"] = cty.StringVal(a.Status)
		if a.Resources != cty.NilVal {
			attrs["resources"] = a.Resources
		}
	}
	return cty.ObjectVal(attrs)
}

// blockScope is the scope of an instance of rel but for count and each:
// var, local, environment, cluster and the releases it refers to, as
// applied. Before apply (applied nil) every instance of the block has the
// same, built once per block; the caller gets its own copy of the map.
func (e *evaluator) blockScope(rel *Release, applied map[ReleaseInstanceAddr]AppliedRelease) map[string]cty.Value {
	build := func() map[string]cty.Value {
		vars := e.scopeVariables(e.refs[rel.Name])
		vars["cluster"] = objectOrEmpty(e.clusterVals)
		releases := map[string]cty.Value{}
		deps, _ := e.blockDeps.Get(rel.Name, func() ([]ReleaseAddr, error) { return e.releases.DependenciesOf(rel.Addr()), nil })
		for _, dep := range deps {
			releases[dep.Name] = e.releaseValue(dep.Name, applied)
		}
		vars["release"] = objectOrEmpty(releases)
		return vars
	}
	if applied != nil {
		return build()
	}
	shared, _ := e.blockScopes.Get(rel.Name, func() (map[string]cty.Value, error) { return build(), nil })
	return maps.Clone(shared)
}

// evalInstance evaluates one release instance. applied holds the
// after-apply attributes of dependencies (nil during Evaluate, when static
// is set to the attributes dependents may refer to).
func (e *evaluator) evalInstance(rel *Release, kv instanceKeyValue, applied map[ReleaseInstanceAddr]AppliedRelease, static *staticAttrs) (*ReleaseInstance, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	addr := rel.Addr().Instance(kv.key)
	vars := e.blockScope(rel, applied)
	switch kv.key.Kind {
	case StringKeyKind:
		vars["each"] = cty.ObjectVal(map[string]cty.Value{"key": kv.key.Value(), "value": kv.value})
	case IntKeyKind:
		vars["count"] = cty.ObjectVal(map[string]cty.Value{"index": kv.key.Value()})
	}
	ctx := &hcl.EvalContext{Variables: vars, Functions: e.funcs}

	// eval returns the value of an attribute and whether it was set and
	// evaluated without error.
	eval := func(expr hcl.Expression) (cty.Value, bool) {
		if expr == nil || e.badExprs[expr] {
			return cty.NilVal, false
		}
		val, d := expr.Value(ctx)
		diags = append(diags, nameKeys(d)...)
		if d.HasErrors() {
			return cty.NilVal, false
		}
		return val, true
	}
	str := func(expr hcl.Expression, attr string, def string) (string, bool) {
		val, ok := eval(expr)
		if !ok {
			return def, expr == nil
		}
		s, d := asString(val, expr, attr)
		diags = append(diags, d...)
		if d.HasErrors() {
			return def, false
		}
		return s, true
	}
	boolean := func(expr hcl.Expression, attr string, def bool) bool {
		val, ok := eval(expr)
		if !ok {
			return def
		}
		b, d := asBool(val, expr, attr)
		diags = append(diags, d...)
		if d.HasErrors() {
			return def
		}
		return b
	}

	ri := &ReleaseInstance{
		Addr:      addr,
		DeclRange: rel.DeclRange,
		Known:     true,
	}

	// Attributes known before apply; dependents may refer to them.
	defName := rel.Name
	if kv.key.Kind == StringKeyKind {
		defName = rel.Name + "-" + kv.key.Str
	} else if kv.key.Kind == IntKeyKind {
		defName = fmt.Sprintf("%s-%d", rel.Name, kv.key.Int)
	}
	if kept, ok := e.keptNames[addr]; ok && rel.ReleaseName == nil {
		defName = kept
	}
	var okName, okNS, okChart, okVersion bool
	ri.Name, okName = str(rel.ReleaseName, "name", defName)
	if okName {
		if d := checkReleaseName(ri.Name, rel.ReleaseName, rel.DeclRange); d != nil {
			diags = append(diags, d)
			okName = false
		}
	}
	ri.Namespace, okNS = str(rel.Namespace, "namespace", e.defaultNamespace)
	if okNS && rel.Namespace != nil {
		d := checkDNSLabel(ri.Namespace, "namespace", rel.Namespace)
		diags = append(diags, d...)
		okNS = !d.HasErrors()
	}
	ri.Chart, okChart = str(rel.Chart, "chart", "")
	if rel.Manifests != nil {
		ri.Chart, ri.ChartSource = "manifests", ChartManifests
		if val, ok := eval(rel.Manifests); ok {
			files, d := e.manifestFiles(val, rel.Manifests)
			diags = append(diags, d...)
			ri.Manifests = files
			okChart = !d.HasErrors()
		} else {
			okChart = false
		}
	}
	if okChart && rel.Chart != nil {
		d := e.resolveChart(ri, rel.Chart)
		diags = append(diags, d...)
		okChart = !d.HasErrors()
	}
	ri.Version, okVersion = str(rel.Version, "version", "")
	if okVersion && ri.Version != "" {
		if _, err := semver.NewConstraint(ri.Version); err != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid version constraint",
				Detail:   fmt.Sprintf("%q is not a semantic version constraint (such as \"1.2.3\", \"^15.2.0\" or \">= 1.0, < 2\"): %s.", ri.Version, err),
				Subject:  rel.Version.Range().Ptr(),
			})
			okVersion = false
		}
	}
	if static != nil {
		*static = staticAttrs{
			name: ri.Name, namespace: ri.Namespace, chart: ri.Chart, version: ri.Version,
			ok: okName && okNS && okChart && okVersion,
		}
	}

	ri.CreateNamespace = boolean(rel.CreateNamespace, "create_namespace", false)
	ri.Wait = boolean(rel.Wait, "wait", true)
	ri.WaitForJobs = boolean(rel.WaitForJobs, "wait_for_jobs", false)
	ri.Atomic = boolean(rel.Atomic, "atomic", false)
	ri.CleanupOnFail = boolean(rel.CleanupOnFail, "cleanup_on_fail", false)
	ri.DisableHooks = boolean(rel.DisableHooks, "disable_hooks", false)
	ri.TakeOwnership = boolean(rel.TakeOwnership, "take_ownership", false)
	ri.ExpandClaims = boolean(rel.ExpandClaims, "expand_claims", false)
	ri.AdoptFromStack, _ = str(rel.AdoptFromStack, "adopt_from_stack", "")
	ri.Adopt = boolean(rel.Adopt, "adopt", false)
	ri.HealthChecks = rel.HealthChecks
	if s, ok := str(rel.CRDs, "crds", string(CRDsCreate)); ok {
		p, d := crdPolicy(s, rel.CRDs)
		diags = append(diags, d...)
		ri.CRDs = p
	}

	if s, ok := str(rel.Timeout, "timeout", ""); ok && rel.Timeout != nil {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid timeout",
				Detail:   fmt.Sprintf("%q is not a positive duration such as \"90s\", \"5m\" or \"1h30m\".", s),
				Subject:  rel.Timeout.Range().Ptr(),
			})
		} else {
			ri.Timeout = d
		}
	}

	ri.HistoryMax = DefaultHistoryMax
	if val, ok := eval(rel.HistoryMax); ok {
		n, d := asInt(val, rel.HistoryMax, "history_max")
		diags = append(diags, d...)
		if !d.HasErrors() {
			if n < 0 {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Invalid history_max",
					Detail:   "history_max must be 0 (unlimited) or a positive number of revisions to keep.",
					Subject:  rel.HistoryMax.Range().Ptr(),
				})
			}
			ri.HistoryMax = n
		}
	}

	if val, ok := eval(rel.IgnoreChanges); ok {
		ignore, d := ignoreChanges(val, rel.IgnoreChanges)
		diags = append(diags, d...)
		ri.IgnoreChanges = ignore
	}

	if val, ok := eval(rel.Patches); ok {
		patches, d := patches(val, rel.Patches)
		diags = append(diags, d...)
		ri.Patches = patches
	}
	if val, ok := eval(rel.PostRenderer); ok && e.root != "" && !val.IsNull() {
		diags = append(diags, confinedDiag("post_renderer", rel.PostRenderer,
			fmt.Errorf("the controller runs no program of a stack (a program reads whatever the controller may); use patches")))
	} else if ok {
		pr, d := postRenderer(val, rel.PostRenderer)
		diags = append(diags, d...)
		// A command written as a path is relative to the stack directory;
		// a bare name is looked up in PATH, as Helm does.
		if pr != nil && strings.Contains(pr.Command, "/") && !filepath.IsAbs(pr.Command) {
			pr.Command = filepath.Join(e.cfg.Dir, pr.Command)
		}
		ri.PostRenderer = pr
	}

	if val, ok := eval(rel.Labels); ok {
		labels, d := asStringMap(val, rel.Labels, "labels")
		diags = append(diags, d...)
		ri.Labels = labels
	}

	if val, ok := eval(rel.Values); ok {
		layers, known, d := valuesLayers(val, rel.Values, func(ex hcl.Expression) string { return e.layerFile(ex, ctx) })
		diags = append(diags, d...)
		ri.Values = layers
		ri.Known = ri.Known && known
	}
	for _, s := range []struct {
		expr      hcl.Expression
		attr      string
		dst       *map[string]cty.Value
		sensitive bool
	}{{rel.Set, "set", &ri.Set, false}, {rel.SetSensitive, "set_sensitive", &ri.SetSensitive, true}} {
		val, ok := eval(s.expr)
		if !ok {
			continue
		}
		m, known, d := setMap(val, s.expr, s.attr, s.sensitive)
		diags = append(diags, d...)
		*s.dst = m
		ri.Known = ri.Known && known
	}

	if rel.Cluster != nil && !e.badExprs[rel.Cluster] {
		trav, d := hcl.AbsTraversalForExpr(rel.Cluster)
		if d.HasErrors() || len(trav) != 2 || trav.RootName() != "cluster" {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid cluster reference",
				Detail:   "cluster must be a reference to a cluster block, such as cluster.dev.",
				Subject:  rel.Cluster.Range().Ptr(),
			})
		} else if a, ok := trav[1].(hcl.TraverseAttr); ok {
			ri.Cluster = e.clusters[a.Name]
		}
	}

	ri.DependsOn = e.dependencies(rel, kv.key)
	return ri, diags
}

// dependencies lists every instance the instance with key self depends on,
// through references and depends_on, each once with the first range that
// created it. A reference to a release depends on all its instances, except
// release.NAME["key"] (that instance) and release.NAME[each.key] or
// release.NAME[count.index] (the instance with the same key, if any).
func (e *evaluator) dependencies(rel *Release, self InstanceKey) []Dependency {
	seen := map[ReleaseInstanceAddr]bool{}
	var out []Dependency
	add := func(name string, only *InstanceKey, rng hcl.Range) {
		target, ok := e.cfg.Releases[name]
		if !ok || name == rel.Name {
			return
		}
		for _, kv := range e.expansions[name] {
			if only != nil && kv.key != *only {
				continue
			}
			a := target.Addr().Instance(kv.key)
			if !seen[a] {
				seen[a] = true
				out = append(out, Dependency{Addr: a, Range: rng})
			}
		}
	}
	for _, d := range rel.DependsOn {
		add(d.Release.Name, nil, d.Range)
	}
	for _, ref := range e.refs[rel.Name] {
		if ref.Kind != RefRelease {
			continue
		}
		only := ref.Key
		if ref.SameKey {
			only = &self
		}
		add(ref.Name, only, ref.Range)
	}
	slices.SortFunc(out, func(a, b Dependency) int {
		switch {
		case a.Addr.Less(b.Addr):
			return -1
		case b.Addr.Less(a.Addr):
			return 1
		}
		return 0
	})
	return out
}

// resolveChart classifies the chart reference and resolves its repository.
func (e *evaluator) resolveChart(ri *ReleaseInstance, expr hcl.Expression) hcl.Diagnostics {
	c := ri.Chart
	bad := func(summary, detail string) hcl.Diagnostics {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: expr.Range().Ptr()}}
	}
	switch {
	case c == "":
		return bad("Invalid chart", "chart cannot be empty.")
	case len(c) > 6 && c[:6] == "oci://":
		ri.ChartSource = ChartOCI
		return nil
	case isLocalChart(c):
		// Unlike file(), charts may live outside the stack directory
		// (../../charts/api in a monorepo); the chart engine reads them.
		// Confined, they must still lie inside the artifact.
		if e.root != "" {
			if err := insideRoot(e.root, e.cfg.Dir, c); err != nil {
				return hcl.Diagnostics{confinedDiag("chart", expr, err)}
			}
		}
		ri.ChartSource = ChartLocal
		return nil
	}
	repo, name, ok := cutOnce(c, '/')
	if !ok || repo == "" || name == "" {
		return bad("Invalid chart", fmt.Sprintf("%q is not a chart reference. Use a path (./charts/app), repository/chart (with a repository block) or oci://registry/path/chart.", c))
	}
	spec, ok := e.repositories[repo]
	if !ok {
		return bad("Reference to undeclared repository", fmt.Sprintf("The chart %q names the repository %q, but the stack declares no repository of that name. Declare it with a repository %q block, or write a local path as ./%s.", c, repo, repo, c))
	}
	ri.ChartSource = ChartRepo
	ri.Repository = spec
	return nil
}

func isLocalChart(c string) bool {
	return c == "." || c == ".." || c[0] == '/' || c[0] == '~' ||
		len(c) > 1 && c[:2] == "./" || len(c) > 2 && c[:3] == "../" ||
		len(c) > 4 && c[len(c)-4:] == ".tgz"
}

func cutOnce(s string, sep byte) (string, string, bool) {
	i, n := -1, 0
	for j := 0; j < len(s); j++ {
		if s[j] == sep {
			if i < 0 {
				i = j
			}
			n++
		}
	}
	if n != 1 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// valuesLayers checks the values list: each element YAML text or an object.
// known is false when some layer depends on values known only after apply.
// fileOf says which file a layer's expression reads whole (layerFile).
func valuesLayers(val cty.Value, expr hcl.Expression, fileOf func(hcl.Expression) string) (layers []ValuesLayer, known bool, diags hcl.Diagnostics) {
	unmarked, _ := val.Unmark()
	if !unmarked.IsKnown() {
		return nil, false, nil
	}
	if unmarked.IsNull() {
		return nil, true, nil
	}
	ty := unmarked.Type()
	if !ty.IsListType() && !ty.IsTupleType() {
		return nil, true, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Incorrect attribute value type",
			Detail:   fmt.Sprintf("values must be a list of YAML strings and objects, not %s. Wrap a single layer in brackets: values = [...].", ty.FriendlyName()),
			Subject:  expr.Range().Ptr(),
		}}
	}
	// Element ranges, when the list is written literally.
	var elemRanges []hcl.Range
	var elemFiles []string
	if tup, ok := expr.(*hclsyntax.TupleConsExpr); ok {
		for _, ex := range tup.Exprs {
			elemRanges = append(elemRanges, ex.Range())
			elemFiles = append(elemFiles, fileOf(ex))
		}
	}
	// Marks on the list itself apply to every layer.
	_, listMarks := val.Unmark()
	known = true
	i := 0
	for it := unmarked.ElementIterator(); it.Next(); i++ {
		_, v := it.Element()
		v = v.WithMarks(listMarks)
		rng := expr.Range()
		if i < len(elemRanges) {
			rng = elemRanges[i]
		}
		uv, _ := v.Unmark()
		t := uv.Type()
		switch {
		case t == cty.String:
			if !uv.IsKnown() {
				known = false
			} else if uv.IsNull() {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid values layer", Detail: "A values layer cannot be null.", Subject: &rng})
				continue
			} else if d := checkYAMLValues(uv.AsString(), rng); d != nil {
				diags = append(diags, d)
				continue
			}
			layer := ValuesLayer{Kind: ValuesYAML, Value: v, Range: rng}
			if i < len(elemFiles) {
				layer.File = elemFiles[i]
			}
			layers = append(layers, layer)
		case t.IsObjectType() || t.IsMapType() || t == cty.DynamicPseudoType:
			if uv.IsKnown() && uv.IsNull() {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid values layer", Detail: "A values layer cannot be null.", Subject: &rng})
				continue
			}
			if !v.IsWhollyKnown() {
				known = false
			}
			layers = append(layers, ValuesLayer{Kind: ValuesObject, Value: v, Range: rng})
		default:
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid values layer",
				Detail:   fmt.Sprintf("Each values layer is YAML text (for example file(\"values.yaml\")) or an object, not %s.", t.FriendlyName()),
				Subject:  &rng,
			})
		}
	}
	return layers, known, diags
}

// layerFile is the absolute path of the file a values layer written as
// file(PATH) reads, "" for any other expression or a sensitive path.
func (e *evaluator) layerFile(expr hcl.Expression, ctx *hcl.EvalContext) string {
	call, ok := expr.(*hclsyntax.FunctionCallExpr)
	if !ok || call.Name != "file" || len(call.Args) != 1 || call.ExpandFinal {
		return ""
	}
	v, diags := call.Args[0].Value(ctx)
	if diags.HasErrors() || v.IsMarked() || !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
		return ""
	}
	p, err := stackPath(v.AsString())
	if err != nil {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.cfg.Dir, p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p
}

// blankYAML reports whether YAML text holds no value: only blank lines,
// comments and document markers.
func blankYAML(text string) bool {
	for line := range strings.Lines(text) {
		l := strings.TrimSpace(line)
		if l != "" && !strings.HasPrefix(l, "#") && l != "---" && l != "..." {
			return false
		}
	}
	return true
}

// checkYAMLValues checks that YAML text is a mapping (or empty). The error
// never quotes the text, which may be sensitive.
func checkYAMLValues(text string, rng hcl.Range) *hcl.Diagnostic {
	if blankYAML(text) {
		return nil // an empty layer, as an empty -f file is to Helm
	}
	ty, err := ctyyaml.ImpliedType([]byte(text))
	if err != nil {
		return &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid YAML in values",
			Detail:   fmt.Sprintf("The values layer is not valid YAML: %s.", err),
			Subject:  &rng,
		}
	}
	if !ty.IsObjectType() && !ty.IsMapType() && ty != cty.DynamicPseudoType {
		return &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid YAML in values",
			Detail:   fmt.Sprintf("Values YAML must be a mapping of keys to values, not %s.", ty.FriendlyName()),
			Subject:  &rng,
		}
	}
	return nil
}

// setMap reads set / set_sensitive: a map from Helm --set paths to values.
func setMap(val cty.Value, expr hcl.Expression, attr string, sensitive bool) (map[string]cty.Value, bool, hcl.Diagnostics) {
	uv, marks := val.Unmark()
	if !uv.IsKnown() {
		return nil, false, nil
	}
	if uv.IsNull() {
		return nil, true, nil
	}
	ty := uv.Type()
	if !ty.IsObjectType() && !ty.IsMapType() {
		return nil, true, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Incorrect attribute value type",
			Detail:   fmt.Sprintf("%s must be a map from value paths to values, such as { \"image.tag\" = \"1.2.3\" }, not %s.", attr, ty.FriendlyName()),
			Subject:  expr.Range().Ptr(),
		}}
	}
	out := map[string]cty.Value{}
	known := true
	for it := uv.ElementIterator(); it.Next(); {
		k, v := it.Element()
		v = v.WithMarks(marks)
		if sensitive {
			v = v.Mark(Sensitive)
		}
		if !v.IsWhollyKnown() {
			known = false
		}
		out[k.AsString()] = v
	}
	return out, known, nil
}

// checkUniqueNames refuses two instances that would be the same Helm release
// (same name and namespace on the same cluster).
func checkUniqueNames(instances []*ReleaseInstance) hcl.Diagnostics {
	var diags hcl.Diagnostics
	type id struct{ cluster, namespace, name string }
	seen := map[id]*ReleaseInstance{}
	for _, ri := range instances {
		cluster := ""
		if ri.Cluster != nil {
			cluster = ri.Cluster.Name
		}
		k := id{cluster, ri.Namespace, ri.Name}
		if prev, ok := seen[k]; ok {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate Helm release name",
				Detail: fmt.Sprintf("%s and %s would both be the Helm release %q in namespace %q. Give them different names with the name attribute.",
					prev.Addr, ri.Addr, ri.Name, ri.Namespace),
				Subject: ri.DeclRange.Ptr(),
			})
			continue
		}
		seen[k] = ri
	}
	return diags
}

func sortInstances(rs []*ReleaseInstance) {
	slices.SortFunc(rs, func(a, b *ReleaseInstance) int {
		switch {
		case a.Addr.Less(b.Addr):
			return -1
		case b.Addr.Less(a.Addr):
			return 1
		}
		return 0
	})
}

var (
	releaseNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	dnsLabelRE    = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
)

// checkReleaseName applies Helm's rules for release names.
func checkReleaseName(name string, expr hcl.Expression, decl hcl.Range) *hcl.Diagnostic {
	if len(name) <= 53 && releaseNameRE.MatchString(name) {
		return nil
	}
	subject := decl
	if expr != nil {
		subject = expr.Range()
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid Helm release name",
		Detail:   fmt.Sprintf("%q is not a valid Helm release name: at most 53 lowercase letters, digits, \"-\" and \".\", starting and ending with a letter or digit. Set name explicitly if the block label does not qualify.", name),
		Subject:  &subject,
	}
}

func checkDNSLabel(s, attr string, expr hcl.Expression) hcl.Diagnostics {
	if len(s) <= 63 && dnsLabelRE.MatchString(s) {
		return nil
	}
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Invalid " + attr,
		Detail:   fmt.Sprintf("%q is not a valid Kubernetes namespace name: at most 63 lowercase letters, digits and \"-\", starting and ending with a letter or digit.", s),
		Subject:  expr.Range().Ptr(),
	}}
}

// convertAttr converts an attribute value to ty with a diagnostic that
// names the attribute.
func convertAttr(val cty.Value, ty cty.Type, expr hcl.Expression, attr string) (cty.Value, hcl.Diagnostics) {
	conv, err := convert.Convert(val, ty)
	if err != nil {
		return cty.UnknownVal(ty), hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Incorrect attribute value type",
			Detail:   fmt.Sprintf("Inappropriate value for attribute %q: %s required, got %s.", attr, ty.FriendlyNameForConstraint(), val.Type().FriendlyName()),
			Subject:  expr.Range().Ptr(),
		}}
	}
	return conv, nil
}

// knownAttr converts val to ty and requires it wholly known and free of
// sensitive marks, nested ones included: for attributes that decide what
// the release is before anything is applied, and that plans show.
func knownAttr(val cty.Value, ty cty.Type, expr hcl.Expression, attr string) (cty.Value, hcl.Diagnostics) {
	conv, diags := convertAttr(val, ty, expr, attr)
	if diags.HasErrors() {
		return conv, diags
	}
	// ContainsMarked, not IsMarked: a map or list is not marked itself
	// when only an element is (labels = { t = var.token }).
	if conv.ContainsMarked() {
		return cty.UnknownVal(ty), hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Sensitive value not allowed",
			Detail:   fmt.Sprintf("%q cannot be sensitive: it is shown in plans and stored in release records. Use set_sensitive or values for secrets.", attr),
			Subject:  expr.Range().Ptr(),
		}}
	}
	if !conv.IsWhollyKnown() {
		return cty.UnknownVal(ty), hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Value known only after apply",
			Detail:   fmt.Sprintf("%q must be known before apply, but it depends on a release attribute (revision, status or resources) that is known only after apply.", attr),
			Subject:  expr.Range().Ptr(),
		}}
	}
	return conv, nil
}

func asString(val cty.Value, expr hcl.Expression, attr string) (string, hcl.Diagnostics) {
	conv, diags := knownAttr(val, cty.String, expr, attr)
	if diags.HasErrors() || conv.IsNull() {
		return "", diags
	}
	return conv.AsString(), nil
}

func asBool(val cty.Value, expr hcl.Expression, attr string) (bool, hcl.Diagnostics) {
	conv, diags := knownAttr(val, cty.Bool, expr, attr)
	if diags.HasErrors() || conv.IsNull() {
		return false, diags
	}
	return conv.True(), nil
}

func asInt(val cty.Value, expr hcl.Expression, attr string) (int, hcl.Diagnostics) {
	conv, diags := knownAttr(val, cty.Number, expr, attr)
	if diags.HasErrors() || conv.IsNull() {
		return 0, diags
	}
	bf := conv.AsBigFloat()
	i, acc := bf.Int64()
	if bf.IsInt() && (acc != 0 || i > 1<<31 || i < -(1<<31)) {
		return 0, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Incorrect attribute value type",
			Detail:   fmt.Sprintf("Inappropriate value for attribute %q: the number is too large.", attr),
			Subject:  expr.Range().Ptr(),
		}}
	}
	if !bf.IsInt() {
		return 0, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Incorrect attribute value type",
			Detail:   fmt.Sprintf("Inappropriate value for attribute %q: a whole number required.", attr),
			Subject:  expr.Range().Ptr(),
		}}
	}
	return int(i), nil
}

func asStringMap(val cty.Value, expr hcl.Expression, attr string) (map[string]string, hcl.Diagnostics) {
	conv, diags := knownAttr(val, cty.Map(cty.String), expr, attr)
	if diags.HasErrors() || conv.IsNull() {
		return nil, diags
	}
	out := map[string]string{}
	for it := conv.ElementIterator(); it.Next(); {
		k, v := it.Element()
		if v.IsNull() {
			continue
		}
		out[k.AsString()] = v.AsString()
	}
	return out, nil
}
