// Package controller reconciles Stack objects (api/v1alpha1): it pulls a
// Stack's source artifact (stacksource), plans it with internal/run and
// saves the plan (planfile) in a Secret, publishes the plan's text and
// markdown in a ConfigMap, and applies exactly the saved plan when the
// Stack's approval mode allows: at once (auto), or once spec.approvedPlan
// names the plan's digest (manual). Drift found between changes is
// reported, and restored with driftCorrection.
//
// It runs on controller-runtime: leader election on a Lease per shard,
// sharding by the convoy.dev/shard label, Prometheus metrics on the
// manager's registry, health endpoints. The stack lock of internal/run
// keeps a CLI apply and the controller from running one stack at once.
//
// Pipelines are reconciled by the pipeline package, which it wires into
// the same manager with what a Pipeline needs of the Stack side
// (pipeline.Stacks, pipeline_stacks.go). What the CLI does with Stacks
// and Pipelines (approve, list, install) is in ctl, the saved plan's
// objects in planstore, the conditions and reasons in status: none
// imports this package.
package controller
