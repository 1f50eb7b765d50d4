// Package run runs a stack end to end: it loads and orders the stack
// (returning diagnostics, never flattened strings), connects to each
// cluster once by what it connects to, takes the stack lock, asks
// internal/plan for the plan (a release request per instance), hands the
// plan's steps to internal/run/apply, renders at apply time the releases whose
// values were known only after their dependencies were applied, and feeds
// each release the outputs of the releases it depends on. Destroy is a plan
// mode, not a second planner.
//
// Open returns a Session: the stack loaded and evaluated once and its
// clusters connected once, whose methods (Plan, Verify, Apply, Destroy,
// Output, Identity, Init) are the operations of one command or one
// reconcile. The package functions of the same names open a session for
// one operation.
//
// The command layer (cmd/convoy) parses flags into the requests of this
// package, opens a session per command, calls its operations (and the
// single-release ones), and prints what they return. A controller calls
// the same entry points, one session per reconcile.
package run
