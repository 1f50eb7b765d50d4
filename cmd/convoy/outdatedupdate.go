package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/safefile"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/hashicorp/hcl/v2"
)

// updateTarget is which newest version `outdated --update` moves to.
type updateTarget string

const (
	updatePatch updateTarget = "patch"
	updateMinor updateTarget = "minor"
	updateMajor updateTarget = "major"
)

func (t *updateTarget) String() string { return string(*t) }
func (t *updateTarget) Type() string   { return "patch|minor|major" }
func (t *updateTarget) Set(s string) error {
	switch v := updateTarget(s); v {
	case updatePatch, updateMinor, updateMajor:
		*t = v
		return nil
	}
	return fmt.Errorf("%q is not patch, minor or major", s)
}

func (t updateTarget) of(n source.Newest) string {
	switch t {
	case updatePatch:
		return n.Patch
	case updateMinor:
		return n.Minor
	}
	return n.Major
}

// update rewrites the constraints of the outdated releases that need it,
// then locks the new versions. It returns each updated release's new
// constraint ("" when the constraint already admitted the target).
func (o outdatedOptions) update(ctx context.Context, s streams, src run.Source, rels []run.OutdatedRelease, res *source.Resolver) (map[string]string, error) {
	updated := map[string]string{}
	byFile := map[string]map[string]string{}
	var diags hcl.Diagnostics
	for _, r := range rels {
		target := o.To.of(r.Newest)
		if r.Err != nil || !r.Outdated || target == "" || !source.Newer(target, r.Locked) {
			continue
		}
		c, err := source.BumpConstraint(r.Constraint, target)
		if err != nil {
			rng := r.Block
			if r.VersionRange != nil {
				rng = *r.VersionRange
			}
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Constraint not rewritten", Detail: fmt.Sprintf("%s: %v (to admit %s).", r.Release, err, target), Subject: rng.Ptr()})
			continue
		}
		if c == r.Constraint {
			updated[r.Release.Name] = ""
			continue
		}
		if r.VersionRange == nil {
			continue // no version attribute: it admits everything already
		}
		file := r.VersionRange.Filename
		if byFile[file] == nil {
			byFile[file] = map[string]string{}
		}
		byFile[file][r.Release.Name] = c
		updated[r.Release.Name] = c
	}
	for _, file := range slices.Sorted(maps.Keys(byFile)) {
		st, err := os.Stat(file)
		if err != nil {
			return nil, err
		}
		data, err := safefile.Read(file, 16<<20)
		if err != nil {
			return nil, err
		}
		out, ds := config.SetReleaseVersions(data, file, byFile[file])
		diags = append(diags, ds...)
		for _, d := range ds {
			if d.Severity == hcl.DiagError && d.Subject != nil {
				for name := range byFile[file] {
					if b := diagRelease(rels, name); b != nil && b.VersionRange != nil && b.VersionRange.Start == d.Subject.Start {
						delete(updated, name)
					}
				}
			}
		}
		if out == nil {
			continue
		}
		if err := safefile.WriteAtomic(file, out, st.Mode().Perm()); err != nil {
			return nil, fmt.Errorf("write %s: %w", file, err)
		}
	}
	if len(diags) > 0 {
		for _, d := range diags {
			d.Severity = hcl.DiagWarning // reported; the other releases are updated
		}
		writeDiagnostics(s.Err, diags, nil)
	}
	if len(updated) == 0 {
		return updated, nil
	}
	session, err := run.Open(ctx, run.Options{Source: src})
	if err != nil {
		return nil, fmt.Errorf("the rewritten stack: %w", err)
	}
	defer session.Close()
	only := map[string]bool{}
	for name := range updated {
		only[name] = true
	}
	if _, err := session.Init(ctx, run.InitRequest{Upgrade: true, UpgradeOnly: only, Resolver: res, Warn: s.Err}); err != nil {
		return nil, errors.Join(errors.New("lock the updated versions"), err)
	}
	return updated, nil
}

func diagRelease(rels []run.OutdatedRelease, name string) *run.OutdatedRelease {
	for i := range rels {
		if rels[i].Release.Name == name {
			return &rels[i]
		}
	}
	return nil
}
