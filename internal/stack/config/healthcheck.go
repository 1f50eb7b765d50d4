package config

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// CRDPolicy is what apply does with a chart's crds/ (a release's crds).
type CRDPolicy string

// CRD policies.
const (
	// CRDsCreate creates the CRDs the cluster lacks on install and never
	// changes them after: Helm's behaviour, the default.
	CRDsCreate CRDPolicy = "create"
	// CRDsSkip installs none (helm --skip-crds).
	CRDsSkip CRDPolicy = "skip"
	// CRDsCreateReplace creates the missing CRDs and replaces the existing
	// ones with the chart's, on install and upgrade (Flux's CreateReplace);
	// it never deletes one.
	CRDsCreateReplace CRDPolicy = "create_replace"
)

func crdPolicy(s string, expr hcl.Expression) (CRDPolicy, hcl.Diagnostics) {
	switch p := CRDPolicy(s); p {
	case CRDsCreate, CRDsSkip, CRDsCreateReplace:
		return p, nil
	}
	return CRDsCreate, hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Invalid crds",
		Detail:   fmt.Sprintf("crds is %q; it must be \"create\" (the default: crds/ installed once, never upgraded, as Helm does), \"skip\" or \"create_replace\".", s),
		Subject:  expr.Range().Ptr(),
	}}
}

// HealthCheck is a release's `health_check { api_version, kind, current,
// failed }` block: CEL over an object of that kind (as `self`) that says
// when it is ready (current) and when it has failed (failed, optional).
// Its attributes are constant strings, as a policy's: internal/cluster/health
// compiles them.
type HealthCheck struct {
	APIVersion string
	Kind       string
	// Current must hold for the object to be ready; Failed (Text "" when
	// unset) fails the wait at once when it holds.
	Current   PolicyText
	Failed    PolicyText
	DeclRange hcl.Range
}

// Ref names the kind a check is for, as objects are named
// (`cert-manager.io/v1 Certificate`).
func (h *HealthCheck) Ref() string { return h.APIVersion + " " + h.Kind }

var healthCheckSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "api_version", Required: true},
		{Name: "kind", Required: true},
		{Name: "current", Required: true},
		{Name: "failed"},
	},
}

// decodeHealthChecks decodes a release's health_check blocks; a second
// check of the same kind is an error naming the first.
func decodeHealthChecks(blocks hcl.Blocks) ([]*HealthCheck, hcl.Diagnostics) {
	var out []*HealthCheck
	var diags hcl.Diagnostics
	seen := map[string]*HealthCheck{}
	for _, b := range blocks {
		if b.Type != "health_check" {
			continue
		}
		h, d := decodeHealthCheck(b)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		if prev, ok := seen[h.Ref()]; ok {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate health_check",
				Detail:   fmt.Sprintf("%s has a health_check already, at %s line %d: one per kind.", h.Ref(), prev.DeclRange.Filename, prev.DeclRange.Start.Line),
				Subject:  h.DeclRange.Ptr(),
				Context:  prev.DeclRange.Ptr(),
			})
			continue
		}
		seen[h.Ref()] = h
		out = append(out, h)
	}
	return out, diags
}

func decodeHealthCheck(block *hcl.Block) (*HealthCheck, hcl.Diagnostics) {
	h := &HealthCheck{DeclRange: block.DefRange}
	content, diags := block.Body.Content(healthCheckSchema)
	text := func(name string) PolicyText {
		a, ok := content.Attributes[name]
		if !ok {
			return PolicyText{}
		}
		s, d := constantText(a.Expr, name, "Invalid health_check attribute", "health checks")
		diags = append(diags, d...)
		if !d.HasErrors() && strings.TrimSpace(s) == "" {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Empty health_check attribute",
				Detail:   fmt.Sprintf("%s may not be empty.", name),
				Subject:  a.Expr.Range().Ptr(),
			})
		}
		return PolicyText{Text: s, Range: a.Expr.Range()}
	}
	if content == nil {
		return h, diags
	}
	apiVersion, kind := text("api_version"), text("kind")
	h.APIVersion, h.Kind = apiVersion.Text, kind.Text
	h.Current, h.Failed = text("current"), text("failed")
	if h.APIVersion != "" && strings.Count(h.APIVersion, "/") > 1 {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid health_check api_version",
			Detail:   fmt.Sprintf("%q is not an apiVersion: write it as objects do, such as \"cert-manager.io/v1\".", h.APIVersion),
			Subject:  apiVersion.Range.Ptr(),
		})
	}
	return h, diags
}
