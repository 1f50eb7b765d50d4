package chart

import (
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// node is one chart of a release's working tree. Dependency processing
// rewrites names (aliases), drops disabled subcharts and replaces values
// (import-values); it does so on nodes, never on the loaded *Chart, so one
// Chart can back many concurrent renders.
type node struct {
	chart  *Chart
	meta   *Metadata
	values map[string]any
	deps   []*node
	parent *node
}

func newTree(c *Chart) *node {
	return newNode(c, nil)
}

func newNode(c *Chart, parent *node) *node {
	n := &node{chart: c, meta: copyMetadata(c.Metadata), values: c.Values, parent: parent}
	for _, d := range c.dependencies {
		n.deps = append(n.deps, newNode(d, n))
	}
	return n
}

func copyMetadata(md *Metadata) *Metadata {
	out := *md
	if md.Dependencies != nil {
		out.Dependencies = make([]*Dependency, len(md.Dependencies))
		for i, d := range md.Dependencies {
			cp := *d
			out.Dependencies[i] = &cp
		}
	}
	return &out
}

func (n *node) name() string { return n.meta.Name }

func (n *node) isRoot() bool { return n.parent == nil }

func (n *node) isLibrary() bool { return strings.EqualFold(n.meta.Type, "library") }

func (n *node) fullPath() string {
	if n.parent != nil {
		return n.parent.fullPath() + "/charts/" + n.name()
	}
	return n.name()
}

func (n *node) hasDep(name string) bool {
	return slices.ContainsFunc(n.deps, func(d *node) bool { return d.name() == name })
}

func (n *node) setDeps(deps []*node) {
	for _, d := range deps {
		d.parent = n
	}
	n.deps = deps
}

// isCompatibleRange is Helm's IsCompatibleRange: false on any parse error.
func isCompatibleRange(constraint, version string) bool {
	v, err := semver.NewVersion(version)
	if err != nil {
		return false
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return false
	}
	return c.Check(v)
}

// MissingDependenciesError is returned when Chart.yaml names dependencies
// that are not in charts/.
type MissingDependenciesError struct {
	Names []string
}

func (e *MissingDependenciesError) Error() string {
	return "an error occurred while checking for chart dependencies. You may need to run 'helm dependency build' to fetch missing dependencies: found in Chart.yaml, but missing in charts/ directory: " + strings.Join(e.Names, ", ")
}

// checkDependencies reports Chart.yaml dependencies missing from charts/
// (top chart only, as Helm does).
func checkDependencies(c *Chart) error {
	var missing []string
	for _, r := range c.Metadata.Dependencies {
		if !slices.ContainsFunc(c.dependencies, func(d *Chart) bool { return d.Name() == r.Name }) {
			missing = append(missing, r.Name)
		}
	}
	if len(missing) > 0 {
		return &MissingDependenciesError{Names: missing}
	}
	return nil
}

// processDependencies applies aliases, tags and conditions, then
// import-values, as Helm's chartutil.ProcessDependencies.
func processDependencies(warn warnFunc, n *node, user map[string]any) error {
	if err := processEnabled(warn, n, user, ""); err != nil {
		return err
	}
	return processImportValuesTree(warn, n)
}

func aliasDependency(warn warnFunc, deps []*node, req *Dependency) *node {
	for _, c := range deps {
		if c == nil || c.name() != req.Name || !isCompatibleRange(req.Version, c.meta.Version) {
			continue
		}
		out := *c
		out.meta = copyMetadata(c.meta)
		out.deps = nil
		for _, d := range c.deps {
			cp := *d
			cp.parent = &out
			out.deps = append(out.deps, &cp)
		}
		if req.Alias != "" {
			out.meta.Name = req.Alias
		}
		return &out
	}
	return nil
}

func processEnabled(warn warnFunc, n *node, v map[string]any, path string) error {
	if n.meta.Dependencies == nil {
		return nil
	}
	var kept []*node
outer:
	for _, existing := range n.deps {
		for _, req := range n.meta.Dependencies {
			if existing.name() == req.Name && isCompatibleRange(req.Version, existing.meta.Version) {
				continue outer
			}
		}
		kept = append(kept, existing)
	}
	for _, req := range n.meta.Dependencies {
		if req == nil {
			continue
		}
		if d := aliasDependency(warn, n.deps, req); d != nil {
			kept = append(kept, d)
		}
		if req.Alias != "" {
			req.Name = req.Alias
		}
	}
	n.setDeps(kept)
	for _, r := range n.meta.Dependencies {
		r.Enabled = true
	}
	cvals, err := coalesceNode(warn, n, deepCopyMap(orEmpty(v)), "", false)
	if err != nil {
		return err
	}
	processTags(warn, n.meta.Dependencies, cvals)
	processConditions(warn, n.meta.Dependencies, cvals, path)
	disabled := map[string]bool{}
	for _, r := range n.meta.Dependencies {
		if !r.Enabled {
			disabled[r.Name] = true
		}
	}
	var deps []*node
	for _, d := range n.deps {
		if !disabled[d.name()] {
			deps = append(deps, d)
		}
	}
	reqs := []*Dependency{}
	for _, r := range n.meta.Dependencies {
		if !disabled[r.Name] {
			reqs = append(reqs, r)
		}
	}
	for _, d := range deps {
		if err := processEnabled(warn, d, cvals, path+d.name()+"."); err != nil {
			return err
		}
	}
	n.meta.Dependencies = reqs
	n.setDeps(deps)
	return nil
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func processTags(warn warnFunc, reqs []*Dependency, cvals map[string]any) {
	tags, ok := cvals["tags"].(map[string]any)
	if !ok {
		return
	}
	for _, r := range reqs {
		var hasTrue, hasFalse bool
		for _, k := range r.Tags {
			b, ok := tags[k]
			if !ok {
				continue
			}
			if bv, ok := b.(bool); ok {
				if bv {
					hasTrue = true
				} else {
					hasFalse = true
				}
			} else {
				warn("Warning: Tag '%s' for chart %s returned non-bool value", k, r.Name)
			}
		}
		if !hasTrue && hasFalse {
			r.Enabled = false
		} else if hasTrue || !hasFalse {
			r.Enabled = true
		}
	}
}

func processConditions(warn warnFunc, reqs []*Dependency, cvals map[string]any, path string) {
	for _, r := range reqs {
		for _, c := range strings.Split(strings.TrimSpace(r.Condition), ",") {
			if c == "" {
				continue
			}
			if vv, ok := pathValue(cvals, path+c); ok {
				if bv, ok := vv.(bool); ok {
					r.Enabled = bv
					break
				}
				warn("Warning: Condition path '%s' for chart %s returned non-bool value", c, r.Name)
			}
		}
	}
}

func processImportValuesTree(warn warnFunc, n *node) error {
	for _, d := range n.deps {
		if err := processImportValuesTree(warn, d); err != nil {
			return err
		}
	}
	return processImportValues(warn, n)
}

func processImportValues(warn warnFunc, n *node) error {
	if n.meta.Dependencies == nil {
		return nil
	}
	cvals, err := coalesceNode(warn, n, map[string]any{}, "", true)
	if err != nil {
		return err
	}
	b := map[string]any{}
	for _, r := range n.meta.Dependencies {
		var out []any
		for _, riv := range r.ImportValues {
			switch iv := riv.(type) {
			case map[string]any:
				child := fmt.Sprintf("%v", iv["child"])
				parent := fmt.Sprintf("%v", iv["parent"])
				out = append(out, map[string]string{"child": child, "parent": parent})
				vv, ok := lookupTable(cvals, r.Name+"."+child)
				if !ok {
					warn("Warning: ImportValues missing table from chart %s: %s", r.Name, child)
					continue
				}
				b = coalesceTables(warn, b, pathToMap(parent, vv), "", true)
			case string:
				child := "exports." + iv
				out = append(out, map[string]string{"child": child, "parent": "."})
				vm, ok := lookupTable(cvals, r.Name+"."+child)
				if !ok {
					warn("Warning: ImportValues missing table: %s", child)
					continue
				}
				b = coalesceTables(warn, b, vm, "", true)
			}
		}
		r.ImportValues = out
	}
	n.values = coalesceTables(warn, deepCopyMap(cvals), b, "", true)
	return nil
}

func pathToMap(path string, data map[string]any) map[string]any {
	if path == "." {
		return data
	}
	parts := strings.Split(path, ".")
	cur := data
	for i := len(parts) - 1; i >= 0; i-- {
		cur = map[string]any{parts[i]: cur}
	}
	return cur
}
