package config

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// EnvEnvironment names the environment when --env is not given.
const EnvEnvironment = "CONVOY_ENV"

// DefaultEnvironment is chosen when the stack declares it and none is named.
const DefaultEnvironment = "default"

// selectEnvironment picks the environment block of the run: the one named in
// opts, else the one named "default". A stack that declares environments
// needs one; a stack that declares none accepts no name.
func (e *evaluator) selectEnvironment(opts EvalOptions) (*Environment, hcl.Diagnostics) {
	envs := e.cfg.Environments
	name := opts.Environment
	if name == "" {
		if len(envs) == 0 {
			return nil, nil
		}
		if env, ok := envs[DefaultEnvironment]; ok {
			return env, nil
		}
		first := envs[sortedKeys(envs)[0]]
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "No environment chosen",
			Detail: fmt.Sprintf("The stack declares the environments %s and none named %q: choose one with --env NAME or %s.",
				quotedList(sortedKeys(envs)), DefaultEnvironment, EnvEnvironment),
			Subject: first.DeclRange.Ptr(),
		}}
	}
	if env, ok := envs[name]; ok {
		return env, nil
	}
	if len(envs) == 0 {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Unknown environment",
			Detail:   fmt.Sprintf("The environment %q was chosen, but the stack declares no environment blocks.", name),
		}}
	}
	var subject *hcl.Range
	for _, n := range sortedKeys(envs) {
		subject = envs[n].DeclRange.Ptr()
		break
	}
	return nil, hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Unknown environment",
		Detail:   fmt.Sprintf("The stack declares no environment %q. Declared environments: %s.", name, quotedList(sortedKeys(envs))),
		Subject:  subject,
	}}
}

func quotedList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// environmentVal is the value of `environment` in expressions.
func (e *evaluator) environmentVal() cty.Value {
	return cty.ObjectVal(map[string]cty.Value{"name": cty.StringVal(e.envName)})
}

// envEvalContext evaluates an environment block's attributes: they see
// environment.name and the functions, not variables (which they set).
func (e *evaluator) envEvalContext() *hcl.EvalContext {
	return &hcl.EvalContext{
		Variables: map[string]cty.Value{"environment": e.environmentVal()},
		Functions: e.funcs,
	}
}

// checkEnvRefs allows only environment.name in an environment block.
func checkEnvRefs(expr hcl.Expression) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, trav := range expr.Variables() {
		ref, d := parseReference(trav)
		if d.HasErrors() {
			diags = append(diags, d...)
			continue
		}
		if ref.Kind != RefEnvironment {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Reference to %s not allowed here", ref.Kind),
				Detail:   "An environment block sets variables, so it may refer only to environment.name.",
				Subject:  ref.Range.Ptr(),
			})
		}
	}
	return diags
}

// environmentVarFiles evaluates var_files: paths relative to the stack
// directory, read like the stack's own files (inside it, regular, bounded).
func (e *evaluator) environmentVarFiles(env *Environment) ([]string, hcl.Diagnostics) {
	if env == nil || env.VarFiles == nil {
		return nil, nil
	}
	diags := checkEnvRefs(env.VarFiles)
	if diags.HasErrors() {
		return nil, diags
	}
	val, d := env.VarFiles.Value(e.envEvalContext())
	diags = append(diags, d...)
	if d.HasErrors() {
		return nil, diags
	}
	list, err := convert.Convert(val, cty.List(cty.String))
	if err == nil && (!list.IsWhollyKnown() || list.IsNull() || list.ContainsMarked()) {
		err = fmt.Errorf("the paths must be known and not sensitive")
	}
	if err != nil {
		return nil, append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid var_files",
			Detail:   fmt.Sprintf("var_files is a list of paths relative to the stack directory: %s.", err),
			Subject:  env.VarFiles.Range().Ptr(),
		})
	}
	var out []string
	for _, v := range list.AsValueSlice() {
		out = append(out, filepath.Clean(v.AsString()))
	}
	return out, diags
}

// environmentVars evaluates vars: an object of variable values.
func (e *evaluator) environmentVars(env *Environment) (map[string]varValue, hcl.Diagnostics) {
	if env == nil || env.Vars == nil {
		return nil, nil
	}
	diags := checkEnvRefs(env.Vars)
	if diags.HasErrors() {
		return nil, diags
	}
	where := fmt.Sprintf("environment %q", env.Name)
	ranges := map[string]*hcl.Range{}
	if items, d := hcl.ExprMap(env.Vars); !d.HasErrors() {
		for _, it := range items {
			if k, d := it.Key.Value(nil); !d.HasErrors() && k.Type() == cty.String && k.IsKnown() && !k.IsNull() {
				ranges[k.AsString()] = it.Value.Range().Ptr()
			}
		}
	}
	val, d := env.Vars.Value(e.envEvalContext())
	diags = append(diags, d...)
	if d.HasErrors() {
		return nil, diags
	}
	if val.IsNull() || !val.IsKnown() || !(val.Type().IsObjectType() || val.Type().IsMapType()) {
		return nil, append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid vars",
			Detail:   "vars is an object of variable values: { replicas = 3, domain = \"example.com\" }.",
			Subject:  env.Vars.Range().Ptr(),
		})
	}
	// vars = sops_file(...) is sensitive as a whole: each value is.
	val, marks := val.Unmark()
	out := map[string]varValue{}
	for it := val.ElementIterator(); it.Next(); {
		k, v := it.Element()
		v = v.WithMarks(marks)
		name := k.AsString()
		rng := ranges[name]
		if rng == nil {
			rng = env.Vars.Range().Ptr()
		}
		if _, ok := e.cfg.Variables[name]; !ok {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Value for undeclared variable",
				Detail:   fmt.Sprintf("The %s sets %q, but the stack declares no such variable.", where, name),
				Subject:  rng,
			})
			continue
		}
		out[name] = varValue{val: v, rng: rng, where: where}
	}
	return out, diags
}
