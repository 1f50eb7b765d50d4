package config

import (
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// ResourceNeeds is what a release block's expressions read of another
// release's resources attribute, found from their syntax: a plan reads
// only those live objects of a dependency it leaves unchanged. An object
// not read stays unknown in the value the expressions see, so a read the
// analysis missed makes the release known only after apply, never
// planned with a wrong value.
type ResourceNeeds struct {
	// All: the objects are read in a way not told apart (whole, in a
	// for expression or a splat, through a function other than length
	// or keys, by a key known only when evaluated): every object is read.
	All bool
	// Objects are the keys read by a literal index, as in
	// release.db.resources["v1/Secret/db-auth"].data.password.
	Objects map[string]bool
	// Revision: the dependency's revision is read (which every upgrade
	// of it changes).
	Revision bool
}

// ResourceKey names an object in release.X.resources:
// "apiVersion/Kind/name", e.g. "v1/Secret/db-auth" or
// "apps/v1/Deployment/web".
func ResourceKey(apiVersion, kind, name string) string {
	return apiVersion + "/" + kind + "/" + name
}

// Reads says whether the object of key is read.
func (n ResourceNeeds) Reads(key string) bool { return n.All || n.Objects[key] }

// String names the needs, for memo keys and messages: "all", or the keys
// read in order ("" for none: only revision, status or the keys).
func (n ResourceNeeds) String() string {
	if n.All {
		return "all"
	}
	return strings.Join(slices.Sorted(maps.Keys(n.Objects)), "\n")
}

func (n *ResourceNeeds) merge(o ResourceNeeds) {
	if o.All {
		n.All = true
	}
	if o.Revision {
		n.Revision = true
	}
	for k := range o.Objects {
		if n.Objects == nil {
			n.Objects = map[string]bool{}
		}
		n.Objects[k] = true
	}
}

// ResourceNeeds is what the release block of dependent reads of the
// resources of release block dependency (see ResourceNeeds).
func (s *Stack) ResourceNeeds(dependent, dependency string) ResourceNeeds {
	if s.ev == nil {
		return ResourceNeeds{All: true}
	}
	return s.ev.needs[dependent][dependency]
}

// resourceNeeds adds what expr reads of each release's resources to out
// (by release name). expanded says which release blocks set count or
// for_each: an index right after their name picks an instance.
func resourceNeeds(expr hcl.Expression, expanded func(name string) bool, out map[string]ResourceNeeds) {
	add := func(name string, n ResourceNeeds) {
		cur := out[name]
		cur.merge(n)
		out[name] = cur
	}
	root, ok := expr.(hclsyntax.Node)
	if !ok {
		// Not native syntax: every release it refers to is read whole.
		for _, trav := range expr.Variables() {
			if attr, ok := releaseName(trav); ok {
				add(attr, ResourceNeeds{All: true})
			}
		}
		return
	}
	// extended are the chains another index or traversal continues;
	// counted those that are the only argument of length or keys.
	// (Keyed by the expressions chainOf follows, all pointers: some
	// nodes, such as a for expression's scope, are not comparable.)
	extended, counted := map[hclsyntax.Expression]bool{}, map[hclsyntax.Expression]bool{}
	hclsyntax.VisitAll(root, func(n hclsyntax.Node) hcl.Diagnostics {
		switch n := n.(type) {
		case *hclsyntax.IndexExpr:
			if isChainNode(n.Collection) {
				extended[n.Collection] = true
			}
		case *hclsyntax.RelativeTraversalExpr:
			if isChainNode(n.Source) {
				extended[n.Source] = true
			}
		case *hclsyntax.FunctionCallExpr:
			if (n.Name == "length" || n.Name == "keys") && len(n.Args) == 1 && !n.ExpandFinal && isChainNode(n.Args[0]) {
				counted[n.Args[0]] = true
			}
		}
		return nil
	})
	hclsyntax.VisitAll(root, func(n hclsyntax.Node) hcl.Diagnostics {
		expr, ok := n.(hclsyntax.Expression)
		if !ok || !isChainNode(expr) || extended[expr] {
			return nil
		}
		steps, ok := chainOf(expr)
		if !ok || len(steps) == 0 || steps[0].attr == "" {
			return nil
		}
		name := steps[0].attr
		add(name, needsOf(steps[1:], expanded(name), counted[expr]))
		return nil
	})
}

// releaseName is the release a traversal starts with (release.NAME).
func releaseName(trav hcl.Traversal) (string, bool) {
	if trav.RootName() != "release" || len(trav) < 2 {
		return "", false
	}
	attr, ok := trav[1].(hcl.TraverseAttr)
	return attr.Name, ok
}

// step is one step of a chain after "release": an attribute, a literal
// key, or a key known only when evaluated (dynamic).
type step struct {
	attr    string
	key     cty.Value
	dynamic bool
}

// name is the attribute a step names: an attribute, or a literal string
// key (x["resources"] is x.resources).
func (s step) name() (string, bool) {
	switch {
	case s.attr != "":
		return s.attr, true
	case !s.dynamic && s.key.Type() == cty.String && s.key.IsKnown() && !s.key.IsNull():
		return s.key.AsString(), true
	}
	return "", false
}

// isChainNode says whether n is a node chainOf follows.
func isChainNode(n hclsyntax.Expression) bool {
	switch n.(type) {
	case *hclsyntax.ScopeTraversalExpr, *hclsyntax.IndexExpr, *hclsyntax.RelativeTraversalExpr:
		return true
	}
	return false
}

// chainOf is the steps of a chain of attributes and indexes rooted at
// release (release.web[count.index].resources["v1/Service/web"]).
func chainOf(n hclsyntax.Node) ([]step, bool) {
	switch n := n.(type) {
	case *hclsyntax.ScopeTraversalExpr:
		if n.Traversal.RootName() != "release" {
			return nil, false
		}
		return traversalSteps(n.Traversal[1:]), true
	case *hclsyntax.IndexExpr:
		s, ok := chainOf(n.Collection)
		if !ok {
			return nil, false
		}
		return append(s, keyStep(n.Key)), true
	case *hclsyntax.RelativeTraversalExpr:
		s, ok := chainOf(n.Source)
		if !ok {
			return nil, false
		}
		return append(s, traversalSteps(n.Traversal)...), true
	}
	return nil, false
}

func traversalSteps(trav hcl.Traversal) []step {
	out := make([]step, 0, len(trav))
	for _, t := range trav {
		switch t := t.(type) {
		case hcl.TraverseAttr:
			out = append(out, step{attr: t.Name})
		case hcl.TraverseIndex:
			out = append(out, step{key: t.Key})
		default:
			out = append(out, step{dynamic: true})
		}
	}
	return out
}

// keyStep is the step of an index expression: literal when its key is a
// literal or a string without interpolations.
func keyStep(key hclsyntax.Expression) step {
	switch k := key.(type) {
	case *hclsyntax.LiteralValueExpr:
		return step{key: k.Val}
	case *hclsyntax.TemplateExpr:
		if k.IsStringLiteral() {
			if v, d := k.Value(nil); !d.HasErrors() {
				return step{key: v}
			}
		}
	}
	return step{dynamic: true}
}

// needsOf is what a chain after release.NAME reads of its resources:
// expanded says whether an index first picks an instance; counted whether
// the chain is the argument of length or keys.
func needsOf(steps []step, expanded, counted bool) ResourceNeeds {
	all := ResourceNeeds{All: true}
	if expanded && len(steps) > 0 {
		steps = steps[1:] // the instance
	}
	switch {
	case len(steps) == 0 && counted:
		return ResourceNeeds{} // how many instances or attributes
	case len(steps) == 0:
		return all // instances whole
	}
	attr, ok := steps[0].name()
	switch {
	case !ok:
		return all
	case attr == "revision":
		return ResourceNeeds{Revision: true}
	case attr != "resources":
		return ResourceNeeds{} // name, namespace, status, …
	case len(steps) == 1 && counted:
		return ResourceNeeds{} // its keys
	case len(steps) == 1:
		return all
	}
	key, ok := steps[1].name()
	if !ok {
		return all
	}
	return ResourceNeeds{Objects: map[string]bool{key: true}}
}
