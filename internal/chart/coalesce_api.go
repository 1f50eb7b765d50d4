package chart

// CoalesceValues computes the values a release of ch renders with: the
// user values (already merged, see UserValues) over the chart defaults,
// after dependency processing (conditions, tags, aliases, import-values),
// with global propagation, exactly as Helm. Neither ch nor user is modified.
func CoalesceValues(ch *Chart, user map[string]any) (map[string]any, error) {
	warn := func(string, ...any) {}
	tree := newTree(ch)
	if err := processDependencies(warn, tree, user); err != nil {
		return nil, &DependencyError{Err: err}
	}
	return coalesceNode(warn, tree, deepCopyMap(orEmpty(user)), "", false)
}

// ValidateValues checks the values a release of ch would render with
// against the values.schema.json of the chart and its subcharts, as Render
// does first; a violation is a *SchemaError.
func ValidateValues(ch *Chart, user map[string]any) error {
	warn := func(string, ...any) {}
	tree := newTree(ch)
	if err := processDependencies(warn, tree, user); err != nil {
		return &DependencyError{Err: err}
	}
	values, err := coalesceNode(warn, tree, deepCopyMap(orEmpty(user)), "", false)
	if err != nil {
		return err
	}
	if err := validateSchemas(tree, values); err != nil {
		return err
	}
	return nil
}
