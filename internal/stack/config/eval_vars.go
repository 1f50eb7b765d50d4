package config

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// varValue is a raw value for a variable and where it came from.
type varValue struct {
	val       cty.Value
	rng       *hcl.Range // nil for values given as text (--var, CONVOY_VAR_*, the controller's)
	where     string     // for messages: "--var", "CONVOY_VAR_x", a file name
	sensitive bool       // marked sensitive whatever the declaration says
	given     VariableGiven
}

// evalVariables resolves every declared variable from (lowest to highest
// precedence) defaults, *.auto.vars.hcl, the environment's var_files and
// vars, --var-file, CONVOY_VAR_*, --var and the caller's values,
// converts to the declared type, checks validations and marks sensitive
// values.
func (e *evaluator) evalVariables(opts EvalOptions) hcl.Diagnostics {
	var diags hcl.Diagnostics
	cfg := e.cfg
	types := map[string]cty.Type{}
	defaults := map[string]*typeexpr.Defaults{}
	given := map[string]varValue{}
	// The defaults of variables declared without a type: a value given as
	// text takes the default's type when it is a number or a bool.
	untypedDefaults := map[string]cty.Value{}
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
				given[name] = varValue{val: val, rng: v.Default.Range().Ptr(), where: "default", given: GivenDefault}
				if v.Type == nil {
					untypedDefaults[name] = val
				}
			}
		}
	}

	readFile := func(path string, src []byte, sensitive bool, by VariableGiven) {
		vals, bad, d := parseVarFile(path, src)
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
					Detail:   fmt.Sprintf("%s sets %q, but the stack declares no such variable; the value is ignored.", path, name),
					Subject:  vv.rng,
				})
				continue
			}
			vv.sensitive, vv.given = sensitive, by
			given[name] = vv
		}
	}
	readText := func(rv RawValue) {
		if _, declared := cfg.Variables[rv.Name]; !declared {
			if rv.Source == ValueFromEnvVar {
				return // the environment may hold values for other stacks
			}
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Value for undeclared variable",
				Detail:   fmt.Sprintf("%s sets %q, but the stack declares no variable of that name.", rv.Where, rv.Name),
			})
			return
		}
		vv, d := textValue(rv, types[rv.Name])
		if def, ok := untypedDefaults[rv.Name]; ok && !d.HasErrors() {
			var w *hcl.Diagnostic
			vv.val, w = asTypeOfDefault(rv, def, cfg.Variables[rv.Name])
			if w != nil {
				d = append(d, w)
			}
		}
		diags = append(diags, d...)
		if d.HasErrors() {
			failed[rv.Name] = true
		} else {
			vv.given = givenBy(rv.Source)
			given[rv.Name] = vv
		}
	}
	apply := func(rv RawValue) {
		if rv.IsFile() {
			readFile(rv.Where, rv.File, rv.Sensitive, givenBy(rv.Source))
		} else {
			readText(rv)
		}
	}

	// By precedence, stably: auto files, then the environment's var_files
	// and vars, then the rest.
	values := slices.Clone(opts.Variables)
	slices.SortStableFunc(values, func(a, b RawValue) int { return cmp.Compare(a.Source, b.Source) })
	i := 0
	for ; i < len(values) && values[i].Source <= ValueFromAutoFile; i++ {
		if values[i].Source != ValueFromAutoFile {
			diags = append(diags, invalidSource(values[i]))
			continue
		}
		apply(values[i])
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
			if src, d := readConfigFile(cfg.Dir, f); d.HasErrors() {
				diags = append(diags, d...)
			} else {
				readFile(filepath.Join(cfg.Dir, f), src, false, GivenEnvironment)
			}
		}
		vals, d := e.environmentVars(env)
		diags = append(diags, d...)
		for name, vv := range vals {
			vv.given = GivenEnvironment
			given[name] = vv
		}
	}
	for ; i < len(values); i++ {
		if _, ok := valueSourceNames[values[i].Source]; !ok {
			diags = append(diags, invalidSource(values[i]))
			continue
		}
		apply(values[i])
	}

	for _, name := range sortedKeys(cfg.Variables) {
		v := cfg.Variables[name]
		vv, ok := given[name]
		// Without the environment that was to be chosen, a missing value
		// may well be the one it sets: say only that none was chosen.
		if !ok && (failed[name] || e.envFailed) {
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
		e.varOrigins[name] = VariableOrigin{Given: vv.given, Where: vv.where, Range: vv.rng}
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
		if v.Sensitive || vv.sensitive {
			conv = conv.Mark(Sensitive)
		}
		e.vars[name] = conv
		diags = append(diags, e.checkValidations(v, conv, vv)...)
	}
	return diags
}

// textValue reads a value given as text. Values of primitive types are
// taken as strings and converted to the type later; only collections and
// objects are parsed as HCL.
func textValue(rv RawValue, ty cty.Type) (varValue, hcl.Diagnostics) {
	vv := varValue{where: rv.Where, sensitive: rv.Sensitive}
	if ty.IsPrimitiveType() || ty == cty.DynamicPseudoType {
		vv.val = cty.StringVal(rv.Text)
		return vv, nil
	}
	fname := fmt.Sprintf("<value for var.%s>", rv.Name)
	if d := checkSource(fname, []byte(rv.Text)); d.HasErrors() {
		return varValue{}, d
	}
	expr, d := hclsyntax.ParseExpression([]byte(rv.Text), fname, hcl.InitialPos)
	if d.HasErrors() {
		return varValue{}, d
	}
	val, d := expr.Value(nil)
	vv.val = val
	return vv, d
}

// asTypeOfDefault reads the text value of a variable declared without a
// type as a number or a bool when its default is one: `--var count=6` of a
// variable whose default is 4 is 6, not "6", which a chart's values would
// keep as a string. Terraform takes such a value as a string and leaves
// the conversion to where it is used; convoy hands values on to charts,
// which do not convert. Text that is not of the default's type stays a
// string, with a warning.
func asTypeOfDefault(rv RawValue, def cty.Value, v *Variable) (cty.Value, *hcl.Diagnostic) {
	text := cty.StringVal(rv.Text)
	if !def.IsKnown() || def.IsNull() || (def.Type() != cty.Number && def.Type() != cty.Bool) {
		return text, nil
	}
	conv, err := convert.Convert(text, def.Type())
	if err == nil {
		return conv, nil
	}
	kind := "a number"
	if def.Type() == cty.Bool {
		kind = "a bool"
	}
	return text, &hcl.Diagnostic{
		Severity: hcl.DiagWarning,
		Summary:  "Value taken as a string",
		Detail: fmt.Sprintf("var.%s has no type and its default is %s, but the value from %s is not %s: it is taken as the string %q. Declare the variable's type (type = string, or type = %s) to say which it is.",
			v.Name, kind, rv.Where, kind, rv.Text, strings.TrimPrefix(strings.TrimPrefix(kind, "a "), "an ")),
		Subject: v.DeclRange.Ptr(),
	}
}

// invalidSource reports a value of no known source: a bug of the caller.
func invalidSource(rv RawValue) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid variable value",
		Detail:   fmt.Sprintf("The value from %s has no valid source (%s).", rv.Where, rv.Source),
	}
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
