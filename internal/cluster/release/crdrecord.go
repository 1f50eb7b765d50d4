package release

import (
	"context"
	"encoding/json"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
)

// CRDsAnnotation lists, on a deployed record of a chart with crds/, the
// CRDs of its crds/ (the file each is in and its name) and, under crds =
// "create_replace", each CRD as the deploy left it (uid and
// resourceVersion). A plan of the release with nothing changed reads the
// cluster's CRDs' metadata and compares, instead of parsing crds/ and
// dry-running a replace of each (docs/performance.md): the fingerprint
// covers the files and the policy.
const CRDsAnnotation = "convoy.dev/crds"

// RecordCRD is a CRD of a revision's crds/ as CRDsAnnotation lists it.
type RecordCRD struct {
	// File is the crds/ file, by its path in the chart tree.
	File, Name string
	// UID and ResourceVersion are the CRD's after a create_replace deploy
	// ("" otherwise).
	UID, ResourceVersion string
}

// Ref is the CRD's identity.
func (c RecordCRD) Ref() kube.Ref {
	return kube.Ref{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: c.Name}
}

// settleCRDs annotates rel with the CRDs of p's crds/ (CRDsAnnotation),
// read from the cluster as the deploy left them under create_replace. A
// CRD file that does not parse, or a CRD that cannot be read, leaves the
// record without: plans then render and dry-run the release.
func (e *Engine) settleCRDs(ctx context.Context, p *Prepared, rel *Release) {
	if len(p.Rendered.CRDs) == 0 {
		return
	}
	var crds []RecordCRD
	for _, f := range p.Rendered.CRDs {
		objs, err := kube.ParseUnmapped(string(f.Data))
		if err != nil {
			return
		}
		for _, o := range objs {
			c := RecordCRD{File: f.Name, Name: o.GetName()}
			if p.Request.CRDs == CRDsCreateReplace {
				live, err := e.kube.Get(ctx, c.Ref())
				if err != nil || live == nil {
					return
				}
				c.UID, c.ResourceVersion = string(live.GetUID()), live.GetResourceVersion()
			}
			crds = append(crds, c)
		}
	}
	rows := make([][4]string, len(crds))
	for i, c := range crds {
		rows[i] = [4]string{c.File, c.Name, c.UID, c.ResourceVersion}
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return
	}
	if rel.Annotations == nil {
		rel.Annotations = map[string]string{}
	}
	rel.Annotations[CRDsAnnotation] = string(b)
}

// CRDsOf reads rec's CRDsAnnotation; false when it has none or it does
// not decode.
func CRDsOf(rec *Release) ([]RecordCRD, bool) {
	v, ok := rec.Annotations[CRDsAnnotation]
	if !ok {
		return nil, false
	}
	var rows [][4]string
	if err := json.Unmarshal([]byte(v), &rows); err != nil {
		return nil, false
	}
	out := make([]RecordCRD, len(rows))
	for i, r := range rows {
		out[i] = RecordCRD{File: r[0], Name: r[1], UID: r[2], ResourceVersion: r[3]}
	}
	return out, true
}
