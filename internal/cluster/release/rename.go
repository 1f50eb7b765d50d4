package release

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
)

// RenamedFromLabel marks a record copied from another release of the
// namespace when a moved block renamed it: its value is the old Helm
// name. A rename writes, in this order, every old revision copied under
// the new name (CopyHistory), the new revision (an upgrade), then deletes
// the old records (DeleteHistory): a rename cut short anywhere leaves
// records that say how far it got, and each step can be done again.
const RenamedFromLabel = "convoy.dev/renamed-from"

// RenamedDescription is the description of revision of release from,
// copied under a new name, which said description.
func RenamedDescription(from string, revision int, description string) string {
	d := fmt.Sprintf("Renamed from %s (revision %d)", from, revision)
	if description != "" {
		d += ": " + description
	}
	return d
}

// CopyHistory copies every record of release from to release to, in the
// same namespace, revision by revision, oldest first: the same revision
// numbers, statuses, charts, values and manifests, with the description
// saying where each came from, labelled RenamedFromLabel and with labels
// (the new address) over the old record's labels; the run, fingerprint
// and applied-state labels are dropped. A revision already copied (an interrupted rename) is left as
// it is; a record of to that was not copied from from is an error. It
// returns how many records it wrote.
func (s *Storage) CopyHistory(ctx context.Context, from, to string, labels map[string]string) (int, error) {
	old, err := s.History(ctx, from)
	if err != nil {
		return 0, fmt.Errorf("read the records of release %s: %w", from, err)
	}
	if len(old) == 0 {
		return 0, fmt.Errorf("release %s: %w", from, ErrReleaseNotFound)
	}
	have, err := s.History(ctx, to)
	if err != nil {
		return 0, fmt.Errorf("read the records of release %s: %w", to, err)
	}
	copied := map[int]bool{}
	for _, r := range have {
		if r.Labels[RenamedFromLabel] != from {
			return 0, fmt.Errorf("release %s revision %d exists and was not copied from release %s: a rename would overwrite another release", to, r.Version, from)
		}
		copied[r.Version] = true
	}
	n := 0
	for _, r := range old {
		if copied[r.Version] {
			continue
		}
		if err := s.Create(ctx, renamedCopy(r, from, to, labels)); err != nil && !errors.Is(err, ErrReleaseExists) {
			return n, fmt.Errorf("copy release %s revision %d to %s: %w", from, r.Version, to, err)
		}
		n++
	}
	return n, nil
}

// renamedCopy is r as revision of release to: what CopyHistory writes.
func renamedCopy(r *Release, from, to string, labels map[string]string) *Release {
	c := *r
	c.Name = to
	info := *r.Info
	info.Description = RenamedDescription(from, r.Version, r.Info.Description)
	c.Info = &info
	c.Labels = maps.Clone(r.Labels)
	if c.Labels == nil {
		c.Labels = map[string]string{}
	}
	// The fingerprint and applied state were the old release's: its
	// objects were applied under the old name, so no plan may prove the
	// new name unchanged from them.
	delete(c.Labels, RunLabel)
	delete(c.Labels, FingerprintLabel)
	delete(c.Labels, AppliedLabel)
	maps.Copy(c.Labels, labels)
	c.Labels[RenamedFromLabel] = from
	c.createdAt, c.resourceVersion = "", ""
	return &c
}

// RenamedHistory is what the history of release to is once CopyHistory
// copied hist (from's records) to it, without writing anything: what a
// plan plans a rename from. The records are shallow copies.
func RenamedHistory(hist []*Release, from, to string, labels map[string]string) []*Release {
	out := make([]*Release, len(hist))
	for i, r := range hist {
		out[i] = renamedCopy(r, from, to, labels)
	}
	return out
}

// DeleteHistory deletes every record of release name, oldest first, so
// that the newest (which says which address the release was at) goes
// last. A record already gone is no error.
func (s *Storage) DeleteHistory(ctx context.Context, name string) error {
	h, err := s.History(ctx, name)
	if err != nil {
		return fmt.Errorf("read the records of release %s: %w", name, err)
	}
	for _, r := range h {
		if err := s.Delete(ctx, name, r.Version); err != nil && !errors.Is(err, ErrReleaseNotFound) {
			return fmt.Errorf("delete release %s revision %d: %w", name, r.Version, err)
		}
	}
	return nil
}

// PreviousOwner is the release name the objects of p.Previous were
// applied under: the old name when that revision is a copy a rename
// made (RenamedFromLabel), else the release's own.
func (p *Prepared) PreviousOwner() string {
	if base := cmp.Or(p.Deployed, p.Last); base != nil && base.Labels[RenamedFromLabel] != "" {
		return base.Labels[RenamedFromLabel]
	}
	return p.Request.Name
}

// CopiesOf reports whether the records of release to that a rename
// copied from release from (RenamedFromLabel) are copies of from's
// records as they are now: each record of from with a copy has the same
// deploy time, and at least one has a copy. A release helm installed
// under the old name after a rename finished is another release.
func (s *Storage) CopiesOf(ctx context.Context, from, to string) (bool, error) {
	old, err := s.History(ctx, from)
	if err != nil {
		return false, err
	}
	have, err := s.History(ctx, to)
	if err != nil {
		return false, err
	}
	copies := map[int]*Release{}
	for _, r := range have {
		if r.Labels[RenamedFromLabel] == from {
			copies[r.Version] = r
		}
	}
	matched := 0
	for _, r := range old {
		c := copies[r.Version]
		if c == nil {
			continue
		}
		if !c.Info.LastDeployed.Equal(r.Info.LastDeployed) {
			return false, nil
		}
		matched++
	}
	return matched > 0, nil
}
