package config

import (
	"fmt"
	"strings"

	"github.com/convoy-sh/convoy/internal/stack/addrs"
	"github.com/hashicorp/hcl/v2"
)

// Moved is a `moved { from = release.a  to = release.b }` block: the
// release once at From is now at To. Like Terraform's, moves chain (a→b
// and b→c move a to c), and conflicting or cyclic moves are errors.
type Moved struct {
	From, To  MoveEndpoint
	DeclRange hcl.Range
}

// MoveEndpoint is one side of a moved block (or the from of a removed
// block): release.a, release.a[0] or release.a["eu"].
type MoveEndpoint struct {
	// Addr is the instance named; the key is NoKey when none was written.
	Addr ReleaseInstanceAddr
	// Keyed: an instance key was written. Moving release.a to release.b,
	// neither keyed, moves every instance of a to the instance of b with
	// the same key; an unkeyed endpoint beside a keyed one is the
	// instance without a key.
	Keyed bool
	Range hcl.Range
}

func (e MoveEndpoint) String() string { return e.Addr.String() }

var movedBlockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "from", Required: true},
		{Name: "to", Required: true},
	},
}

func decodeMovedBlock(block *hcl.Block) (*Moved, hcl.Diagnostics) {
	content, diags := block.Body.Content(movedBlockSchema)
	m := &Moved{DeclRange: block.DefRange}
	from, ok1 := decodeEndpoint(content, "from", &diags)
	to, ok2 := decodeEndpoint(content, "to", &diags)
	if !ok1 || !ok2 {
		return nil, diags
	}
	m.From, m.To = from, to
	if from.Addr == to.Addr {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Redundant moved block",
			Detail:   fmt.Sprintf("This moved block moves %s to itself. Remove it, or name the address the release was at before.", from),
			Subject:  hcl.RangeBetween(from.Range, to.Range).Ptr(),
		})
		return nil, diags
	}
	return m, diags
}

// decodeEndpoint reads a release address attribute: a static reference,
// never evaluated.
func decodeEndpoint(content *hcl.BodyContent, name string, diags *hcl.Diagnostics) (MoveEndpoint, bool) {
	a, ok := content.Attributes[name]
	if !ok {
		return MoveEndpoint{}, false // the schema reported it
	}
	bad := &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid release address",
		Detail:   fmt.Sprintf("%s must be a release address: release.NAME, release.NAME[INDEX] or release.NAME[\"KEY\"].", name),
		Subject:  a.Expr.Range().Ptr(),
	}
	trav, d := hcl.AbsTraversalForExpr(a.Expr)
	if d.HasErrors() || len(trav) < 2 || len(trav) > 3 || trav.RootName() != "release" {
		*diags = append(*diags, bad)
		return MoveEndpoint{}, false
	}
	rel, ok := trav[1].(hcl.TraverseAttr)
	if !ok {
		*diags = append(*diags, bad)
		return MoveEndpoint{}, false
	}
	ep := MoveEndpoint{Addr: ReleaseAddr{Name: rel.Name}.Instance(NoKey), Range: trav.SourceRange()}
	if len(trav) == 3 {
		idx, ok := trav[2].(hcl.TraverseIndex)
		if !ok {
			*diags = append(*diags, bad)
			return MoveEndpoint{}, false
		}
		k, ok := addrs.KeyFromValue(idx.Key)
		if !ok {
			*diags = append(*diags, bad)
			return MoveEndpoint{}, false
		}
		ep.Addr.Key, ep.Keyed = k, true
	}
	return ep, true
}

// wholeRelease: the block moves every instance of a release, keys kept.
func (m *Moved) wholeRelease() bool { return !m.From.Keyed && !m.To.Keyed }

// source returns the address whose release m moves to addr.
func (m *Moved) source(addr ReleaseInstanceAddr) (ReleaseInstanceAddr, bool) {
	if m.wholeRelease() {
		if addr.Release == m.To.Addr.Release {
			return m.From.Addr.Release.Instance(addr.Key), true
		}
		return ReleaseInstanceAddr{}, false
	}
	return m.From.Addr, addr == m.To.Addr
}

// endpointKey identifies an endpoint for conflicts and cycles: a whole
// release and its instance without a key are different endpoints.
type endpointKey struct {
	addr  ReleaseInstanceAddr
	whole bool
}

// Moves are a stack's moved blocks, checked: no two move the same
// release, nor two into the same place, and none is part of a cycle.
type Moves struct {
	blocks []*Moved
}

// MoveSource is an address a release was at before, and the moved block
// that says so.
type MoveSource struct {
	Addr  ReleaseInstanceAddr
	Block hcl.Range
}

// Sources returns the addresses whose release is now at addr, following
// chains (a→b, b→c: c's sources are b, then a), nearest first.
func (m Moves) Sources(addr ReleaseInstanceAddr) []MoveSource {
	var out []MoveSource
	seen := map[ReleaseInstanceAddr]bool{addr: true}
	frontier := []ReleaseInstanceAddr{addr}
	for len(frontier) > 0 {
		cur := frontier[0]
		frontier = frontier[1:]
		for _, b := range m.blocks {
			from, ok := b.source(cur)
			if !ok || seen[from] {
				continue
			}
			seen[from] = true
			out = append(out, MoveSource{Addr: from, Block: b.DeclRange})
			frontier = append(frontier, from)
		}
	}
	return out
}

