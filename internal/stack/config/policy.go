package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Policy is a `policy "name" { level, condition, message,
// message_expression }` block: a CEL rule over the plan (internal/plan/policy
// compiles and evaluates it). Its attributes are constant strings: CEL
// source, not HCL expressions, so a policy means the same in every stack
// and environment that loads it.
type Policy struct {
	Name string
	// Level is "deny" (the default) or "warn"; LevelRange is where it was
	// set (the block's range when unset).
	Level      string
	LevelRange hcl.Range
	// Condition is CEL that must hold; Message the text of a violation;
	// MessageExpression CEL building it (empty when unset).
	Condition         PolicyText
	Message           PolicyText
	MessageExpression PolicyText
	DeclRange         hcl.Range
}

// PolicyText is a constant string attribute of a policy block with the
// range of its expression (diagnostics of the CEL in it point there).
type PolicyText struct {
	Text  string
	Range hcl.Range
}

// Policy levels.
const (
	PolicyLevelDeny = "deny"
	PolicyLevelWarn = "warn"
)

var policyBlockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "level"},
		{Name: "condition", Required: true},
		{Name: "message"},
		{Name: "message_expression"},
	},
}

func decodePolicyBlock(block *hcl.Block) (*Policy, hcl.Diagnostics) {
	p := &Policy{Name: block.Labels[0], Level: PolicyLevelDeny, LevelRange: block.DefRange, DeclRange: block.DefRange}
	content, diags := block.Body.Content(policyBlockSchema)
	invalid := map[string]bool{}
	text := func(name string) PolicyText {
		a, ok := content.Attributes[name]
		if !ok {
			return PolicyText{}
		}
		s, d := constantString(a.Expr, name)
		diags = append(diags, d...)
		invalid[name] = d.HasErrors()
		return PolicyText{Text: s, Range: a.Expr.Range()}
	}
	level := text("level")
	p.Condition = text("condition")
	p.Message = text("message")
	p.MessageExpression = text("message_expression")
	if level.Text != "" {
		p.LevelRange = level.Range
		switch level.Text {
		case PolicyLevelDeny, PolicyLevelWarn:
			p.Level = level.Text
		default:
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid policy level",
				Detail:   fmt.Sprintf("level is %q; it must be \"deny\" or \"warn\".", level.Text),
				Subject:  level.Range.Ptr(),
			})
		}
	}
	// A condition that is not a constant string was reported as such: it
	// is not empty.
	if _, ok := content.Attributes["condition"]; ok && !invalid["condition"] && strings.TrimSpace(p.Condition.Text) == "" {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Empty policy condition",
			Detail:   "condition is a CEL expression that must hold, such as \"object.kind != 'Secret'\".",
			Subject:  p.Condition.Range.Ptr(),
		})
	}
	return p, diags
}

// constantString decodes an attribute that must be a literal string: it
// may not refer to anything.
func constantString(expr hcl.Expression, name string) (string, hcl.Diagnostics) {
	return constantText(expr, name, "Invalid policy attribute", "policies")
}

// constantText is constantString for the blocks of kind (the plural in
// the detail: "policies", "health checks").
func constantText(expr hcl.Expression, name, summary, kind string) (string, hcl.Diagnostics) {
	v, diags := expr.Value(nil)
	if diags.HasErrors() {
		detail := fmt.Sprintf("%s must be a constant string (CEL source in quotes or a heredoc); it may not refer to variables or call functions.", name)
		if _, isTemplate := expr.(*hclsyntax.TemplateExpr); isTemplate || len(expr.Variables()) > 0 {
			detail += " A ${...} in it is HCL interpolation, which " + kind + " do not have: write the value itself, or $${...} for a literal ${...}."
		}
		subject := expr.Range()
		if vars := expr.Variables(); len(vars) > 0 {
			subject = vars[0].SourceRange()
		}
		return "", hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  summary,
			Detail:   detail,
			Subject:  subject.Ptr(),
		}}
	}
	if v.IsNull() || !v.Type().Equals(cty.String) {
		return "", hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  summary,
			Detail:   fmt.Sprintf("%s must be a string.", name),
			Subject:  expr.Range().Ptr(),
		}}
	}
	return v.AsString(), nil
}

