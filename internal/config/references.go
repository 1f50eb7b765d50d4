package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
)

// RefKind is what a reference's root name refers to.
type RefKind uint8

const (
	RefVar     RefKind = iota + 1 // var.NAME
	RefLocal                      // local.NAME
	RefEach                       // each.key, each.value
	RefCount                      // count.index
	RefCluster                    // cluster.NAME
	RefRelease                    // release.NAME...
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
}

// parseReference types one traversal. Unknown roots and malformed
// references are diagnostics.
func parseReference(trav hcl.Traversal) (*Reference, hcl.Diagnostics) {
	root := trav.RootName()
	rng := trav.SourceRange()
	kind, ok := map[string]RefKind{
		"var": RefVar, "local": RefLocal, "each": RefEach, "count": RefCount,
		"cluster": RefCluster, "release": RefRelease,
	}[root]
	if !ok {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Unknown reference",
			Detail:   fmt.Sprintf("There is no %q in the stack language. References start with var., local., each., count., cluster. or release.", root),
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
	for _, trav := range expr.Variables() {
		ref, d := parseReference(trav)
		diags = append(diags, d...)
		if ref == nil {
			continue
		}
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
	undeclared := func(kind, block string) *hcl.Diagnostic {
		return &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Reference to undeclared " + kind,
			Detail:   fmt.Sprintf("There is no %s named %q. Declare it with a %s block.", kind, ref.Name, block),
			Subject:  ref.Range.Ptr(),
		}
	}
	switch ref.Kind {
	case RefVar:
		if _, ok := c.Variables[ref.Name]; !ok {
			return undeclared("input variable", fmt.Sprintf("variable %q", ref.Name))
		}
	case RefLocal:
		if _, ok := c.Locals[ref.Name]; !ok {
			return &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Reference to undeclared local value",
				Detail:   fmt.Sprintf("There is no local value named %q. Declare it in a locals block.", ref.Name),
				Subject:  ref.Range.Ptr(),
			}
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
			return undeclared("cluster", fmt.Sprintf("cluster %q", ref.Name))
		}
	case RefRelease:
		if !sc.releases {
			return notHere(fmt.Sprintf("Releases can be referred to only from other release blocks, not from %s.", sc.what))
		}
		if _, ok := c.Releases[ref.Name]; !ok {
			return undeclared("release", fmt.Sprintf("release %q", ref.Name))
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
