// Package gate evaluates the health gates of a promotion pipeline: a CEL
// expression over the live objects of a stack (CompileCEL, then Eval with
// the objects run.Objects reads) and a Prometheus instant query whose
// samples must stay under a maximum (EvalPrometheus). The pipeline's
// `test` gate (the releases' test hooks) is run.Test, not this package.
//
// Every gate returns a Result and never panics: an expression that errors,
// a Prometheus that does not answer or answers without data fails the gate
// (closed), with the reason in the Result's Output and Err. Outputs never
// carry a Secret's data: Secrets reach expressions without data,
// stringData or a last-applied-configuration annotation (ObjectMaps).
//
// The package is on the evaluation side only: it reads no cluster and no
// configuration; its caller (the pipeline reconciler) gathers the objects.
package gate
