// Package config reads convoy stacks: directories of HCL files that describe
// a whole environment of Helm-format releases.
//
// The package has two sides, kept apart on purpose:
//
//   - The source side (LoadDir, Config and the block types) decodes HCL into
//     blocks that hold hcl.Expressions and source ranges. Nothing is evaluated.
//   - The evaluation side (Evaluate, Stack, ReleaseInstance) turns a Config
//     plus variable values into cty values: variables, locals, clusters,
//     repositories, and one ReleaseInstance per expanded release block.
//
// Variable values are collected at the edge, not here: the command line and
// the controller hand Evaluate RawValues, each with its ValueSource
// (variable_values.go has the helpers that read *.auto.vars.hcl, a
// --var-file, a --var and CONVOY_VAR_* entries of an environment given to
// them). The package never reads the process environment.
//
// Release attributes only known after apply (revision, status, resources)
// evaluate to unknown cty values; Stack.EvaluateRelease re-evaluates a single
// instance once its dependencies' real values are known. Sensitive values
// carry the cty mark Sensitive all the way to the consumer, which masks them.
//
// Every user error is an hcl.Diagnostic with a source range.
package config
