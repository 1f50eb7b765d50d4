// Package health compiles a release's health_check blocks (CEL over one
// object, as `self`) and judges the release's objects by them while it
// waits: a *Set is the kube.Health of a release request. It is on the
// evaluation side: config decodes the blocks, the run compiles them once
// when it loads the stack (errors at the expression's place in the file),
// and the release engine's waits call Check.
//
// The CEL environment, cost limit and compile errors are internal/expr's,
// as for policies and Pipeline gates: one expression means, and fails, the
// same in all three.
package health
