package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
)

// Removed is a `removed { from = release.x  destroy = false }` block: the
// stack no longer manages the release once at From. Destroy (the default)
// uninstalls it, as removing the release block alone does; destroy =
// false leaves its objects and Helm release in place and only takes the
// stack's label off its records, so that another stack, or helm, can take
// it over.
type Removed struct {
	From      MoveEndpoint
	Destroy   bool
	DeclRange hcl.Range
}

var removedBlockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "from", Required: true},
		{Name: "destroy"},
	},
}

func decodeRemovedBlock(block *hcl.Block) (*Removed, hcl.Diagnostics) {
	content, diags := block.Body.Content(removedBlockSchema)
	from, ok := decodeEndpoint(content, "from", &diags)
	if !ok {
		return nil, diags
	}
	r := &Removed{From: from, Destroy: true, DeclRange: block.DefRange}
	if a, ok := content.Attributes["destroy"]; ok {
		// A literal: what a removed block does is known before anything
		// is evaluated.
		diags = append(diags, gohcl.DecodeExpression(a.Expr, nil, &r.Destroy)...)
	}
	return r, diags
}

// Matches reports whether the block names addr: its instance, or any
// instance of its release when from has no key.
func (r *Removed) Matches(addr ReleaseInstanceAddr) bool {
	if r.From.Keyed {
		return addr == r.From.Addr
	}
	return addr.Release == r.From.Addr.Release
}

// checkRemoved validates the removed blocks: each names a release the
// files no longer declare, no other removed block names it, and no moved
// block moves it.
func checkRemoved(blocks []*Removed, moved []*Moved, cfg *Config, instances []*ReleaseInstance) ([]*Removed, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	var ok []*Removed
	seen := map[MoveEndpoint]*Removed{}
	for _, r := range blocks {
		if rel := cfg.Releases[r.From.Addr.Release.Name]; rel != nil {
			declared := !r.From.Keyed
			for _, ri := range instances {
				declared = declared || ri.Addr == r.From.Addr
			}
			if declared {
				diags = append(diags, stillDeclared(r.From, rel.DeclRange, "removed"))
				continue
			}
		}
		key := MoveEndpoint{Addr: r.From.Addr, Keyed: r.From.Keyed}
		if prev := seen[key]; prev != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate removed block",
				Detail:   fmt.Sprintf("The removed block at %s already names %s.", prev.DeclRange, r.From),
				Subject:  r.From.Range.Ptr(),
			})
			continue
		}
		seen[key] = r
		conflict := false
		for _, m := range moved {
			for _, e := range []MoveEndpoint{m.From, m.To} {
				if e.Addr.Release == r.From.Addr.Release && (!e.Keyed || !r.From.Keyed || e.Addr == r.From.Addr) {
					diags = append(diags, &hcl.Diagnostic{
						Severity: hcl.DiagError,
						Summary:  "Removed release is moved",
						Detail:   fmt.Sprintf("The moved block at %s moves %s to %s: a release is either moved or removed.", m.DeclRange, m.From, m.To),
						Subject:  r.From.Range.Ptr(),
					})
					conflict = true
					break
				}
			}
			if conflict {
				break
			}
		}
		if !conflict {
			ok = append(ok, r)
		}
	}
	return ok, diags
}
