// Package chart is convoy's native engine for Helm-format charts: it loads
// charts (directories and .tgz archives), resolves their dependencies, builds
// the final values, validates them against values.schema.json, renders the
// templates and splits the result into hooks, manifests, notes and CRDs.
//
// The reference for every behaviour is `helm template` of helm v4.3.1; the
// parity test in this package compares output bytes and error text against
// the real binary. A loaded *Chart is immutable: Render works on its own
// copies, so one chart may be rendered by many goroutines at once.
//
// The subpackages common, engine and util exist only so that the types
// templates can see carry Helm's names (common.Values, engine.files,
// util.SimpleHead), which leak into template output and error messages.
//
// Deliberate differences from Helm, none visible on charts Helm renders:
// archives may not contain links or special files and are bounded in file
// count and size (Limits); directory charts may not symlink outside
// themselves; schema $refs are never fetched over the network; include and
// tpl nesting is bounded across names (Helm overflows the stack); several
// schema violations are listed in a stable order (Helm uses map order).
package chart
