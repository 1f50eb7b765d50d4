package policy

import (
	"fmt"

	"github.com/convoy-sh/convoy/internal/expr"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/google/cel-go/cel"
	"github.com/hashicorp/hcl/v2"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// Scope says what a policy is evaluated for.
type Scope int

// Scopes, by the variables a policy's expressions mention.
const (
	// ScopePlan: once per plan (mentions neither object nor release).
	ScopePlan Scope = iota
	// ScopeRelease: once per planned release (mentions release, not object).
	ScopeRelease
	// ScopeObject: once per object of each release that changes.
	ScopeObject
)

func (s Scope) String() string {
	switch s {
	case ScopeRelease:
		return "release"
	case ScopeObject:
		return "object"
	}
	return "plan"
}

// Set is a stack's policies, compiled: build it once per run (Compile) and
// evaluate it against each plan.
type Set struct {
	policies []*compiled
}

type compiled struct {
	name    string
	level   plan.PolicyLevel
	scope   Scope
	message string
	cond    cel.Program
	msg     cel.Program // nil without message_expression
}

// Options tune compilation (zero: the defaults).
type Options struct {
	// CostLimit bounds one evaluation (0: expr.CostLimit).
	CostLimit uint64
}

// Names are the policies' names, in evaluation (name) order.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s.policies))
	for i, p := range s.policies {
		out[i] = p.name
	}
	return out
}

// Len is the number of policies.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.policies)
}

// Scope is the scope of the named policy (false when there is none).
func (s *Set) Scope(name string) (Scope, bool) {
	for _, p := range s.policies {
		if p.name == name {
			return p.scope, true
		}
	}
	return 0, false
}

// Variables of a policy's expressions.
const (
	varObject  = "object"
	varRelease = "release"
	varPlan    = "plan"
)

// newEnv is the CEL environment policies compile in: expr's library and
// the three variables with their declared fields (types.go: a field that
// does not exist, or a condition that is not a bool, is a compile error).
func newEnv() (*cel.Env, error) {
	base, err := expr.NewEnv()
	if err != nil {
		return nil, err
	}
	object, release, planT := declTypes()
	provider := apiservercel.NewDeclTypeProvider(object, release, planT)
	opts, err := provider.EnvOptions(base.CELTypeProvider())
	if err != nil {
		return nil, err
	}
	return base.Extend(append(opts,
		cel.Variable(varObject, object.CelType()),
		cel.Variable(varRelease, release.CelType()),
		cel.Variable(varPlan, planT.CelType()),
	)...)
}

// Compile compiles the policies (in name order). Every syntax or type
// error is a diagnostic at the attribute it is in.
func Compile(policies []*config.Policy, o Options) (*Set, hcl.Diagnostics) {
	set := &Set{}
	if len(policies) == 0 {
		return set, nil
	}
	env, err := newEnv()
	if err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot set up CEL", Detail: err.Error()}}
	}
	popts := expr.ProgramOptions(o.CostLimit)
	var diags hcl.Diagnostics
	for _, p := range policies {
		c := &compiled{name: p.Name, level: plan.PolicyLevel(p.Level), message: p.Message.Text}
		cond, refs, d := compileExpr(env, p.Condition, "condition", cel.BoolType, popts)
		diags = append(diags, d...)
		c.cond = cond
		if p.MessageExpression.Text != "" {
			msg, mrefs, d := compileExpr(env, p.MessageExpression, "message_expression", cel.StringType, popts)
			diags = append(diags, d...)
			c.msg = msg
			for k := range mrefs {
				refs[k] = true
			}
		}
		switch {
		case refs[varObject]:
			c.scope = ScopeObject
		case refs[varRelease]:
			c.scope = ScopeRelease
		}
		set.policies = append(set.policies, c)
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return set, diags
}

// compileExpr compiles one attribute's CEL, checks its type and returns
// the program and the variables it mentions.
func compileExpr(env *cel.Env, t config.PolicyText, attr string, want *cel.Type, popts []cel.ProgramOption) (cel.Program, map[string]bool, hcl.Diagnostics) {
	ast, iss := env.Compile(t.Text)
	if iss != nil && iss.Err() != nil {
		return nil, nil, expr.Diagnostics(t.Text, t.Range, "Invalid CEL in policy "+attr, iss)
	}
	out := ast.OutputType()
	if !out.IsExactType(want) && !out.IsExactType(cel.DynType) {
		return nil, nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid policy " + attr,
			Detail:   fmt.Sprintf("%s must evaluate to a %s; this one is a %s.", attr, want, out),
			Subject:  t.Range.Ptr(),
		}}
	}
	prg, err := env.Program(ast, popts...)
	if err != nil {
		return nil, nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid policy " + attr, Detail: err.Error(), Subject: t.Range.Ptr()}}
	}
	refs := map[string]bool{}
	for _, r := range ast.NativeRep().ReferenceMap() {
		refs[r.Name] = true
	}
	return prg, refs, nil
}
