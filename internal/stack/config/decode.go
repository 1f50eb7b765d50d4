package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

var fileSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "stack", LabelNames: []string{"name"}},
		{Type: "variable", LabelNames: []string{"name"}},
		{Type: "locals"},
		{Type: "cluster", LabelNames: []string{"name"}},
		{Type: "repository", LabelNames: []string{"name"}},
		{Type: "release", LabelNames: []string{"name"}},
		{Type: "environment", LabelNames: []string{"name"}},
		{Type: "moved"},
		{Type: "removed"},
		{Type: "policy", LabelNames: []string{"name"}},
	},
}

// decodeFile decodes the top-level blocks of one file into c.
func (c *Config) decodeFile(file *hcl.File) hcl.Diagnostics {
	content, diags := file.Body.Content(fileSchema)
	for _, block := range content.Blocks {
		if block.Type == "moved" || block.Type == "removed" {
			diags = append(diags, c.decodeMoveBlock(block)...)
			continue
		}
		if block.Type != "locals" && len(block.Labels) != 1 {
			continue // HCL has already reported the missing label
		}
		if block.Type != "locals" && block.Type != "stack" && !hclsyntax.ValidIdentifier(block.Labels[0]) {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid " + block.Type + " name",
				Detail:   fmt.Sprintf("%q is not a valid name: names start with a letter or underscore and contain only letters, digits, underscores and dashes.", block.Labels[0]),
				Subject:  block.LabelRanges[0].Ptr(),
			})
			continue
		}
		switch block.Type {
		case "stack":
			s, d := decodeStackBlock(block)
			diags = append(diags, d...)
			if c.Stack != nil {
				diags = append(diags, duplicate("stack block", "", c.Stack.DeclRange, block.DefRange))
				continue
			}
			c.Stack = s
		case "variable":
			diags = append(diags, decodeNamed(block, "variable", c.Variables, decodeVariableBlock, (*Variable).declRange)...)
		case "locals":
			locals, d := decodeLocalsBlock(block)
			diags = append(diags, d...)
			for _, l := range locals {
				if prev, ok := c.Locals[l.Name]; ok {
					diags = append(diags, duplicate("local value", l.Name, prev.DeclRange, l.DeclRange))
					continue
				}
				c.Locals[l.Name] = l
			}
		case "cluster":
			diags = append(diags, decodeNamed(block, "cluster", c.Clusters, decodeClusterBlock, (*Cluster).declRange)...)
		case "repository":
			diags = append(diags, decodeNamed(block, "repository", c.Repositories, decodeRepositoryBlock, (*Repository).declRange)...)
		case "release":
			diags = append(diags, decodeNamed(block, "release", c.Releases, decodeReleaseBlock, (*Release).declRange)...)
		case "environment":
			diags = append(diags, decodeNamed(block, "environment", c.Environments, decodeEnvironmentBlock, (*Environment).declRange)...)
		case "policy":
			p, d := decodePolicyBlock(block)
			diags = append(diags, d...)
			diags = append(diags, c.addPolicy(p)...)
		}
	}
	return diags
}

// decodeNamed decodes a labelled block and adds it to the stack's blocks of
// its kind under its name, or reports it as a duplicate of the one already
// there (keeping the first).
func decodeNamed[T any](block *hcl.Block, kind string, into map[string]T, decode func(*hcl.Block) (T, hcl.Diagnostics), declRange func(T) hcl.Range) hcl.Diagnostics {
	v, diags := decode(block)
	name := block.Labels[0]
	if prev, ok := into[name]; ok {
		return append(diags, duplicate(kind, name, declRange(prev), block.DefRange))
	}
	into[name] = v
	return diags
}

func (v *Variable) declRange() hcl.Range    { return v.DeclRange }
func (c *Cluster) declRange() hcl.Range     { return c.DeclRange }
func (r *Repository) declRange() hcl.Range  { return r.DeclRange }
func (r *Release) declRange() hcl.Range     { return r.DeclRange }
func (e *Environment) declRange() hcl.Range { return e.DeclRange }

var environmentBlockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "var_files"},
		{Name: "vars"},
	},
}

func decodeEnvironmentBlock(block *hcl.Block) (*Environment, hcl.Diagnostics) {
	env := &Environment{Name: block.Labels[0], DeclRange: block.DefRange}
	content, diags := block.Body.Content(environmentBlockSchema)
	env.VarFiles = attrExpr(content, "var_files")
	env.Vars = attrExpr(content, "vars")
	return env, diags
}

func duplicate(kind, name string, prev, this hcl.Range) *hcl.Diagnostic {
	summary := "Duplicate " + kind
	detail := fmt.Sprintf("A %s was already declared at %s. Each stack may have only one.", kind, prev)
	if name != "" {
		summary = fmt.Sprintf("Duplicate %s %q", kind, name)
		detail = fmt.Sprintf("A %s named %q was already declared at %s. Names must be unique within a stack.", kind, name, prev)
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   detail,
		Subject:  this.Ptr(),
	}
}

var stackBlockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "default_namespace"},
		{Name: "atomic"},
		{Name: "api_map"},
		{Name: "kube_version"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "storage"}},
}

func decodeStackBlock(block *hcl.Block) (*StackBlock, hcl.Diagnostics) {
	s := &StackBlock{Name: block.Labels[0], DeclRange: block.DefRange, LabelRange: block.LabelRanges[0]}
	content, diags := block.Body.Content(stackBlockSchema)
	s.DefaultNamespace = attrExpr(content, "default_namespace")
	s.Atomic = attrExpr(content, "atomic")
	s.APIMap = attrExpr(content, "api_map")
	s.KubeVersion = attrExpr(content, "kube_version")
	for _, b := range content.Blocks {
		st, d := decodeStorageBlock(b)
		diags = append(diags, d...)
		if s.Storage != nil {
			diags = append(diags, duplicate("storage block", "", s.Storage.DeclRange, b.DefRange))
			continue
		}
		s.Storage = st
	}
	return s, diags
}

var variableBlockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "type"},
		{Name: "default"},
		{Name: "description"},
		{Name: "sensitive"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "validation"}},
}

var validationBlockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "condition", Required: true},
		{Name: "error_message", Required: true},
	},
}

func decodeVariableBlock(block *hcl.Block) (*Variable, hcl.Diagnostics) {
	v := &Variable{Name: block.Labels[0], DeclRange: block.DefRange}
	content, diags := block.Body.Content(variableBlockSchema)
	v.Type = attrExpr(content, "type")
	v.Default = attrExpr(content, "default")
	if a, ok := content.Attributes["description"]; ok {
		diags = append(diags, gohcl.DecodeExpression(a.Expr, nil, &v.Description)...)
	}
	if a, ok := content.Attributes["sensitive"]; ok {
		diags = append(diags, gohcl.DecodeExpression(a.Expr, nil, &v.Sensitive)...)
	}
	for _, b := range content.Blocks {
		vc, d := b.Body.Content(validationBlockSchema)
		diags = append(diags, d...)
		if vc.Attributes["condition"] == nil || vc.Attributes["error_message"] == nil {
			continue
		}
		v.Validations = append(v.Validations, &VariableValidation{
			Condition:    vc.Attributes["condition"].Expr,
			ErrorMessage: vc.Attributes["error_message"].Expr,
			DeclRange:    b.DefRange,
		})
	}
	return v, diags
}

func decodeLocalsBlock(block *hcl.Block) ([]*Local, hcl.Diagnostics) {
	attrs, diags := block.Body.JustAttributes()
	var locals []*Local
	for _, name := range sortedKeys(attrs) {
		a := attrs[name]
		if !hclsyntax.ValidIdentifier(name) {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid local value name",
				Detail:   fmt.Sprintf("%q is not a valid name.", name),
				Subject:  a.NameRange.Ptr(),
			})
			continue
		}
		locals = append(locals, &Local{Name: name, Expr: a.Expr, DeclRange: a.Range})
	}
	return locals, diags
}

var clusterBlockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "kubeconfig"},
		{Name: "context"},
		{Name: "qps"},
		{Name: "burst"},
	},
}

func decodeClusterBlock(block *hcl.Block) (*Cluster, hcl.Diagnostics) {
	c := &Cluster{Name: block.Labels[0], DeclRange: block.DefRange}
	content, diags := block.Body.Content(clusterBlockSchema)
	c.Kubeconfig = attrExpr(content, "kubeconfig")
	c.Context = attrExpr(content, "context")
	c.QPS = attrExpr(content, "qps")
	c.Burst = attrExpr(content, "burst")
	return c, diags
}

var repositoryBlockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "url", Required: true},
		{Name: "username"},
		{Name: "password"},
		{Name: "bearer_token"},
		{Name: "ca_file"},
		{Name: "cert_file"},
		{Name: "key_file"},
		{Name: "insecure_skip_tls_verify"},
	},
}

func decodeRepositoryBlock(block *hcl.Block) (*Repository, hcl.Diagnostics) {
	r := &Repository{Name: block.Labels[0], DeclRange: block.DefRange}
	content, diags := block.Body.Content(repositoryBlockSchema)
	r.URL = attrExpr(content, "url")
	r.Username = attrExpr(content, "username")
	r.Password = attrExpr(content, "password")
	r.BearerToken = attrExpr(content, "bearer_token")
	r.CAFile = attrExpr(content, "ca_file")
	r.CertFile = attrExpr(content, "cert_file")
	r.KeyFile = attrExpr(content, "key_file")
	r.InsecureSkipTLSVerify = attrExpr(content, "insecure_skip_tls_verify")
	return r, diags
}

var releaseBlockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "count"},
		{Name: "for_each"},
		{Name: "name"},
		{Name: "chart"},
		{Name: "manifests"},
		{Name: "version"},
		{Name: "namespace"},
		{Name: "create_namespace"},
		{Name: "values"},
		{Name: "set"},
		{Name: "set_sensitive"},
		{Name: "wait"},
		{Name: "wait_for_jobs"},
		{Name: "timeout"},
		{Name: "atomic"},
		{Name: "cleanup_on_fail"},
		{Name: "history_max"},
		{Name: "disable_hooks"},
		{Name: "take_ownership"},
		{Name: "expand_claims"},
		{Name: "ignore_changes"},
		{Name: "adopt_from_stack"},
		{Name: "adopt"},
		{Name: "labels"},
		{Name: "cluster"},
		{Name: "depends_on"},
		{Name: "patches"},
		{Name: "post_renderer"},
		{Name: "crds"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "health_check"}},
}

func decodeReleaseBlock(block *hcl.Block) (*Release, hcl.Diagnostics) {
	r := &Release{Name: block.Labels[0], DeclRange: block.DefRange}
	content, diags := block.Body.Content(releaseBlockSchema)
	r.Count = attrExpr(content, "count")
	r.ForEach = attrExpr(content, "for_each")
	if r.Count != nil && r.ForEach != nil {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  `Invalid combination of "count" and "for_each"`,
			Detail:   `A release may have either "count" or "for_each", not both.`,
			Subject:  r.ForEach.Range().Ptr(),
		})
	}
	r.ReleaseName = attrExpr(content, "name")
	r.Chart = attrExpr(content, "chart")
	r.Manifests = attrExpr(content, "manifests")
	switch {
	case r.Chart == nil && r.Manifests == nil:
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  `Missing "chart" or "manifests"`,
			Detail:   `A release deploys a chart (chart = "./charts/api") or YAML files (manifests = ["k8s/*.yaml"]).`,
			Subject:  block.DefRange.Ptr(),
		})
	case r.Chart != nil && r.Manifests != nil:
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  `Invalid combination of "chart" and "manifests"`,
			Detail:   `A release deploys either a chart or manifests, not both.`,
			Subject:  r.Manifests.Range().Ptr(),
		})
	}
	r.Version = attrExpr(content, "version")
	r.Namespace = attrExpr(content, "namespace")
	r.CreateNamespace = attrExpr(content, "create_namespace")
	r.Values = attrExpr(content, "values")
	r.Set = attrExpr(content, "set")
	r.SetSensitive = attrExpr(content, "set_sensitive")
	r.Wait = attrExpr(content, "wait")
	r.WaitForJobs = attrExpr(content, "wait_for_jobs")
	r.Timeout = attrExpr(content, "timeout")
	r.Atomic = attrExpr(content, "atomic")
	r.CleanupOnFail = attrExpr(content, "cleanup_on_fail")
	r.HistoryMax = attrExpr(content, "history_max")
	r.DisableHooks = attrExpr(content, "disable_hooks")
	r.TakeOwnership = attrExpr(content, "take_ownership")
	r.ExpandClaims = attrExpr(content, "expand_claims")
	r.IgnoreChanges = attrExpr(content, "ignore_changes")
	r.AdoptFromStack = attrExpr(content, "adopt_from_stack")
	r.Adopt = attrExpr(content, "adopt")
	r.Labels = attrExpr(content, "labels")
	r.Cluster = attrExpr(content, "cluster")
	r.Patches = attrExpr(content, "patches")
	r.PostRenderer = attrExpr(content, "post_renderer")
	r.CRDs = attrExpr(content, "crds")
	if content != nil {
		checks, d := decodeHealthChecks(content.Blocks)
		diags = append(diags, d...)
		r.HealthChecks = checks
	}
	if a, ok := content.Attributes["depends_on"]; ok {
		deps, d := decodeDependsOn(a.Expr)
		diags = append(diags, d...)
		r.DependsOn = deps
	}
	return r, diags
}

// decodeDependsOn reads depends_on = [release.a, release.b]: static
// references only, never evaluated.
func decodeDependsOn(expr hcl.Expression) ([]DependsOnEntry, hcl.Diagnostics) {
	exprs, diags := hcl.ExprList(expr)
	var out []DependsOnEntry
	for _, e := range exprs {
		trav, d := hcl.AbsTraversalForExpr(e)
		if d.HasErrors() || len(trav) < 2 || len(trav) > 3 || trav.RootName() != "release" {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid depends_on reference",
				Detail:   "Each element of depends_on must be a release reference such as release.db.",
				Subject:  e.Range().Ptr(),
			})
			continue
		}
		name, ok := trav[1].(hcl.TraverseAttr)
		if !ok {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid depends_on reference",
				Detail:   "Each element of depends_on must be a release reference such as release.db.",
				Subject:  e.Range().Ptr(),
			})
			continue
		}
		// release.api["eu"] depends on the whole release, like release.api.
		out = append(out, DependsOnEntry{Release: ReleaseAddr{Name: name.Name}, Range: trav.SourceRange()})
	}
	return out, diags
}

func attrExpr(content *hcl.BodyContent, name string) hcl.Expression {
	if content == nil {
		return nil
	}
	if a, ok := content.Attributes[name]; ok {
		return a.Expr
	}
	return nil
}
