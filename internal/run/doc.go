// Package run runs a stack end to end: it loads and orders the stack
// (returning diagnostics, never flattened strings), connects to each
// cluster once by what it connects to, takes the stack lock, asks
// internal/plan for the plan (a release request per instance), hands the
// plan's steps to internal/apply, renders at apply time the releases whose
// values were known only after their dependencies were applied, and feeds
// each release the outputs of the releases it depends on. Destroy is a plan
// mode, not a second planner.
//
// The command layer (cmd/convoy) parses flags into the requests of this
// package, calls Plan, Apply, Destroy and the single-release operations,
// and prints what they return. A controller calls the same entry points.
package run
