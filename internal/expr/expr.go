// Package expr is the one place where the CEL that users write is set up:
// the library every expression compiles with (a policy over a plan, a
// health check over one object, a Pipeline's gate over a stack's live
// objects), the cost one evaluation may spend, and how a compile error is
// reported at its place in the stack's file. The same expression therefore
// means the same, and fails the same way, wherever it is written.
package expr

import (
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	"github.com/hashicorp/hcl/v2"
	"k8s.io/apiserver/pkg/cel/library"
)

// CostLimit bounds one evaluation of one expression, in CEL's cost units:
// the API server's per-expression limit for validating admission
// policies. A comprehension nested over many objects stops with an error
// instead of spinning.
const CostLimit = 1_000_000

// MaxLength bounds an expression's length in code points, as a CRD's
// validation would.
const MaxLength = 10_000

// Library is the environment every expression compiles in, without its
// variables: the standard library, optional values, numbers compared across
// int and double as the API server does, cel-go's extensions the API
// server's CEL offers (strings, lists, sets, math, base64, cel.bind,
// two-variable comprehensions) and the Kubernetes libraries
// (k8s.io/apiserver/pkg/cel/library: lists' sum, min, max, indexOf,
// lastIndexOf, isSorted; regex, urls, quantity, ip, cidr, format, semver).
// Authorization checks are the API server's own and are not offered.
func Library() []cel.EnvOption {
	return []cel.EnvOption{
		cel.OptionalTypes(),
		cel.CrossTypeNumericComparisons(true),
		cel.EnableMacroCallTracking(),
		cel.ParserExpressionSizeLimit(MaxLength),
		ext.Strings(),
		ext.Lists(),
		ext.Sets(),
		ext.Math(),
		ext.Encoders(),
		ext.Bindings(),
		ext.TwoVarComprehensions(),
		library.Lists(),
		library.Regex(),
		library.URLs(),
		library.Quantity(),
		library.IP(),
		library.CIDR(),
		library.Format(),
		library.SemverLib(library.SemverVersion(1)),
	}
}

// NewEnv is Library with the expression's variables (cel.Variable options).
func NewEnv(vars ...cel.EnvOption) (*cel.Env, error) {
	return cel.NewEnv(append(Library(), vars...)...)
}

// ProgramOptions bound one evaluation to limit cost units (0: CostLimit),
// checked for interruption every 100 comprehension steps.
func ProgramOptions(limit uint64) []cel.ProgramOption {
	if limit == 0 {
		limit = CostLimit
	}
	return []cel.ProgramOption{cel.CostLimit(limit), cel.InterruptCheckFrequency(100)}
}

// Diagnostics reports an expression that did not compile as one
// diagnostic at the first error's place in the file (Pos), with cel-go's
// report of every error (the expression, a caret under each position) as
// its detail. text is the expression, rng the attribute it is written in.
func Diagnostics(text string, rng hcl.Range, summary string, iss *cel.Issues) hcl.Diagnostics {
	errs := iss.Errors()
	if len(errs) == 0 {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: iss.String(), Subject: rng.Ptr()}}
	}
	e := errs[0]
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf("%s (line %d, column %d of the expression).\n%s", e.Message, e.Location.Line(), e.Location.Column()+1, strings.TrimRight(iss.String(), "\n")),
		Subject:  Pos(text, rng, e.Location.Line(), e.Location.Column()).Ptr(),
	}}
}

// Pos is where a CEL error at line and col (from 0) of the expression is
// in the file: its own position when the expression is a one-line quoted
// string without escapes (the CEL source is then the file's text between
// the quotes), else the attribute.
func Pos(text string, rng hcl.Range, line, col int) hcl.Range {
	r := rng
	if line != 1 || col < 0 || r.Start.Line != r.End.Line || r.End.Byte-r.Start.Byte != len(text)+2 {
		return r
	}
	p := hcl.Pos{Line: r.Start.Line, Column: r.Start.Column + 1 + col, Byte: r.Start.Byte + 1 + col}
	end := p
	end.Column++
	end.Byte++
	if end.Byte > r.End.Byte {
		return r
	}
	return hcl.Range{Filename: r.Filename, Start: p, End: end}
}
