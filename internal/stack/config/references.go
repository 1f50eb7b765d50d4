package config

import (
	"fmt"

	"github.com/convoy-sh/convoy/internal/stack/addrs"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// RefKind is what a reference's root name refers to.
type RefKind uint8

const (
	RefVar         RefKind = iota + 1 // var.NAME
	RefLocal                          // local.NAME
	RefEach                           // each.key, each.value
	RefCount                          // count.index
	RefCluster                        // cluster.NAME
	RefRelease                        // release.NAME...
	RefEnvironment                    // environment.name
)

func (k RefKind) String() string {
	switch k {
	case RefVar:
		return "var"
	case RefLocal:
		return "local"
	case RefEach:
		return "each"
	case RefCount:
		return "count"
	case RefCluster:
		return "cluster"
	case RefRelease:
		return "release"
	case RefEnvironment:
		return "environment"
	}
	return "?"
}

// Reference is a typed reference found in an expression, parsed from one of
// its traversals (expr.Variables()).
type Reference struct {
	Kind RefKind
	// Name is the referenced object's name: the variable, local, cluster or
	// release name, or the attribute of each / count ("key", "index").
	Name string
	// Range covers the whole traversal, for diagnostics.
	Range hcl.Range
	// For release references: Key is set when the reference names one
	// instance with a literal key (release.api["eu"]); SameKey when it is
	// indexed by the referring instance's own key (release.api[each.key],
	// release.w[count.index]). Otherwise it refers to all instances.
	Key     *InstanceKey
	SameKey bool
}

// parseReference types one traversal. Unknown roots and malformed
// references are diagnostics.
func parseReference(trav hcl.Traversal) (*Reference, hcl.Diagnostics) {
	root := trav.RootName()
	rng := trav.SourceRange()
	kind, ok := map[string]RefKind{
		"var": RefVar, "local": RefLocal, "each": RefEach, "count": RefCount,
		"cluster": RefCluster, "release": RefRelease, "environment": RefEnvironment,
	}[root]
	if !ok {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Unknown reference",
			Detail:   fmt.Sprintf("There is no %q in the stack language. References start with var., local., each., count., cluster., release. or environment.", root),
			Subject:  trav[0].SourceRange().Ptr(),
		}}
	}
	if len(trav) < 2 {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid reference",
			Detail:   fmt.Sprintf("%q cannot be used on its own: name an attribute, as in %s.NAME.", root, root),
			Subject:  rng.Ptr(),
		}}
	}
	attr, ok := trav[1].(hcl.TraverseAttr)
	if !ok {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid reference",
			Detail:   fmt.Sprintf("An attribute name is required after %q, as in %s.NAME.", root, root),
			Subject:  trav[1].SourceRange().Ptr(),
		}}
	}
	ref := &Reference{Kind: kind, Name: attr.Name, Range: rng}
	if kind == RefRelease && len(trav) > 2 {
		if idx, ok := trav[2].(hcl.TraverseIndex); ok {
			if k, ok := addrs.KeyFromValue(idx.Key); ok {
				ref.Key = &k
			}
		}
	}
	switch kind {
	case RefEach:
		if attr.Name != "key" && attr.Name != "value" {
			return nil, hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Invalid each attribute",
				Detail:   "each has only the attributes each.key and each.value.",
				Subject:  rng.Ptr(),
			}}
		}
	case RefEnvironment:
		if attr.Name != "name" {
			return nil, hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Invalid environment attribute",
				Detail:   "environment has only the attribute environment.name.",
				Subject:  rng.Ptr(),
			}}
		}
	case RefCount:
		if attr.Name != "index" {
			return nil, hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Invalid count attribute",
				Detail:   "count has only the attribute count.index.",
				Subject:  rng.Ptr(),
			}}
		}
	}
	return ref, nil
}

// scope says which references an expression may contain.
type scope struct {
	what     string // for messages, e.g. "a local value"
	each     bool   // each.* allowed
	count    bool   // count.index allowed
	clusters bool
	releases bool
	self     string // release name that may not refer to itself
}

