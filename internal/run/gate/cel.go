package gate

import (
	"context"
	"errors"
	"fmt"
	"github.com/convoy-sh/convoy/internal/expr"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/interpreter"
)

// VarObjects is the variable a CEL gate's expression reads: the list of
// the stack's live objects, each a map shaped like the object's JSON
// (apiVersion, kind, metadata, spec, status).
const VarObjects = "objects"

// maxNamed bounds the objects a false gate's Output names.
const maxNamed = 10

// CEL is a compiled CEL gate. It is safe for concurrent use.
type CEL struct {
	expr string
	prg  cel.Program
	// each is the predicate of an expression of the shape
	// objects.all(o, P), compiled with its iteration variable, so that
	// Eval can name the objects that make it false (nil otherwise).
	each *predicate
}

type predicate struct {
	iterVar string
	prg     cel.Program
}

// CompileError is an expression that does not compile: where (line and
// column of the expression, from 1) and why.
type CompileError struct {
	Line, Column int
	Message      string
	// Report is cel-go's report of every error, with the expression and
	// a caret under each position.
	Report string
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("CEL expression, line %d, column %d: %s", e.Line, e.Column, e.Message)
}

// newEnv is the environment gate expressions compile in: expr's library
// and objects. One evaluation is bounded by expr.CostLimit; checking the
// gate over one object at a time (the reasons a false all() names) costs
// one such evaluation per object.
func newEnv() (*cel.Env, error) {
	return expr.NewEnv(cel.Variable(VarObjects, cel.ListType(cel.MapType(cel.StringType, cel.DynType))))
}

var programOptions = expr.ProgramOptions(0)

// CompileCEL compiles a gate's expression. It must evaluate to a bool
// (an expression whose type is only known at evaluation, as a field of an
// object, is checked then). A syntax or type error is a *CompileError
// naming the line and column in the expression.
func CompileCEL(expr string) (*CEL, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, errors.New("CEL expression is empty")
	}
	env, err := newEnv()
	if err != nil {
		return nil, fmt.Errorf("cannot set up CEL: %w", err)
	}
	checked, iss := env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, compileError(iss)
	}
	if out := checked.OutputType(); !out.IsExactType(cel.BoolType) && !out.IsExactType(cel.DynType) {
		return nil, fmt.Errorf("CEL expression must evaluate to a bool; this one is %s", article(out.String()))
	}
	prg, err := env.Program(checked, programOptions...)
	if err != nil {
		return nil, fmt.Errorf("CEL expression: %w", err)
	}
	return &CEL{expr: expr, prg: prg, each: eachPredicate(env, checked)}, nil
}

func compileError(iss *cel.Issues) error {
	errs := iss.Errors()
	e := errs[0]
	msg := e.Message
	if len(errs) > 1 {
		msg += fmt.Sprintf(" (and %d more errors)", len(errs)-1)
	}
	return &CompileError{Line: e.Location.Line(), Column: e.Location.Column() + 1, Message: msg, Report: strings.TrimRight(iss.String(), "\n")}
}

// eachPredicate is P when the expression is objects.all(v, P) (the
// common shape of a gate: every object is healthy), compiled on its own
// with v a variable; nil for any other shape.
func eachPredicate(env *cel.Env, checked *cel.Ast) *predicate {
	root := checked.NativeRep().Expr()
	info := checked.NativeRep().SourceInfo()
	call, ok := info.GetMacroCall(root.ID())
	if !ok || call.Kind() != ast.CallKind {
		return nil
	}
	c := call.AsCall()
	if c.FunctionName() != "all" || !c.IsMemberFunction() || len(c.Args()) != 2 {
		return nil
	}
	if t := c.Target(); t.Kind() != ast.IdentKind || t.AsIdent() != VarObjects {
		return nil
	}
	v := c.Args()[0]
	if v.Kind() != ast.IdentKind || v.AsIdent() == VarObjects {
		return nil
	}
	src, err := cel.ExprToString(c.Args()[1], info)
	if err != nil {
		return nil
	}
	penv, err := env.Extend(cel.Variable(v.AsIdent(), cel.MapType(cel.StringType, cel.DynType)))
	if err != nil {
		return nil
	}
	past, iss := penv.Compile(src)
	if iss != nil && iss.Err() != nil {
		return nil
	}
	prg, err := penv.Program(past, programOptions...)
	if err != nil {
		return nil
	}
	return &predicate{iterVar: v.AsIdent(), prg: prg}
}

