package release

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// CRDPolicy is what a deploy does with the chart's crds/ (a release's
// crds).
type CRDPolicy string

// CRD policies.
const (
	// CRDsCreate (the zero value) creates the CRDs the cluster lacks on
	// install and never changes them after, as Helm does.
	CRDsCreate CRDPolicy = ""
	// CRDsSkip installs none (helm --skip-crds).
	CRDsSkip CRDPolicy = "skip"
	// CRDsCreateReplace creates the missing CRDs and replaces the existing
	// ones, on install and on upgrade, before the release's other
	// objects; it never deletes one.
	CRDsCreateReplace CRDPolicy = "create_replace"
)

// appliesCRDs says whether this deploy of p writes the chart's crds/.
func (p *Prepared) appliesCRDs() bool {
	if len(p.Rendered.CRDs) == 0 {
		return false
	}
	switch p.Request.CRDs {
	case CRDsSkip:
		return false
	case CRDsCreateReplace:
		return true
	}
	return p.IsInstall
}

// applyCRDs writes the chart's crds/ as the release's policy says: only
// the absent ones (create), or replacing the existing ones too
// (create_replace).
func (e *Engine) applyCRDs(ctx context.Context, p *Prepared) error {
	req := p.Request
	var crds []*unstructured.Unstructured
	for _, f := range p.Rendered.CRDs {
		got, err := e.kube.Parse(string(f.Data), "")
		if err != nil {
			return fmt.Errorf("CRD file %s: %w", f.Name, err)
		}
		crds = append(crds, got...)
	}
	write, policy := e.kube.InstallCRDs, "create"
	if req.CRDs == CRDsCreateReplace {
		write, policy = e.kube.ReplaceCRDs, "create_replace"
	}
	e.logf(req.Namespace, req.Name, PhaseApplying, "writing %d CRDs (crds = %q)", len(crds), policy)
	w, err := write(ctx, crds)
	e.fresh.wrote()
	if err != nil {
		return err
	}
	e.logf(req.Namespace, req.Name, PhaseApplying, "CRDs: %s", w)
	return nil
}
