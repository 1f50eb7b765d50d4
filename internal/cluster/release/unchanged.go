package release

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
)

// SameAsDeployed reports whether the revision p prepares would record
// what the deployed revision does: it is the newest record, and the
// chart (name, version, app version), the values, the manifest, the
// hooks and the labels convoy writes are the same. Such a revision is
// an upgrade that changes nothing but the history (Helm writes it
// anyway; convoy does not for a release rendered at apply with its
// dependencies' outputs, apply.Step.Unchanged).
//
// Templates may print the revision number: when the rendering differs,
// the deployed revision is rendered again as itself (RenderRevision)
// and compared, as plans compare it.
func (e *Engine) SameAsDeployed(ctx context.Context, p *Prepared) (bool, error) {
	d := p.Deployed
	if p.IsInstall || d == nil || d != p.Last || d.Partial() || d.Info == nil || d.Info.Status != StatusDeployed || p.Rendered == nil {
		return false, nil
	}
	if !sameChartIdentity(p.Rendered.Chart, d.Chart) || !sameJSON(p.Request.Values, d.Config) {
		return false, nil
	}
	for k, v := range p.Request.Labels {
		if k != RunLabel && d.Labels[k] != v {
			return false, nil
		}
	}
	if sameRendering(p.Rendered, d) {
		return true, nil
	}
	action := chart.ActionUpgrade
	if d.Version == 1 {
		action = chart.ActionInstall
	}
	again, err := e.RenderRevision(ctx, p.Request, d.Version, action)
	if err != nil {
		return false, err
	}
	return sameRendering(again, d), nil
}

// sameRendering: r renders the manifest and the hooks d recorded.
func sameRendering(r *chart.Rendered, d *Release) bool {
	if !sameManifest(r.Manifest(false), d.Manifest) {
		return false
	}
	hooks := hooksFromChart(r.Hooks)
	if len(hooks) != len(d.Hooks) {
		return false
	}
	for i, h := range hooks {
		o := d.Hooks[i]
		if h.Name != o.Name || h.Kind != o.Kind || h.Path != o.Path || h.Weight != o.Weight || !sameManifest(h.Manifest, o.Manifest) ||
			!reflect.DeepEqual(h.Events, o.Events) || !reflect.DeepEqual(h.DeletePolicies, o.DeletePolicies) {
			return false
		}
	}
	return true
}

func sameChartIdentity(a, b *chart.Chart) bool {
	if a == nil || b == nil || a.Metadata == nil || b.Metadata == nil {
		return false
	}
	return a.Metadata.Name == b.Metadata.Name && a.Metadata.Version == b.Metadata.Version && a.Metadata.AppVersion == b.Metadata.AppVersion
}

// sameJSON compares values as the record stores them (JSON): a value
// decoded from a record has float64 numbers where the request may have
// ints.
func sameJSON(a, b map[string]any) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	ja, err := json.Marshal(a)
	if err != nil {
		return false
	}
	jb, err := json.Marshal(b)
	if err != nil {
		return false
	}
	var va, vb any
	if json.Unmarshal(ja, &va) != nil || json.Unmarshal(jb, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// sameManifest: the same text, or the same objects in the same order.
func sameManifest(a, b string) bool {
	if a == b {
		return true
	}
	oa, err := kube.ParseUnmapped(a)
	if err != nil {
		return false
	}
	ob, err := kube.ParseUnmapped(b)
	if err != nil || len(oa) != len(ob) {
		return false
	}
	for i := range oa {
		if !reflect.DeepEqual(oa[i].Object, ob[i].Object) {
			return false
		}
	}
	return true
}
