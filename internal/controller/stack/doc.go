// Package stack is the Stack reconciler (api/v1alpha1): it pulls a
// Stack's source artifact (stack/artifact), plans it with internal/run and
// saves the plan (planfile) in a Secret, publishes the plan's text and
// markdown in a ConfigMap, and applies exactly the saved plan when the
// Stack's approval mode allows: at once (auto), or once spec.approvedPlan
// names the plan's digest (manual). Drift found between changes is
// reported, and restored with driftCorrection. The stack lock of
// internal/run keeps a CLI apply and the controller from running one
// stack at once.
//
// Its decision is a pure function, decide (decide.go); the reconcile
// observes and acts. The manager (internal/controller) makes it with New
// from Deps: its clients, the cache janitor (Cache), the push receiver's
// marks (Pushes) and the settings a Stack reads (Options). What a
// Pipeline needs of the Stack side is PipelineStacks (pipeline.Stacks).
// It imports nothing of internal/controller.
package stack