// Empty reports whether the stack has no moved blocks.
func (m Moves) Empty() bool { return len(m.blocks) == 0 }

// checkMoves validates the moved blocks against each other and against
// the evaluated instances: a release still declared at a move's from is
// an error (Terraform's "moved object still exists"), as are two moves of
// one release, two moves into one place and cycles.
func checkMoves(blocks []*Moved, cfg *Config, instances []*ReleaseInstance) (Moves, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	declared := map[ReleaseInstanceAddr]bool{}
	for _, ri := range instances {
		declared[ri.Addr] = true
	}
	key := func(m *Moved, e MoveEndpoint) endpointKey { return endpointKey{e.Addr, m.wholeRelease()} }
	byFrom := map[endpointKey]*Moved{}
	byTo := map[endpointKey]*Moved{}
	var ok []*Moved
	for _, m := range blocks {
		switch {
		case m.wholeRelease() && cfg.Releases[m.From.Addr.Release.Name] != nil:
			diags = append(diags, stillDeclared(m.From, cfg.Releases[m.From.Addr.Release.Name].DeclRange, "moved"))
			continue
		case !m.wholeRelease() && declared[m.From.Addr]:
			diags = append(diags, stillDeclared(m.From, cfg.Releases[m.From.Addr.Release.Name].DeclRange, "moved"))
			continue
		}
		if prev := byFrom[key(m, m.From)]; prev != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Ambiguous move statements",
				Detail:   fmt.Sprintf("The moved block at %s moves %s to %s; this one moves it to %s. A release can move to one place only.", prev.DeclRange, m.From, prev.To, m.To),
				Subject:  m.From.Range.Ptr(),
			})
			continue
		}
		if prev := byTo[key(m, m.To)]; prev != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Ambiguous move statements",
				Detail:   fmt.Sprintf("The moved block at %s moves %s to %s; this one moves %s there too. Only one release can move to an address.", prev.DeclRange, prev.From, m.To, m.From),
				Subject:  m.To.Range.Ptr(),
			})
			continue
		}
		byFrom[key(m, m.From)], byTo[key(m, m.To)] = m, m
		ok = append(ok, m)
	}
	diags = append(diags, moveCycles(ok, key)...)
	if diags.HasErrors() {
		return Moves{}, diags
	}
	return Moves{blocks: ok}, diags
}

// moveCycles reports each cycle of moves once, with its whole path, at
// the block that closes it (in file order).
func moveCycles(blocks []*Moved, key func(*Moved, MoveEndpoint) endpointKey) hcl.Diagnostics {
	var diags hcl.Diagnostics
	next := map[endpointKey]*Moved{}
	for _, m := range blocks {
		next[key(m, m.From)] = m
	}
	reported := map[*Moved]bool{}
	for _, start := range blocks {
		if reported[start] {
			continue
		}
		path := []*Moved{start}
		onPath := map[*Moved]bool{start: true}
		for cur := start; ; {
			n := next[endpointKey{cur.To.Addr, cur.wholeRelease()}]
			if n == nil {
				break
			}
			if onPath[n] {
				if n != start {
					break // a cycle further on; reported from its own start
				}
				names := []string{start.From.String()}
				for _, m := range path {
					names = append(names, m.To.String())
					reported[m] = true
				}
				last := path[len(path)-1]
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Cyclic move statements",
					Detail:   fmt.Sprintf("These moved blocks form a cycle: %s. A release cannot move back to where it was.", strings.Join(names, " → ")),
					Subject:  last.DeclRange.Ptr(),
				})
				break
			}
			path = append(path, n)
			onPath[n] = true
			cur = n
		}
	}
	return diags
}

// stillDeclared reports a moved or removed block whose from is a release
// the files still declare.
func stillDeclared(from MoveEndpoint, decl hcl.Range, kind string) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Release still declared",
		Detail:   fmt.Sprintf("This %s block's from is %s, which the release block at %s still declares. A %s block names an address the files no longer declare.", kind, from, decl, kind),
		Subject:  from.Range.Ptr(),
	}
}

// decodeMoveBlock decodes a moved or removed block into c.
func (c *Config) decodeMoveBlock(block *hcl.Block) hcl.Diagnostics {
	if block.Type == "moved" {
		m, diags := decodeMovedBlock(block)
		if m != nil {
			c.Moved = append(c.Moved, m)
		}
		return diags
	}
	r, diags := decodeRemovedBlock(block)
	if r != nil {
		c.Removed = append(c.Removed, r)
	}
	return diags
}

// checkMoveBlocks checks the moved and removed blocks against the
// evaluated instances and keeps them in the stack.
func (s *Stack) checkMoveBlocks(cfg *Config) hcl.Diagnostics {
	moves, diags := checkMoves(cfg.Moved, cfg, s.Releases)
	removed, d := checkRemoved(cfg.Removed, cfg.Moved, cfg, s.Releases)
	s.Moves, s.Removed = moves, removed
	return append(diags, d...)
}
