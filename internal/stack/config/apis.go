package config

import (
	"github.com/convoy-sh/convoy/internal/cluster/apimap"
	"github.com/hashicorp/hcl/v2"
)

// evalAPISettings evaluates the stack block's api_map (a map file of
// removed APIs in helm-mapkubeapis' shape, read from the stack directory
// and parsed now, so that a bad file is an error at its attribute) and
// kube_version.
func (e *evaluator) evalAPISettings(sb *StackBlock) hcl.Diagnostics {
	var diags hcl.Diagnostics
	if sb.APIMap != nil {
		val, d := e.evalSimple(sb.APIMap, "the stack block")
		diags = append(diags, d...)
		if !d.HasErrors() {
			p, d := asString(val, sb.APIMap, "api_map")
			diags = append(diags, d...)
			if !d.HasErrors() && p != "" {
				data, err := stackDir(e.cfg.Dir).Read(p, MaxFileSize)
				if err == nil {
					e.apiMap, err = apimap.Parse(data, p)
				}
				if err != nil {
					diags = append(diags, &hcl.Diagnostic{
						Severity: hcl.DiagError,
						Summary:  "Invalid api_map",
						Detail:   err.Error() + ". api_map names a file of the stack directory in helm-mapkubeapis' map file shape (docs/releases.md, \"Upgrading clusters\").",
						Subject:  sb.APIMap.Range().Ptr(),
					})
				}
			}
		}
	}
	if sb.KubeVersion != nil {
		val, d := e.evalSimple(sb.KubeVersion, "the stack block")
		diags = append(diags, d...)
		if !d.HasErrors() {
			s, d := asString(val, sb.KubeVersion, "kube_version")
			diags = append(diags, d...)
			if !d.HasErrors() && s != "" {
				v, err := apimap.ParseVersion(s)
				if err != nil {
					diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid kube_version", Detail: err.Error() + ".", Subject: sb.KubeVersion.Range().Ptr()})
				}
				e.kubeVersion = v
			}
		}
	}
	return diags
}
