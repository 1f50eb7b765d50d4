package planner

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/chart/postrender"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/sensitive"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/provenance"
	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Attribution of changed fields (plan.Change.Provenance). A release that
// upgrades has changed inputs: the leaves of its user values that differ
// from the deployed revision's, its chart (version or content) and the
// drift of its live objects. Which of them changed a field is found
// exactly, not by matching names: the release is rendered again once per
// changed input with that input alone reverted to the deployed revision's
// (a values leaf to its old value or absence, the chart to the one its
// record holds), and a field whose rendered value differs from the real
// rendering's was changed by that input. Drift needs no render: a field
// the live object changed since the last apply (ObjectDrift) names it.
//
// A field several inputs change names them all. A field no single revert
// changes, but which differs when every input is reverted at once (a
// template computing max(a, b) from two values that both changed), names
// every changed input, marked joint (plan.Change.ProvenanceJoint): which
// subset is the cause is not looked for. A field that differs in neither
// (the revision number a template prints, a lookup, a chart that does
// not render with an input reverted) names nothing. Fields that differ
// between two renders of the same inputs (a chart that calls lookup,
// randAlphaNum, now) name nothing either.
//
// Cost: one render per changed input, one more for an impure chart, one
// more when a field is left unexplained with two inputs or more. Over
// maxAttributedInputs changed inputs the release is not attributed
// (plan.ReleaseChange.Attribution says so) rather than guessed.

// Attribution says whether a plan attributes changed fields to their
// inputs.
type Attribution int

const (
	// AttributeFields attributes the changed fields of every upgraded
	// release (the default).
	AttributeFields Attribution = iota
	// AttributeNone skips attribution: no re-renders, no provenance.
	AttributeNone
)

// maxAttributedInputs bounds the changed inputs of a release that are
// attributed: each costs a render. A render of hack/bench's charts costs
// 1–3 ms; a release with more changed inputs than this is told apart as
// not attributed (docs/performance.md, "Attribution").
const maxAttributedInputs = 32

// changedInput is one input of a release that differs from its deployed
// revision, and how the release renders with it reverted.
type changedInput struct {
	origin plan.Origin
	// values are the user values with this input reverted; chart the
	// chart to render (the deployed one for the chart input); name and
	// namespace the release's ("": the request's; the deployed
	// revision's for the identity inputs).
	values          map[string]any
	chart           *chart.Chart
	name, namespace string
	// docs are the rendered objects with it reverted (nil: not rendered).
	docs map[string]any
}

