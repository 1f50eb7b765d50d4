package run

import (
	"fmt"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/dag"
)

// targetedDestroy is a destroy limited to some releases, and the releases
// outside it that depend on them: they read what it uninstalls.
type targetedDestroy struct {
	st *config.Stack
	g  *dag.Graph[config.ReleaseInstanceAddr]
	// destroyed are the releases the plan uninstalls.
	destroyed map[config.ReleaseInstanceAddr]bool
	// included are the dependents --include-dependents added.
	included []config.ReleaseInstanceAddr
}

// newTargetedDestroy scopes a destroy of targets (with what they depend on
// when includeDeps). With includeDependents the releases that depend on
// them, directly or through one another, are uninstalled too, as Terraform
// destroys a target's dependents; without, they stay, and the plan says
// so. It returns the targets the plan is computed with.
func newTargetedDestroy(st *config.Stack, targets []config.ReleaseInstanceAddr, includeDeps, includeDependents bool) (*targetedDestroy, []config.ReleaseInstanceAddr) {
	g, diags := st.Graph()
	if diags.HasErrors() {
		return nil, targets // Load reported it
	}
	scope := g.Subgraph(targets, includeDeps).Vertices()
	td := &targetedDestroy{st: st, g: g, destroyed: map[config.ReleaseInstanceAddr]bool{}}
	for _, a := range scope {
		td.destroyed[a] = true
	}
	if !includeDependents {
		return td, targets
	}
	out := slices.Clone(targets)
	for _, a := range g.WithDependents(scope).Vertices() {
		if !td.destroyed[a] {
			td.destroyed[a] = true
			td.included = append(td.included, a)
			out = append(out, a)
		}
	}
	return td, out
}

// note adds to the plan, on each release it uninstalls, what the releases
// outside it that depend on the release read of it (they stay installed:
// --include-dependents uninstalls them too), and on each dependent
// --include-dependents added, why it is uninstalled.
func (td *targetedDestroy) note(p *plan.Plan) {
	if td == nil || p == nil {
		return
	}
	byAddr := map[string]*plan.ReleaseChange{}
	for _, rc := range p.Releases {
		byAddr[rc.Addr.String()] = rc
	}
	for _, a := range td.included {
		rc := byAddr[a.String()]
		if rc == nil {
			continue
		}
		var why []string
		for _, dep := range td.g.DependenciesOf(a) {
			if td.destroyed[dep] {
				why = append(why, td.reads(a, dep))
			}
		}
		rc.Warnings = append(rc.Warnings, fmt.Sprintf("uninstalled with what it depends on (--include-dependents): %s", strings.Join(why, "; ")))
	}
	for _, a := range td.g.Vertices() {
		rc := byAddr[a.String()]
		if !td.destroyed[a] || rc == nil {
			continue
		}
		var stay, reads []string
		for _, d := range td.g.DependentsOf(a) {
			if !td.destroyed[d] {
				stay = append(stay, d.String())
				reads = append(reads, td.reads(d, a))
			}
		}
		if len(stay) == 0 {
			continue
		}
		msg := fmt.Sprintf("%s %s on it and %s installed: %s. --include-dependents uninstalls %s too",
			strings.Join(stay, ", "), plural(len(stay), "depends", "depend"), plural(len(stay), "stays", "stay"),
			strings.Join(reads, "; "), plural(len(stay), "it", "them"))
		if further := td.further(stay); len(further) > 0 {
			msg += fmt.Sprintf(", with %s, which %s on %s", strings.Join(further, ", "), plural(len(further), "depends", "depend"), plural(len(stay), "it", "them"))
		}
		rc.Warnings = append(rc.Warnings, msg)
	}
}

// reads says what dependent reads of dependency: "release.keycloak reads
// release.db.name, release.db.namespace", or its depends_on entry.
func (td *targetedDestroy) reads(dependent, dependency config.ReleaseInstanceAddr) string {
	var read, order []string
	for _, r := range td.st.DependencyRefs(dependent, dependency) {
		if r.DependsOn {
			order = append(order, r.Text)
		} else {
			read = append(read, r.Text)
		}
	}
	var parts []string
	if len(read) > 0 {
		parts = append(parts, "reads "+strings.Join(read, ", "))
	}
	if len(order) > 0 {
		parts = append(parts, "depends_on "+strings.Join(order, ", "))
	}
	if len(parts) == 0 {
		parts = append(parts, "depends on "+dependency.String())
	}
	return dependent.String() + " " + strings.Join(parts, " and ")
}

// further are the releases that depend on stay, transitively, not
// uninstalled and not in stay.
func (td *targetedDestroy) further(stay []string) []string {
	var start []config.ReleaseInstanceAddr
	in := map[string]bool{}
	for _, a := range td.g.Vertices() {
		if slices.Contains(stay, a.String()) {
			start = append(start, a)
			in[a.String()] = true
		}
	}
	var out []string
	for _, a := range td.g.WithDependents(start).Vertices() {
		if !in[a.String()] && !td.destroyed[a] {
			out = append(out, a.String())
		}
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
