// Package policy compiles the stack's policies (config.Policy: CEL
// conditions over the plan) and evaluates them against a computed plan.
//
// It is on the evaluation side: Compile turns the decoded blocks into CEL
// programs once per run, with a typed environment of three variables
// (object, release, plan), reporting syntax and type errors as
// diagnostics at the condition's source range; Evaluate walks a
// *plan.Plan and returns plan.PolicyResults, which become plan data (saved
// plans carry them, the views print them). Nothing here reaches a cluster.
//
// What a policy sees is built from the plan, which already masks
// sensitive values in objects; values are masked here with the plan's
// redactor (plan.MaskValueTree) before a policy sees them. A policy that
// fails to evaluate (a missing field, a wrong type, the cost limit) is a
// deny naming the policy, the object and the error: never a silent pass.
package policy