// attribute sets the provenance of every changed field of rc's objects,
// and of its values diff's leaves. base is the revision the values are
// compared with; prep the release as planned.
func (c *computer) attribute(ctx context.Context, rd *release.Renderer, inst *config.ReleaseInstance, rn *renaming, rc *plan.ReleaseChange, req *release.Request, prep *release.Prepared, base *release.Release, red *sensitive.Redactor) error {
	if rc.Values != nil {
		for _, ch := range rc.Values.Changes {
			ch.Provenance = valuesChangeOrigins(rc.ValueOrigins, ch)
		}
	}
	if c.in.Attribution == AttributeNone || base == nil || prep.IsInstall || !hasFieldChanges(rc) {
		return nil
	}
	var inputs []*changedInput
	for _, l := range changedLeaves(orEmpty(base.Config), orEmpty(req.Values)) {
		o, ok := valueOrigin(rc.ValueOrigins, l.path)
		if !ok {
			o = plan.Origin{Input: "values " + l.path, Kind: plan.OriginValues}
		}
		inputs = append(inputs, &changedInput{origin: o, values: l.revert(req.Values, base.Config), chart: req.Chart})
	}
	inputs = append(inputs, c.identityInputs(inst, rn, req, base)...)
	var notes []string
	if in, note := chartInput(base, prep, req); in != nil {
		in.origin.Source = c.where(inst, plan.OriginChart, nil)
		inputs = append(inputs, in)
	} else if note != "" {
		notes = append(notes, note)
	}
	if len(inputs) > maxAttributedInputs {
		rc.Attribution = fmt.Sprintf("too many changed inputs to attribute (%d; at most %d are)", len(inputs), maxAttributedInputs)
		return nil
	}
	changed := changedDocs(rc)
	action := chart.ActionUpgrade
	opts := rd.RenderOptions(ctx, req, prep.Revision, action)
	opts.Lookup = sharedLookup(opts.Lookup)
	render := func(ch *chart.Chart, values map[string]any, name, namespace string) (map[string]any, error) {
		o := opts
		o.UserValues = values
		o.ReleaseName, o.Namespace = cmp.Or(name, o.ReleaseName), cmp.Or(namespace, o.Namespace)
		var r *chart.Rendered
		err := c.do(ctx, func() error {
			c.stats.add(&c.stats.Attributions, 1)
			var err error
			if r, err = chart.Render(ch, o); err != nil {
				return err
			}
			return postrender.Apply(ctx, r, req.Namespace, req.PostRender)
		})
		if err != nil {
			return nil, err
		}
		return objectDocs(r, changed), nil
	}
	current := objectDocs(prep.Rendered, changed)
	// Fields a second render of the same inputs changes are not any
	// input's doing.
	var unstable map[string][]string
	if len(inputs) > 0 && prep.Rendered.Impure {
		again, err := render(req.Chart, req.Values, "", "")
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rc.Attribution = "not attributed: the chart does not render again: " + red.Text(err.Error())
			return nil
		}
		unstable = differingPaths(current, again)
		current = again
	}
	for _, in := range inputs {
		docs, err := render(in.chart, in.values, in.name, in.namespace)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			notes = append(notes, fmt.Sprintf("%s is not attributed: the chart does not render with it reverted (%s)", in.origin.Input, red.Text(err.Error())))
			continue
		}
		in.docs = docs
	}
	drift := map[plan.ObjectRef]*plan.ObjectDrift{}
	for _, d := range rc.Drift {
		drift[d.Ref] = d
	}
	var together map[string]any // every input reverted, rendered when needed
	togetherDone := false
	for _, o := range rc.Objects {
		if o.Diff.Empty() {
			continue
		}
		key := docKey(o.Ref)
		for _, ch := range o.Diff.Changes {
			var origins []plan.Origin
			if !overlaps(unstable[key], ch.Path) {
				for _, in := range inputs {
					// An input without which the object is not rendered
					// (under this name) decides which object it is, not
					// what it holds: a fullnameOverride that keeps a
					// renamed release's object names.
					if in.docs != nil && in.docs[key] != nil && fieldDiffers(current[key], in.docs[key], ch.Path) {
						origins = append(origins, in.origin)
					}
				}
			}
			if in := ownershipInput(inputs, ch.Path); in != nil {
				// Helm's ownership annotations, which apply sets, not the
				// chart: they name the release and its namespace.
				origins = append(origins, in.origin)
			}
			if d := drift[o.Ref]; d != nil {
				if dc, ok := driftAt(d, ch.Path); ok {
					origins = append(origins, driftOrigin(d, dc))
				}
			}
			if len(origins) == 0 && len(inputs) > 1 && !overlaps(unstable[key], ch.Path) {
				if !togetherDone {
					togetherDone = true
					together = c.renderReverted(inputs, base, req, render)
				}
				if together != nil && fieldDiffers(current[key], together[key], ch.Path) {
					for _, in := range inputs {
						origins = append(origins, in.origin)
					}
					ch.ProvenanceJoint = true
				}
			}
			ch.Provenance = origins
		}
	}
	if len(notes) > 0 {
		rc.Attribution = strings.Join(notes, "; ")
	}
	return nil
}

// renderReverted renders the release with every changed input reverted
// at once; nil when it does not render.
func (c *computer) renderReverted(inputs []*changedInput, base *release.Release, req *release.Request, render func(*chart.Chart, map[string]any, string, string) (map[string]any, error)) map[string]any {
	ch := req.Chart
	var name, namespace string
	for _, in := range inputs {
		switch in.origin.Kind {
		case plan.OriginChart:
			ch = in.chart
		case plan.OriginReleaseName:
			name = in.name
		case plan.OriginNamespace:
			namespace = in.namespace
		}
	}
	docs, err := render(ch, base.Config, name, namespace)
	if err != nil {
		return nil
	}
	return docs
}

// identityInputs are the release's Helm name and namespace as changed
// inputs, when the deployed revision was rendered under others (a moved
// block renames the release: rn): reverting one renders the release under
// the deployed revision's.
func (c *computer) identityInputs(inst *config.ReleaseInstance, rn *renaming, req *release.Request, base *release.Release) []*changedInput {
	var out []*changedInput
	oldName := base.Name
	if rn != nil && rn.hist != nil {
		oldName = rn.oldName // planned from the old name's records
	} else {
		rn = nil // the new name has a revision of its own: nothing renames
	}
	if oldName != "" && oldName != req.Name {
		input := fmt.Sprintf("release name %s → %s", oldName, req.Name)
		if rn != nil {
			input += " (moved from " + rn.from.Addr.String() + ")"
		}
		o := plan.Origin{Input: input, Kind: plan.OriginReleaseName, Source: c.where(inst, plan.OriginReleaseName, rn)}
		out = append(out, &changedInput{origin: o, values: req.Values, chart: req.Chart, name: oldName})
	}
	if base.Namespace != "" && base.Namespace != req.Namespace {
		o := plan.Origin{Input: fmt.Sprintf("namespace %s → %s", base.Namespace, req.Namespace), Kind: plan.OriginNamespace, Source: c.where(inst, plan.OriginNamespace, rn)}
		out = append(out, &changedInput{origin: o, values: req.Values, chart: req.Chart, namespace: base.Namespace})
	}
	return out
}