// References returns the typed references of expr (nil-safe), checked
// against the declarations in c for the given scope.
func (c *Config) references(expr hcl.Expression, sc scope) ([]*Reference, hcl.Diagnostics) {
	if expr == nil {
		return nil, nil
	}
	var refs []*Reference
	var diags hcl.Diagnostics
	sameKey := sameKeyIndexes(expr)
	for _, trav := range expr.Variables() {
		ref, d := parseReference(trav)
		diags = append(diags, d...)
		if ref == nil {
			continue
		}
		ref.SameKey = ref.Kind == RefRelease && ref.Key == nil && sameKey[ref.Range]
		if d := c.checkReference(ref, sc); d != nil {
			diags = append(diags, d)
			continue
		}
		refs = append(refs, ref)
	}
	return refs, diags
}

func (c *Config) checkReference(ref *Reference, sc scope) *hcl.Diagnostic {
	notHere := func(detail string) *hcl.Diagnostic {
		return &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("Reference to %s not allowed here", ref.Kind),
			Detail:   detail,
			Subject:  ref.Range.Ptr(),
		}
	}
	// undeclared says what is missing: a declared name within two edits
	// is suggested (Terraform's "Did you mean"), else how to declare it.
	undeclared := func(kind, prefix, suggestion, declare string) *hcl.Diagnostic {
		detail := fmt.Sprintf("There is no %s named %q. ", kind, ref.Name)
		if suggestion != "" {
			detail += fmt.Sprintf("Did you mean %s.%s?", prefix, suggestion)
		} else {
			detail += declare
		}
		return &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Reference to undeclared " + kind,
			Detail:   detail,
			Subject:  ref.Range.Ptr(),
		}
	}
	switch ref.Kind {
	case RefVar:
		if _, ok := c.Variables[ref.Name]; !ok {
			return undeclared("input variable", "var", suggestName(ref.Name, c.Variables), fmt.Sprintf("Declare it with a variable %q block.", ref.Name))
		}
	case RefLocal:
		if _, ok := c.Locals[ref.Name]; !ok {
			return undeclared("local value", "local", suggestName(ref.Name, c.Locals), "Declare it in a locals block.")
		}
	case RefEach:
		if !sc.each {
			return notHere(fmt.Sprintf("each.%s is only available in a release block that sets for_each.", ref.Name))
		}
	case RefCount:
		if !sc.count {
			return notHere("count.index is only available in a release block that sets count.")
		}
	case RefCluster:
		if !sc.clusters {
			return notHere(fmt.Sprintf("Clusters can be referred to only from release blocks, not from %s.", sc.what))
		}
		if _, ok := c.Clusters[ref.Name]; !ok {
			return undeclared("cluster", "cluster", suggestName(ref.Name, c.Clusters), fmt.Sprintf("Declare it with a cluster %q block.", ref.Name))
		}
	case RefRelease:
		if !sc.releases {
			return notHere(fmt.Sprintf("Releases can be referred to only from other release blocks, not from %s.", sc.what))
		}
		if _, ok := c.Releases[ref.Name]; !ok {
			return undeclared("release", "release", suggestName(ref.Name, c.Releases), fmt.Sprintf("Declare it with a release %q block.", ref.Name))
		}
		if ref.Name == sc.self {
			return &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Self-referential release",
				Detail:   fmt.Sprintf("release.%s cannot refer to its own attributes.", ref.Name),
				Subject:  ref.Range.Ptr(),
			}
		}
	}
	return nil
}

// sameKeyIndexes finds release references indexed by the instance's own key,
// release.NAME[each.key] or release.NAME[count.index], and returns the
// ranges of their release.NAME traversals. Such a reference depends on one
// instance only, which lets per-key chains (web[k] → api[k]) run in
// parallel.
func sameKeyIndexes(expr hcl.Expression) map[hcl.Range]bool {
	out := map[hcl.Range]bool{}
	node, ok := expr.(hclsyntax.Node)
	if !ok {
		return out
	}
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		ix, ok := n.(*hclsyntax.IndexExpr)
		if !ok {
			return nil
		}
		coll, ok := ix.Collection.(*hclsyntax.ScopeTraversalExpr)
		if !ok || len(coll.Traversal) != 2 || coll.Traversal.RootName() != "release" {
			return nil
		}
		key, ok := ix.Key.(*hclsyntax.ScopeTraversalExpr)
		if !ok || len(key.Traversal) != 2 {
			return nil
		}
		attr, ok := key.Traversal[1].(hcl.TraverseAttr)
		if !ok {
			return nil
		}
		switch {
		case key.Traversal.RootName() == "each" && attr.Name == "key",
			key.Traversal.RootName() == "count" && attr.Name == "index":
			out[coll.Traversal.SourceRange()] = true
		}
		return nil
	})
	return out
}
