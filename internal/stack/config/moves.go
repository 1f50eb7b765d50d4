package config

import "fmt"

// ImplicitMove is a release instance that was another instance of its
// block before count was added to the block (release.x → release.x[0]) or
// removed from it (release.x[0] → release.x), as Terraform moves an
// instance implicitly. for_each has no implicit move, as in Terraform.
type ImplicitMove struct {
	Addr ReleaseInstanceAddr // the address now
	From ReleaseInstanceAddr // the address before
	// FromName is the Helm release name From had by default: the name
	// the moved release's records have.
	FromName string
	// CountAdded: the block has count now (else: count was removed).
	CountAdded bool
}

// ImplicitMoves are the instances that may have moved: instance [0] of
// each block with count, and each single-instance block, when the block
// sets no name (a name says which release it is). Whether one did is for
// the caller to find in the stack's release records: the instance keeps
// FromName when records of it exist and none of its own default name
// (EvalOptions.KeptNames).
func (s *Stack) ImplicitMoves() []ImplicitMove {
	if s.ev == nil {
		return nil
	}
	var out []ImplicitMove
	for _, ri := range s.Releases {
		rel := s.ev.cfg.Releases[ri.Addr.Release.Name]
		if rel == nil || rel.ReleaseName != nil || rel.ForEach != nil {
			continue
		}
		switch {
		case rel.Count != nil && ri.Addr.Key == IntKey(0):
			out = append(out, ImplicitMove{Addr: ri.Addr, From: rel.Addr().Instance(NoKey), FromName: rel.Name, CountAdded: true})
		case rel.Count == nil && ri.Addr.Key == NoKey:
			out = append(out, ImplicitMove{Addr: ri.Addr, From: rel.Addr().Instance(IntKey(0)), FromName: fmt.Sprintf("%s-%d", rel.Name, 0)})
		}
	}
	return out
}
