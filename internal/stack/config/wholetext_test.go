package config

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// ctyText is the string a template writes for n without wholeText.
func ctyText(t *testing.T, n cty.Value) string {
	t.Helper()
	s, err := convert.Convert(n, cty.String)
	if err != nil {
		t.Fatal(err)
	}
	return s.AsString()
}

func literal(t *testing.T, src string) cty.Value {
	t.Helper()
	expr, diags := hclsyntax.ParseExpression([]byte(src), "n.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	v, diags := expr.Value(nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return v
}

func TestWholeStringWritesWhatCtyWrites(t *testing.T) {
	check := func(name string, n cty.Value, fast bool) {
		t.Helper()
		got := wholeNumberText(n)
		if got.Type() != cty.String {
			if fast {
				t.Errorf("%s: %s was not written by the fast path", name, ctyText(t, n))
			}
			return
		}
		if want := ctyText(t, n); got.AsString() != want {
			t.Errorf("%s: wrote %q, cty writes %q", name, got.AsString(), want)
		}
	}
	// What stacks interpolate: literals (512-bit), count.index (64-bit),
	// and arithmetic of the two.
	for _, src := range []string{"0", "7", "-7", "20", "1e3", "100", "123456789012345678", "9223372036854775807",
		"(3 + 0) % 20", "(1234 + 0) % 20", "-17 % 5", "10 / 2", "1e18 / 1e9"} {
		check(src, literal(t, src), true)
	}
	for _, i := range []int64{0, 1, 19, 1999, -1, math.MaxInt64, math.MinInt64} {
		check("int", cty.NumberIntVal(i), i != math.MinInt64)
		check("index+literal", cty.NumberIntVal(i).Add(literal(t, "0")), i != math.MaxInt64 && i != math.MinInt64)
		check("modulo", cty.NumberIntVal(i).Add(literal(t, "0")).Modulo(literal(t, "20")), true)
	}
	// What the fast path leaves to cty: fractions, negative zero, floats
	// whose step exceeds 1, numbers from 2^63 in magnitude, infinities.
	for _, src := range []string{"1.5", "0.1", "1 / 3", "-0.5", "1e19", "1e30", "-9223372036854775808"} {
		check(src, literal(t, src), false)
	}
	check("-0", cty.NumberVal(new(big.Float).Neg(new(big.Float))), false)
	check("1e17 (float64)", cty.NumberFloatVal(1e17), false)
	check("2^60+256 (float64)", cty.NumberFloatVal(float64(1<<60+256)), false)
	check("inf", cty.PositiveInfinity, false)
	check("-inf", cty.NegativeInfinity, false)

	// Random whole numbers at random precisions, coarse ones included.
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		i := r.Int64() >> r.UintN(64)
		if r.IntN(2) == 0 {
			i = -i
		}
		prec := uint(1 + r.IntN(600))
		f := new(big.Float).SetPrec(prec).SetInt64(i)
		check("random", cty.NumberVal(f), false)
	}
}

// TestWholeTextKeepsTemplates evaluates templates before and after
// wholeText: the same values (marks, unknown prefixes and null errors
// included) and the same references.
func TestWholeTextKeepsTemplates(t *testing.T) {
	src := `
a = "ns-${(count.index + 0) % 20}"
b = "${var.name}-${count.index}-${var.secret}"
c = format("%s/%s", "x-${count.index * 2}", lower("Y-${var.half}"))
d = "${var.unknown}-${count.index}"
e = "n-${var.null}"
f = <<EOT
line ${count.index + 1} of ${release.web.revision}
%{ for i in [1, 2] }${i}%{ endfor }
EOT
g = [for i in [1, 2.5] : "v${i}"]
h = "${count.index}"
`
	vars := map[string]cty.Value{
		"count": cty.ObjectVal(map[string]cty.Value{"index": cty.NumberIntVal(1234)}),
		"var": cty.ObjectVal(map[string]cty.Value{
			"name":    cty.StringVal("web"),
			"secret":  cty.NumberIntVal(42).Mark(Sensitive),
			"half":    literal(t, "1 / 2"),
			"unknown": cty.UnknownVal(cty.Number),
			"null":    cty.NullVal(cty.Number),
		}),
		"release": cty.ObjectVal(map[string]cty.Value{
			"web": cty.ObjectVal(map[string]cty.Value{"revision": cty.NumberIntVal(3)}),
		}),
	}
	evalCtx := &hcl.EvalContext{Variables: vars, Functions: map[string]function.Function{
		"format": stdlib.FormatFunc,
		"lower":  stdlib.LowerFunc,
	}}
	parse := func() hcl.Attributes {
		f, diags := hclsyntax.ParseConfig([]byte(src), "t.hcl", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		attrs, diags := f.Body.JustAttributes()
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		return attrs
	}
	before := parse()
	after := parse()
	for _, a := range after {
		wholeText(a.Expr.(hclsyntax.Node))
	}
	wrapped := 0
	for _, a := range after {
		hclsyntax.VisitAll(a.Expr.(hclsyntax.Node), func(n hclsyntax.Node) hcl.Diagnostics {
			if _, ok := n.(*wholeTextExpr); ok {
				wrapped++
			}
			return nil
		})
	}
	if wrapped == 0 {
		t.Fatal("no interpolation was wrapped")
	}
	for name, a := range before {
		b := after[name]
		if got, want := travStrings(b.Expr.Variables()), travStrings(a.Expr.Variables()); got != want {
			t.Errorf("%s: references %s, want %s", name, got, want)
		}
		want, wantDiags := a.Expr.Value(evalCtx)
		got, gotDiags := b.Expr.Value(evalCtx)
		if !got.RawEquals(want) {
			t.Errorf("%s: %#v, want %#v", name, got, want)
		}
		if gotDiags.Error() != wantDiags.Error() {
			t.Errorf("%s: diagnostics %q, want %q", name, gotDiags.Error(), wantDiags.Error())
		}
	}
}

func travStrings(travs []hcl.Traversal) string {
	var out string
	for _, tr := range travs {
		out += tr.RootName()
		for _, step := range tr[1:] {
			if a, ok := step.(hcl.TraverseAttr); ok {
				out += "." + a.Name
			}
		}
		out += " " + tr.SourceRange().String() + "; "
	}
	return out
}

func BenchmarkWholeText(b *testing.B) {
	n := cty.NumberIntVal(1234).Add(cty.MustParseNumberVal("0")).Modulo(cty.MustParseNumberVal("20"))
	b.Run("cty", func(b *testing.B) {
		for range b.N {
			_, _ = convert.Convert(n, cty.String)
		}
	})
	b.Run("whole", func(b *testing.B) {
		for range b.N {
			_ = wholeNumberText(n)
		}
	})
}
