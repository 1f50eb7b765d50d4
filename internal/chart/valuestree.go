package chart

import "fmt"

// ValuesNode is one chart whose defaults a release's values are
// coalesced from, after dependency processing: disabled subcharts are
// gone, aliases renamed (internal/stack/provenance walks it to say which
// values.yaml set each leaf).
type ValuesNode struct {
	// Chart is the loaded chart: its Values and RawValues are its own
	// values.yaml, as on disk.
	Chart *Chart
	// Name is the key of its values in its parent's: the alias, or the
	// chart's name.
	Name string
	// Deps are the enabled subcharts, in coalescing order.
	Deps []*ValuesNode
	// Imports are the import-values of its dependencies, in the order
	// Helm applies them (an earlier import wins).
	Imports []ImportValue
}

// ImportValue copies the table at Child in the values of the dependency
// Dep to Parent in this chart's ("." is the top).
type ImportValue struct {
	Dep, Child, Parent string
}

// CoalesceValuesTree is CoalesceValues that also returns the tree of
// charts the values were coalesced from.
func CoalesceValuesTree(ch *Chart, user map[string]any) (*ValuesNode, map[string]any, error) {
	warn := func(string, ...any) {}
	tree := newTree(ch)
	if err := processDependencies(warn, tree, user); err != nil {
		return nil, nil, &DependencyError{Err: err}
	}
	values, err := coalesceNode(warn, tree, deepCopyMap(orEmpty(user)), "", false)
	if err != nil {
		return nil, nil, err
	}
	return valuesNode(tree), values, nil
}

func valuesNode(n *node) *ValuesNode {
	out := &ValuesNode{Chart: n.chart, Name: n.name()}
	for _, d := range n.deps {
		out.Deps = append(out.Deps, valuesNode(d))
	}
	for _, r := range n.meta.Dependencies {
		for _, iv := range r.ImportValues {
			// processImportValues left them as child/parent pairs.
			if m, ok := iv.(map[string]string); ok {
				out.Imports = append(out.Imports, ImportValue{Dep: r.Name, Child: m["child"], Parent: m["parent"]})
			} else if m, ok := iv.(map[string]any); ok {
				out.Imports = append(out.Imports, ImportValue{Dep: r.Name, Child: fmt.Sprint(m["child"]), Parent: fmt.Sprint(m["parent"])})
			}
		}
	}
	return out
}