// addPolicy adds a decoded policy, refusing a second one of the same name
// wherever it was declared (the diagnostic names both places).
func (c *Config) addPolicy(p *Policy) hcl.Diagnostics {
	if prev, ok := c.Policies[p.Name]; ok {
		return hcl.Diagnostics{duplicatePolicy(prev, p)}
	}
	c.Policies[p.Name] = p
	return nil
}

func duplicatePolicy(prev, p *Policy) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  fmt.Sprintf("Duplicate policy %q", p.Name),
		Detail: fmt.Sprintf("A policy named %q is declared in %s (line %d) and in %s (line %d). Policy names must be unique across the stack and every --policy path.",
			p.Name, prev.DeclRange.Filename, prev.DeclRange.Start.Line, p.DeclRange.Filename, p.DeclRange.Start.Line),
		Subject: p.DeclRange.Ptr(),
		Context: prev.DeclRange.Ptr(),
	}
}

// SortedPolicies are the policies in name order.
func (c *Config) SortedPolicies() []*Policy {
	out := make([]*Policy, 0, len(c.Policies))
	for _, name := range sortedKeys(c.Policies) {
		out = append(out, c.Policies[name])
	}
	return out
}

// policyFileSchema is what a file given with --policy may hold: policies
// only, so that an organisation's rules never declare releases.
var policyFileSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{{Type: "policy", LabelNames: []string{"name"}}},
}

// LoadPolicyPaths reads the policy files given outside the stack (--policy,
// CONVOY_POLICY_PATH, collected at the edge): each path is a .hcl file or a
// directory whose *.hcl files (not its subdirectories) are read in name
// order. The files may hold only policy blocks; they join c.Policies and
// c.PolicyFiles (not c.Files: they are not part of the stack's
// configuration hash, and a saved plan carries their results).
func (c *Config) LoadPolicyPaths(paths []string) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, path := range paths {
		files, d := policyFilesOf(path)
		diags = append(diags, d...)
		for _, name := range files {
			src, d := readVarFileArg(name)
			if d.HasErrors() {
				diags = append(diags, d...)
				continue
			}
			file, d := parseFile(name, src)
			diags = append(diags, d...)
			if file == nil {
				continue
			}
			c.PolicyFiles[name] = file
			content, d := file.Body.Content(policyFileSchema)
			diags = append(diags, d...)
			for _, block := range content.Blocks {
				if d := validPolicyLabel(block); d != nil {
					diags = append(diags, d)
					continue
				}
				p, d := decodePolicyBlock(block)
				diags = append(diags, d...)
				diags = append(diags, c.addPolicy(p)...)
			}
		}
	}
	return diags
}

// policyFilesOf lists the policy files a --policy path names.
func policyFilesOf(path string) ([]string, hcl.Diagnostics) {
	bad := func(err error) hcl.Diagnostics {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read policy path", Detail: err.Error()}}
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, bad(err)
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, bad(err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && isStackFile(e.Name()) {
			out = append(out, filepath.Join(path, e.Name()))
		}
	}
	slices.Sort(out)
	if len(out) == 0 {
		return nil, bad(fmt.Errorf("the directory %s has no .hcl files", path))
	}
	return out, nil
}

func validPolicyLabel(block *hcl.Block) *hcl.Diagnostic {
	if len(block.Labels) == 1 && !hclsyntax.ValidIdentifier(block.Labels[0]) {
		return &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid policy name",
			Detail:   fmt.Sprintf("%q is not a valid name: names start with a letter or underscore and contain only letters, digits, underscores and dashes.", block.Labels[0]),
			Subject:  block.LabelRanges[0].Ptr(),
		}
	}
	return nil
}

// AllFiles are the stack's files and the policy files, for rendering
// diagnostics with their source.
func (c *Config) AllFiles() map[string]*hcl.File {
	if len(c.PolicyFiles) == 0 {
		return c.Files
	}
	out := make(map[string]*hcl.File, len(c.Files)+len(c.PolicyFiles))
	for k, v := range c.Files {
		out[k] = v
	}
	for k, v := range c.PolicyFiles {
		out[k] = v
	}
	return out
}
