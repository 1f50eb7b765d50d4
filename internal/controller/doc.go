// Package controller is the manager of `convoy controller run`: it wires
// the Stack reconciler (controller/stack) and the Pipeline reconciler
// (controller/pipeline) into one controller-runtime manager — leader
// election on a Lease per shard, sharding by the convoy.dev/shard label,
// the caches and their indexes, Prometheus metrics on the manager's
// registry, health endpoints — and holds what the two share: the cache
// janitor of pulled stacks and charts (cache.go, the Stacks' stack.Cache)
// and the push receiver (webhook*.go, --webhook-listen), whose marks
// reach the Stacks as stack.Pushes and the Pipelines as pipeline.Pushes.
//
// What a Pipeline needs of the Stack side (pipeline.Stacks) is the Stack
// reconciler's (stack.Reconciler.PipelineStacks). What the CLI does with
// Stacks and Pipelines (approve, list, install) is in ctl, the saved
// plan's objects in planstore, the conditions and reasons in status: none
// imports this package, nor does stack or pipeline.
package controller
