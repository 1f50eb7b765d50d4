package config

import (
	"slices"

	"github.com/hashicorp/hcl/v2"
)

// DependencyRef is one way a release instance depends on another: a
// reference in its expressions (release.db.outputs.url) or a depends_on
// entry, as written, with its range.
type DependencyRef struct {
	Text      string
	Range     hcl.Range
	DependsOn bool // a depends_on entry, not a value read
}

// DependencyRefs are the references through which the release instance
// dependent depends on dependency, in source order, each text once: what
// dependent reads of it, and depends_on entries.
func (s *Stack) DependencyRefs(dependent, dependency ReleaseInstanceAddr) []DependencyRef {
	if s.ev == nil {
		return nil
	}
	e := s.ev
	rel := e.cfg.Releases[dependent.Release.Name]
	if rel == nil || dependency.Release.Name == rel.Name {
		return nil
	}
	var out []DependencyRef
	seen := map[string]bool{}
	add := func(rng hcl.Range, dependsOn bool) {
		text := e.sourceText(rng)
		if seen[text] {
			return
		}
		seen[text] = true
		out = append(out, DependencyRef{Text: text, Range: rng, DependsOn: dependsOn})
	}
	for _, d := range rel.DependsOn {
		if d.Release.Name == dependency.Release.Name {
			add(d.Range, true)
		}
	}
	for _, ref := range e.refs[rel.Name] {
		if ref.Kind != RefRelease || ref.Name != dependency.Release.Name {
			continue
		}
		switch {
		case ref.SameKey && dependent.Key != dependency.Key:
			continue
		case ref.Key != nil && *ref.Key != dependency.Key:
			continue
		}
		add(ref.Range, false)
	}
	slices.SortStableFunc(out, func(a, b DependencyRef) int {
		if a.Range.Filename != b.Range.Filename {
			if a.Range.Filename < b.Range.Filename {
				return -1
			}
			return 1
		}
		return a.Range.Start.Byte - b.Range.Start.Byte
	})
	return out
}

// sourceText is the text of rng in the stack's files ("" when it is not
// in them).
func (e *evaluator) sourceText(rng hcl.Range) string {
	f := e.cfg.Files[rng.Filename]
	if f == nil || rng.Start.Byte < 0 || rng.End.Byte > len(f.Bytes) || rng.Start.Byte > rng.End.Byte {
		return ""
	}
	return string(f.Bytes[rng.Start.Byte:rng.End.Byte])
}
