// Package sensitive owns convoy's sensitive values once they leave the
// configuration: which strings are sensitive (a Redactor), masking them in
// text, in JSON-like values and in errors (Redactor.Err), and what the
// planner found rendered from them (Fields). Every other package masks
// through it; none defines a redactor or a redacted error of its own.
//
// It imports nothing of convoy's, so the plan, its views and its file may
// use it without reaching a cluster client.
package sensitive
