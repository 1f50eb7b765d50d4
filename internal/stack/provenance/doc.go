// Package provenance says where each leaf of a release's values was set:
// the chart's (or a subchart's) values.yaml, a values layer, a set or
// set_sensitive entry, and through the expression that set it, the
// variables, locals and release attributes it read and where each
// variable's value was given. It is on the evaluation side: it reads an
// evaluated stack (config.Stack, with its source) and a loaded chart,
// never a cluster, and it never holds a value: a sensitive leaf's origin
// is named as freely as any other.
package provenance
