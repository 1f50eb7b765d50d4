package config

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// EnvVarPrefix prefixes environment variables that set stack variables:
// CONVOY_VAR_replicas=3.
const EnvVarPrefix = "CONVOY_VAR_"

// varValue is a raw value for a variable and where it came from.
type varValue struct {
	val   cty.Value
	rng   *hcl.Range // nil for values from the command line or environment
	where string     // for messages: "--var", "CONVOY_VAR_x", a file name
}

// evalVariables resolves every declared variable from (lowest to highest
// precedence) defaults, *.auto.vars.hcl, the environment's var_files and
// vars, --var-file, CONVOY_VAR_* and --var,
// converts to the declared type, checks validations and marks sensitive
// values.
func (e *evaluator) evalVariables(opts EvalOptions) hcl.Diagnostics {
	var diags hcl.Diagnostics
	cfg := e.cfg
	types := map[string]cty.Type{}
	defaults := map[string]*typeexpr.Defaults{}
	given := map[string]varValue{}
	failed := map[string]bool{} // a value was given but could not be read

	for _, name := range sortedKeys(cfg.Variables) {
		v := cfg.Variables[name]
		ty := cty.DynamicPseudoType
		if v.Type != nil {
			t, def, d := typeexpr.TypeConstraintWithDefaults(v.Type)
			diags = append(diags, d...)
			if !d.HasErrors() {
				ty, defaults[name] = t, def
			}
		}
		types[name] = ty
		if v.Default != nil {
			val, d := v.Default.Value(nil)
			diags = append(diags, d...)
			if !d.HasErrors() {
				given[name] = varValue{val: val, rng: v.Default.Range().Ptr(), where: "default"}
			}
		}
	}

	// Variable files: auto files in name order, then the environment's
	// var_files and vars, then --var-file in order.
	type varFile struct {
		path  string
		stack string // the name in the stack directory, which it may not leave; "" for --var-file
		src   []byte // already read (VarFileSources)
	}
	readFile := func(vf varFile) {
		f := vf.path
		var src []byte
		var d hcl.Diagnostics
		switch {
		case vf.src != nil:
			src = vf.src
		case vf.stack != "":
			src, d = readConfigFile(cfg.Dir, vf.stack)
		default:
			src, d = readVarFileArg(f)
		}
		diags = append(diags, d...)
		if d.HasErrors() {
			return
		}
		vals, bad, d := parseVarFile(f, src)
		diags = append(diags, d...)
		for name := range bad {
			failed[name] = true
		}
		for _, name := range sortedKeys(vals) {
			vv := vals[name]
			if _, ok := cfg.Variables[name]; !ok {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagWarning,
					Summary:  "Value for undeclared variable",
					Detail:   fmt.Sprintf("%s sets %q, but the stack declares no such variable; the value is ignored.", f, name),
					Subject:  vv.rng,
				})
				continue
			}
			given[name] = vv
		}
	}
	if cfg.Dir != "" {
		matches, _ := filepath.Glob(filepath.Join(cfg.Dir, "*.auto.vars.hcl"))
		sort.Strings(matches)
		for _, m := range matches {
			readFile(varFile{path: m, stack: filepath.Base(m)})
		}
	}
	env, d := e.selectEnvironment(opts)
	diags = append(diags, d...)
	e.envFailed = d.HasErrors()
	if env != nil {
		e.envName = env.Name
		files, d := e.environmentVarFiles(env)
		diags = append(diags, d...)
		for _, f := range files {
			e.envFiles = append(e.envFiles, f)
			readFile(varFile{path: filepath.Join(cfg.Dir, f), stack: f})
		}
		vals, d := e.environmentVars(env)
		diags = append(diags, d...)
		for name, vv := range vals {
			given[name] = vv
		}
	}
	for _, f := range opts.VarFiles {
		readFile(varFile{path: f})
	}
	for _, vf := range opts.VarFileSources {
		readFile(varFile{path: vf.Name, src: vf.Src})
	}

	raw := func(name, s, where string) (varValue, hcl.Diagnostics) {
		// Primitive values are taken as strings and converted to the type
		// later; only collections and objects are parsed as HCL.
		if ty := types[name]; ty.IsPrimitiveType() || ty == cty.DynamicPseudoType {
			return varValue{val: cty.StringVal(s), where: where}, nil
		}
		fname := fmt.Sprintf("<value for var.%s>", name)
		if d := checkSource(fname, []byte(s)); d.HasErrors() {
			return varValue{}, d
		}
		expr, d := hclsyntax.ParseExpression([]byte(s), fname, hcl.InitialPos)
		if d.HasErrors() {
			return varValue{}, d
		}
		val, d := expr.Value(nil)
		return varValue{val: val, where: where}, d
	}

	// Environment, in sorted order so that duplicates resolve the same way
	// every time (the last one wins, as with a shell).
	for _, kv := range opts.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, EnvVarPrefix) {
			continue
		}
		name := strings.TrimPrefix(k, EnvVarPrefix)
		if _, declared := cfg.Variables[name]; !declared {
			continue // the environment may hold values for other stacks
		}
		vv, d := raw(name, v, k)
		diags = append(diags, d...)
		if d.HasErrors() {
			failed[name] = true
		} else {
			given[name] = vv
		}
	}

	for _, name := range sortedKeys(opts.Vars) {
		if _, declared := cfg.Variables[name]; !declared {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Value for undeclared variable",
				Detail:   fmt.Sprintf("--var sets %q, but the stack declares no variable of that name.", name),
			})
			continue
		}
		vv, d := raw(name, opts.Vars[name], "--var")
		diags = append(diags, d...)
		if d.HasErrors() {
			failed[name] = true
		} else {
			given[name] = vv
		}
	}

	for _, name := range sortedKeys(cfg.Variables) {
		v := cfg.Variables[name]
		vv, ok := given[name]
		if !ok && failed[name] {
			e.vars[name] = cty.DynamicVal
			continue
		}
		if !ok {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "No value for required variable",
				Detail: fmt.Sprintf("The variable %q has no default, so a value is required: use --var %s=..., --var-file, a *.auto.vars.hcl file or %s%s.",
					name, name, EnvVarPrefix, name),
				Subject: v.DeclRange.Ptr(),
			})
			e.vars[name] = cty.DynamicVal
			continue
		}
		val := vv.val
		if def := defaults[name]; def != nil {
			val = def.Apply(val)
		}
		conv, err := convert.Convert(val, types[name])
		if err != nil {
			subject := vv.rng
			if subject == nil {
				subject = v.DeclRange.Ptr()
			}
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid value for variable",
				Detail:   fmt.Sprintf("The value for var.%s from %s is not a %s: %s.", name, vv.where, typeexpr.TypeString(types[name]), err),
				Subject:  subject,
			})
			e.vars[name] = cty.UnknownVal(types[name])
			continue
		}
		if v.Sensitive || opts.SensitiveVars[name] {
			conv = conv.Mark(Sensitive)
		}
		e.vars[name] = conv
		diags = append(diags, e.checkValidations(v, conv, vv)...)
	}
	return diags
}