// String is the expression.
func (c *CEL) String() string { return c.expr }

// Eval evaluates the expression over objects (Secrets are given to it
// without their data: ObjectMaps). The gate passes when the value is
// true. When it is false, or fails, and the expression has the shape
// objects.all(o, P), Output names the objects (the first few) for which
// P is false or fails. An evaluation error (a missing field, the cost
// limit, the context's end) fails the gate with the error.
func (c *CEL) Eval(ctx context.Context, objects []map[string]any) (res Result) {
	res.Gate = KindCEL
	defer func() {
		if r := recover(); r != nil { // cel-go recovers its own; belt and braces
			res.Passed, res.Err = false, fmt.Errorf("CEL evaluation panicked: %v", r)
			res.Output = fmt.Sprintf("%s failed: %v", c.expr, res.Err)
		}
	}()
	if err := ctx.Err(); err != nil {
		res.Err = err
		res.Output = fmt.Sprintf("%s was not evaluated: %v", c.expr, err)
		return res
	}
	list := make([]any, len(objects))
	for i, o := range objects {
		list[i] = withoutSecretData(o)
	}
	out, _, err := c.prg.ContextEval(ctx, map[string]any{VarObjects: list})
	if err == nil {
		if b, ok := out.(types.Bool); !ok {
			err = fmt.Errorf("the expression is %s, not a bool", article(out.Type().TypeName()))
		} else if b {
			res.Passed = true
			res.Output = fmt.Sprintf("%s is true over %s", c.expr, countObjects(len(list)))
			return res
		}
	}
	var what string
	if err != nil {
		res.Err = err
		what = fmt.Sprintf("%s failed over %s: %v", c.expr, countObjects(len(list)), err)
	} else {
		what = fmt.Sprintf("%s is false over %s", c.expr, countObjects(len(list)))
	}
	if ctx.Err() == nil {
		if why := c.perObject(ctx, list); why != "" {
			what += "; " + why
		}
	}
	res.Output = what
	return res
}

// perObject names the objects for which the all() predicate is false or
// fails.
func (c *CEL) perObject(ctx context.Context, list []any) string {
	if c.each == nil {
		return ""
	}
	var parts []string
	more := 0
	var spent uint64
	for _, o := range list {
		if spent > expr.CostLimit { // the whole pass costs at most about one evaluation's limit
			parts = append(parts, "(stopped naming objects: the cost limit)")
			break
		}
		act, err := interpreter.NewActivation(map[string]any{VarObjects: list, c.each.iterVar: o})
		if err != nil {
			return ""
		}
		out, det, err := c.each.prg.ContextEval(ctx, act)
		if det != nil && det.ActualCost() != nil {
			spent += *det.ActualCost()
		}
		var part string
		switch {
		case err != nil:
			part = fmt.Sprintf("%s: %v", objectRef(o), err)
		case out == types.False:
			part = fmt.Sprintf("%s: false", objectRef(o))
		case out.Type() != types.BoolType:
			part = fmt.Sprintf("%s: a %s, not a bool", objectRef(o), out.Type().TypeName())
		default:
			continue
		}
		if len(parts) == maxNamed {
			more++
			continue
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return ""
	}
	s := "for " + strings.Join(parts, "; ")
	if more > 0 {
		s += fmt.Sprintf("; and %d more", more)
	}
	return s
}

func countObjects(n int) string {
	if n == 1 {
		return "1 object"
	}
	return fmt.Sprintf("%d objects", n)
}

// article puts "a" or "an" before a type's name: "an int", "a string".
func article(name string) string {
	if name != "" && strings.ContainsRune("aeiou", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}