// where is where the stack writes an identity input of inst
// (provenance.Where): a rename's moved block for its name.
func (c *computer) where(inst *config.ReleaseInstance, what plan.OriginKind, rn *renaming) *plan.Source {
	if c.in.Stack == nil || inst == nil {
		return nil
	}
	var moved hcl.Range
	if rn != nil {
		moved = rn.from.Block
	}
	return provenance.Where(c.in.Stack, inst, what, moved)
}

// ownershipInput is the identity input that Helm's ownership annotation
// at path names (meta.helm.sh/release-name: the release name;
// release-namespace: its namespace), nil when path is neither or that
// input did not change.
func ownershipInput(inputs []*changedInput, path string) *changedInput {
	var kind plan.OriginKind
	switch path {
	case `metadata.annotations["meta.helm.sh/release-name"]`:
		kind = plan.OriginReleaseName
	case `metadata.annotations["meta.helm.sh/release-namespace"]`:
		kind = plan.OriginNamespace
	default:
		return nil
	}
	for _, in := range inputs {
		if in.origin.Kind == kind {
			return in
		}
	}
	return nil
}

func hasFieldChanges(rc *plan.ReleaseChange) bool {
	for _, o := range rc.Objects {
		if !o.Diff.Empty() {
			return true
		}
	}
	return false
}

// chartInput is the chart as a changed input: its name, version or
// content differs from the deployed revision's. Reverting it renders the
// chart the record holds; a chart with subcharts cannot be rebuilt from a
// record, and the note says its change is not attributed.
func chartInput(base *release.Release, prep *release.Prepared, req *release.Request) (*changedInput, string) {
	before, after := base.Chart, prep.Rendered.Chart
	if before == nil || before.Metadata == nil || after == nil || after.Metadata == nil || sameChart(before, after) {
		return nil, ""
	}
	name := "chart " + before.Metadata.Version + " → " + after.Metadata.Version
	switch {
	case before.Metadata.Name != after.Metadata.Name:
		name = fmt.Sprintf("chart %s %s → %s %s", before.Metadata.Name, before.Metadata.Version, after.Metadata.Name, after.Metadata.Version)
	case before.Metadata.Version == after.Metadata.Version:
		name = "chart " + after.Metadata.Version + " (content changed)"
	}
	old, err := chart.FromRecord(before)
	if err != nil {
		return nil, fmt.Sprintf("%s is not attributed: %v", name, err)
	}
	return &changedInput{origin: plan.Origin{Input: name, Kind: plan.OriginChart}, values: req.Values, chart: old}, ""
}

// sameChart compares what renders of two recorded charts: metadata,
// templates and default values.
func sameChart(a, b *chart.Chart) bool {
	if a.Metadata.Name != b.Metadata.Name || a.Metadata.Version != b.Metadata.Version || len(a.Templates) != len(b.Templates) {
		return false
	}
	for i, t := range a.Templates {
		if t.Name != b.Templates[i].Name || string(t.Data) != string(b.Templates[i].Data) {
			return false
		}
	}
	return reflect.DeepEqual(a.Values, b.Values) || plan.EqualJSON(a.Values, b.Values)
}

// valueOrigin is where the values leaf at path (or the first leaf below
// it, for a structure) was set, from the release's ValueOrigins.
func valueOrigin(origins map[string]plan.Origin, path string) (plan.Origin, bool) {
	if len(origins) == 0 {
		return plan.Origin{}, false
	}
	if o, ok := origins[path]; ok {
		return o, true
	}
	var below []string
	for p := range origins {
		if plan.HasPrefix(p, path) {
			below = append(below, p)
		}
	}
	if len(below) == 0 {
		return plan.Origin{}, false
	}
	slices.Sort(below)
	// A structure the user sets is named by a leaf the user set, not by a
	// chart default merged beside it.
	for _, p := range below {
		if origins[p].Kind != plan.OriginChartDefault {
			return origins[p], true
		}
	}
	return origins[below[0]], true
}

