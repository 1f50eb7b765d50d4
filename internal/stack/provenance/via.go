package provenance

import (
	"fmt"
	"strings"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// via is what expr read, in the order written, each once: the variables
// (with where their values were given), the locals (with what they
// read), the attributes of other releases it refers to and the chosen
// environment's name. each and count stand for what for_each and count
// read.
func (b *builder) via(expr hcl.Expression) []plan.Origin {
	if expr == nil {
		return nil
	}
	if v, ok := b.vias[expr]; ok {
		return v
	}
	var out []plan.Origin
	seen := map[string]bool{}
	add := func(o plan.Origin) {
		if !seen[o.Input] {
			seen[o.Input] = true
			out = append(out, o)
		}
	}
	for _, trav := range expr.Variables() {
		if len(trav) < 2 {
			continue
		}
		attr, ok := trav[1].(hcl.TraverseAttr)
		if !ok {
			continue
		}
		switch trav.RootName() {
		case "var":
			add(b.variable(attr.Name))
		case "local":
			if o := b.local(attr.Name); o != nil {
				add(*o)
			}
		case "release":
			o := plan.Origin{Input: traversalText(trav), Kind: plan.OriginOutput}
			if b.src != nil {
				if r := b.src.Releases[attr.Name]; r != nil {
					o.Source = b.source(r.DeclRange)
				}
			}
			add(o)
		case "environment":
			o := plan.Origin{Input: "environment.name", Kind: plan.OriginEnvironment}
			if b.src != nil && b.st.Environment != "" {
				if env := b.src.Environments[b.st.Environment]; env != nil {
					o.Source = b.source(env.DeclRange)
				}
			}
			add(o)
		case "each", "count":
			if b.blk == nil {
				continue
			}
			from := b.blk.ForEach
			if trav.RootName() == "count" {
				from = b.blk.Count
			}
			for _, o := range b.via(from) {
				add(o)
			}
		}
	}
	b.vias[expr] = out
	return out
}

// variable is var.name: declared where its block is, read from where its
// value was given.
func (b *builder) variable(name string) plan.Origin {
	if o, ok := b.vars[name]; ok {
		return o
	}
	o := plan.Origin{Input: "var." + name, Kind: plan.OriginVariable}
	if b.src != nil {
		if v := b.src.Variables[name]; v != nil {
			o.Source = b.source(v.DeclRange)
		}
	}
	if vo, ok := b.st.VariableOrigin(name); ok {
		o.Via = []plan.Origin{b.given(name, vo)}
	}
	b.vars[name] = o
	return o
}

// given is where the value of var.name was given.
func (b *builder) given(name string, vo config.VariableOrigin) plan.Origin {
	o := plan.Origin{Input: "var." + name}
	if vo.Range != nil {
		o.Source = b.source(*vo.Range)
	}
	switch vo.Given {
	case config.GivenDefault:
		o.Kind = plan.OriginVarDefault
	case config.GivenAutoFile:
		o.Kind = plan.OriginAutoVarFile
	case config.GivenEnvironment:
		o.Kind = plan.OriginEnvironment
	case config.GivenVarFile:
		o.Kind = plan.OriginVarFile
	case config.GivenEnvVar:
		o.Kind, o.Source = plan.OriginEnv, &plan.Source{Env: vo.Where}
	case config.GivenFlag:
		o.Kind, o.Source = plan.OriginFlag, &plan.Source{Flag: "--var " + name + "=…"}
	case config.GivenCaller:
		// spec.vars, ConfigMap NS/NAME, Secret NS/NAME: no file, no flag.
		o.Kind, o.Input = plan.OriginVarsFrom, vo.Where
	}
	return o
}

// local is local.name, with what its expression read; nil for an
// undeclared one (or one that reads itself, which evaluation refused).
func (b *builder) local(name string) *plan.Origin {
	if o, ok := b.locals[name]; ok {
		return o
	}
	if b.src == nil || b.src.Locals[name] == nil {
		return &plan.Origin{Input: "local." + name, Kind: plan.OriginLocal}
	}
	b.locals[name] = nil // being built
	l := b.src.Locals[name]
	o := &plan.Origin{Input: "local." + name, Kind: plan.OriginLocal, Source: b.source(l.DeclRange)}
	o.Via = b.via(l.Expr)
	b.locals[name] = o
	return o
}

// traversalText writes a reference as written, up to its first step
// that is not an attribute or a literal index.
func traversalText(trav hcl.Traversal) string {
	var s strings.Builder
	s.WriteString(trav.RootName())
	for _, step := range trav[1:] {
		switch t := step.(type) {
		case hcl.TraverseAttr:
			s.WriteString("." + t.Name)
		case hcl.TraverseIndex:
			k := t.Key
			switch {
			case k.IsKnown() && !k.IsNull() && k.Type() == cty.String:
				fmt.Fprintf(&s, "[%q]", k.AsString())
			case k.IsKnown() && !k.IsNull() && k.Type() == cty.Number:
				s.WriteString("[" + k.AsBigFloat().Text('f', -1) + "]")
			default:
				return s.String()
			}
		default:
			return s.String()
		}
	}
	return s.String()
}
