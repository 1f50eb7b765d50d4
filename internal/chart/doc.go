// Package chart is convoy's native engine for Helm-format charts: it loads
// charts (directories and .tgz archives), resolves their dependencies, builds
// the final values, validates them against values.schema.json, renders the
// templates and splits the result into hooks, manifests, notes and CRDs.
//
// The reference for every behaviour is `helm template` of helm v4.3.1; the
// parity test in this package compares output bytes and error text against
// the real binary. A loaded *Chart is immutable: Render works on its own
// copies, so one chart may be rendered by many goroutines at once.
package chart
