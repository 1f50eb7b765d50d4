// Package pipeline is the Pipeline reconciler: it lists a repository's
// tags and moves the newest matching digest through a Pipeline's stages
// by pinning the stages' Stacks (spec.source) to it, stage after stage,
// once the previous stage's gates passed.
//
// A reconcile is observe, then a bounded loop of a pure next (next.go)
// and small acts (reconcile.go), as the Stack reconciler's is; the
// stages advance by a pure function, stepStages (pipeline_machine.go);
// the gates run in the background (pipeline_gaterun.go). What it needs of the
// Stack side — a Stack's source fetched and its inputs read as its
// reconciles do, the registry access of a namespace's credentials,
// spec.verify's keys, a client as a service account — is the Stacks
// interface, implemented by the Stack reconciler (controller/stack) and
// handed in by the manager wiring (internal/controller) with the push
// receiver's marks (Pushes). It imports neither.
package pipeline