// checkValidations evaluates a variable's validation blocks. Conditions may
// refer only to the variable itself.
func (e *evaluator) checkValidations(v *Variable, val cty.Value, vv varValue) hcl.Diagnostics {
	var diags hcl.Diagnostics
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{v.Name: val})},
		Functions: e.funcs,
	}
	for _, vr := range v.Validations {
		ok := true
		for _, trav := range vr.Condition.Variables() {
			ref, d := parseReference(trav)
			if d.HasErrors() || ref.Kind != RefVar || ref.Name != v.Name {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Invalid validation condition",
					Detail:   fmt.Sprintf("A validation condition may refer only to the variable it validates, var.%s.", v.Name),
					Subject:  trav.SourceRange().Ptr(),
				})
				ok = false
			}
		}
		if !ok {
			continue
		}
		res, d := vr.Condition.Value(ctx)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		res, _ = res.Unmark()
		if !res.IsKnown() {
			continue
		}
		if res.IsNull() || res.Type() != cty.Bool {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid validation condition",
				Detail:   "The condition must be true or false.",
				Subject:  vr.Condition.Range().Ptr(),
			})
			continue
		}
		if res.True() {
			continue
		}
		msg := "The value is not valid."
		if m, d := vr.ErrorMessage.Value(ctx); !d.HasErrors() {
			if m, err := convert.Convert(m, cty.String); err == nil && m.IsKnown() && !m.IsNull() && !m.IsMarked() {
				msg = m.AsString()
			}
		}
		subject := vv.rng
		if subject == nil {
			subject = v.DeclRange.Ptr()
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid value for variable",
			Detail:   fmt.Sprintf("%s\n\nThe value of var.%s (from %s) failed the validation rule at %s.", msg, v.Name, vv.where, vr.DeclRange),
			Subject:  subject,
		})
	}
	return diags
}

// parseVarFile parses a *.vars.hcl file: attributes with constant values.
// bad lists the names whose values could not be evaluated.
func parseVarFile(path string, src []byte) (vals map[string]varValue, bad map[string]bool, diags hcl.Diagnostics) {
	file, diags := parseFile(path, src)
	if file == nil || diags.HasErrors() {
		return nil, nil, diags
	}
	attrs, d := file.Body.JustAttributes()
	diags = append(diags, d...)
	vals, bad = map[string]varValue{}, map[string]bool{}
	for _, name := range sortedKeys(attrs) {
		a := attrs[name]
		val, d := a.Expr.Value(nil)
		diags = append(diags, d...)
		if d.HasErrors() {
			bad[name] = true
			continue
		}
		vals[name] = varValue{val: val, rng: a.Expr.Range().Ptr(), where: path}
	}
	return vals, bad, diags
}