// valuesChangeOrigins are where a change of the release's user values was
// set: its leaf's origin, or, for a structure added whole, the origins of
// its leaves, one per layer (the same kind, file and edits: the first leaf
// of each). A removed value is set nowhere now: none.
func valuesChangeOrigins(origins map[string]plan.Origin, ch *plan.Change) []plan.Origin {
	if len(origins) == 0 || ch.Op == plan.FieldRemove {
		return nil
	}
	if o, ok := origins[ch.Path]; ok {
		return []plan.Origin{o}
	}
	var out []plan.Origin
	var layers []string
	for _, l := range plan.Leaves(ch.Path, ch.After) {
		o, ok := origins[l.Path]
		if !ok {
			continue
		}
		layer := string(o.Kind)
		if o.Source != nil {
			layer += "\x00" + o.Source.File + "\x00" + o.Source.Env + "\x00" + o.Source.Flag
		}
		for _, v := range o.Via {
			for _, e := range v.Edits() {
				layer += "\x00" + e.String()
			}
		}
		if !slices.Contains(layers, layer) {
			layers = append(layers, layer)
			out = append(out, o)
		}
	}
	return out
}

// driftAt is the drift change of d at path, above it or below it.
func driftAt(d *plan.ObjectDrift, path string) (*plan.Change, bool) {
	if d.Missing {
		return &plan.Change{}, true
	}
	if d.Diff == nil {
		return nil, false
	}
	for _, c := range d.Diff.Changes {
		if plan.HasPrefix(path, c.Path) || plan.HasPrefix(c.Path, path) {
			return c, true
		}
	}
	return nil, false
}

func driftOrigin(d *plan.ObjectDrift, c *plan.Change) plan.Origin {
	switch {
	case d.Missing:
		return plan.Origin{Input: "drift (the object was deleted)", Kind: plan.OriginDrift}
	case c.Manager != "":
		return plan.Origin{Input: "drift (" + c.Manager + ")", Kind: plan.OriginDrift}
	}
	return plan.Origin{Input: "drift", Kind: plan.OriginDrift}
}

// objectDocs are the rendered release objects, decoded, by docKey; only those keep reports true of, when keep is
// not nil. Provenance looks at the objects that change: a large release's
// others are not decoded again for each input it renders.
func objectDocs(r *chart.Rendered, keep func(key string) bool) map[string]any {
	out := map[string]any{}
	for _, m := range r.Manifests {
		gv, _ := schema.ParseGroupVersion(m.APIVersion)
		key := gv.Group + "/" + m.Kind + "/" + m.Name
		if m.Kind == "" || keep != nil && !keep(key) {
			continue
		}
		out[key] = decodeDoc(m.Document())
	}
	return out
}

// changedDocs reports whether an object of key has changes in rc (the
// objects provenance attributes).
func changedDocs(rc *plan.ReleaseChange) func(key string) bool {
	keys := map[string]bool{}
	for _, o := range rc.Objects {
		if !o.Diff.Empty() {
			keys[docKey(o.Ref)] = true
		}
	}
	return func(key string) bool { return keys[key] }
}

// docKey pairs an object change with its rendered document: the
// namespace is left out (a template may leave it to the release's).
func docKey(ref plan.ObjectRef) string {
	return ref.Group + "/" + ref.Kind + "/" + ref.Name
}

// differingPaths are the paths that differ between two renders, by object.
func differingPaths(a, b map[string]any) map[string][]string {
	out := map[string][]string{}
	for k, v := range a {
		w, ok := b[k]
		if !ok {
			out[k] = []string{""}
			continue
		}
		if d := plan.Compare(v, w); d != nil {
			for _, c := range d.Changes {
				out[k] = append(out[k], c.Path)
			}
		}
	}
	return out
}

// fieldDiffers reports whether the field at path (a plan.Change path)
// differs between two renderings of an object. A field neither holds (a
// default the API server adds) is judged by its nearest ancestor either
// holds: it differs when only one of them holds that ancestor (the input
// creates or removes the structure around it).
func fieldDiffers(a, b any, path string) bool {
	if (a == nil) != (b == nil) {
		return true
	}
	if a == nil {
		return false
	}
	segs, ok := parsePath(path)
	if !ok {
		return !plan.EqualJSON(a, b)
	}
	for n := len(segs); n >= 0; n-- {
		va, okA := lookupPath(a, segs[:n])
		vb, okB := lookupPath(b, segs[:n])
		switch {
		case !okA && !okB:
			continue
		case okA != okB:
			return true
		case n == len(segs):
			return !plan.EqualJSON(va, vb)
		default:
			return false
		}
	}
	return false
}
