package health

import (
	"fmt"
	"github.com/convoy-sh/convoy/internal/expr"
	"path/filepath"
	"strings"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// VarSelf is the variable a check's expressions read: the object, as a
// map shaped like its JSON (apiVersion, kind, metadata, spec, status).
const VarSelf = "self"

// Set is a release's compiled health checks. It is safe for concurrent
// use.
type Set struct {
	checks []*check
}

type check struct {
	gvk             schema.GroupVersionKind
	current, failed *compiled // failed nil when unset
}

type compiled struct {
	text  string
	where string // file:line:col of the expression
	prg   cel.Program
}

var _ kube.Health = (*Set)(nil)

// Compile compiles a release's checks. Every syntax or type error is a
// diagnostic at its place in the stack's file. A release without checks
// compiles to nil.
func Compile(checks []*config.HealthCheck) (*Set, hcl.Diagnostics) {
	if len(checks) == 0 {
		return nil, nil
	}
	env, err := expr.NewEnv(cel.Variable(VarSelf, cel.MapType(cel.StringType, cel.DynType)))
	if err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot set up CEL", Detail: err.Error()}}
	}
	set := &Set{}
	var diags hcl.Diagnostics
	for _, h := range checks {
		c := &check{gvk: schema.FromAPIVersionAndKind(h.APIVersion, h.Kind)}
		var d hcl.Diagnostics
		c.current, d = compileExpr(env, h.Current, "current")
		diags = append(diags, d...)
		if h.Failed.Text != "" {
			c.failed, d = compileExpr(env, h.Failed, "failed")
			diags = append(diags, d...)
		}
		set.checks = append(set.checks, c)
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return set, nil
}

func compileExpr(env *cel.Env, t config.PolicyText, attr string) (*compiled, hcl.Diagnostics) {
	ast, iss := env.Compile(t.Text)
	if iss != nil && iss.Err() != nil {
		return nil, expr.Diagnostics(t.Text, t.Range, "Invalid CEL in health_check "+attr, iss)
	}
	if out := ast.OutputType(); !out.IsExactType(cel.BoolType) && !out.IsExactType(cel.DynType) {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid health_check " + attr,
			Detail:   fmt.Sprintf("%s must evaluate to a bool; this one is a %s.", attr, out),
			Subject:  t.Range.Ptr(),
		}}
	}
	prg, err := env.Program(ast, expr.ProgramOptions(0)...)
	if err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid health_check " + attr, Detail: err.Error(), Subject: t.Range.Ptr()}}
	}
	r := t.Range
	// The stack's files are one directory's: the file's name says where.
	return &compiled{text: t.Text, where: fmt.Sprintf("%s:%d:%d", filepath.Base(r.Filename), r.Start.Line, r.Start.Column), prg: prg}, nil
}

// Check judges u by the check of its apiVersion and kind, or, when there
// is none, of its group and kind (the watch may read it in another
// version). failed is evaluated first: when it holds the object failed;
// then current: when it holds the object is ready; otherwise it is in
// progress, also when an expression fails (a field its controller has not
// written yet), with the error in the message.
func (s *Set) Check(u *unstructured.Unstructured) (kube.HealthResult, bool) {
	c := s.find(u.GroupVersionKind())
	if c == nil {
		return kube.HealthResult{}, false
	}
	if c.failed != nil {
		if ok, err := c.failed.eval(u); err == nil && ok {
			return kube.HealthResult{Failed: true, Message: "health_check failed holds: " + c.failed.String()}, true
		}
	}
	ok, err := c.current.eval(u)
	switch {
	case err != nil:
		return kube.HealthResult{Message: fmt.Sprintf("health_check current cannot be evaluated yet: %s: %v", c.current, err)}, true
	case ok:
		return kube.HealthResult{Current: true, Message: "health_check current holds: " + c.current.String()}, true
	}
	return kube.HealthResult{Message: "health_check current does not hold yet: " + c.current.String()}, true
}

func (s *Set) find(gvk schema.GroupVersionKind) *check {
	if s == nil {
		return nil
	}
	var byKind *check
	for _, c := range s.checks {
		if c.gvk == gvk {
			return c
		}
		if byKind == nil && c.gvk.GroupKind() == gvk.GroupKind() {
			byKind = c
		}
	}
	return byKind
}

// String is the expression on one line, and where it is written.
func (e *compiled) String() string {
	return fmt.Sprintf("%s (%s)", strings.Join(strings.Fields(e.text), " "), e.where)
}

func (e *compiled) eval(u *unstructured.Unstructured) (bool, error) {
	out, _, err := e.prg.Eval(map[string]any{VarSelf: u.Object})
	if err != nil {
		return false, err
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("the expression is a %s, not a bool", out.Type().TypeName())
	}
	return bool(b), nil
}
