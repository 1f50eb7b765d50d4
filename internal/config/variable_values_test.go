package config

import (
	"context"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// evaluateAsRun evaluates cfg as run.Load does: with the stack directory's
// *.auto.vars.hcl files before the values given.
func evaluateAsRun(cfg *Config, opts EvalOptions) (*Stack, hcl.Diagnostics) {
	auto, diags := ReadAutoVarFiles(cfg.Dir)
	opts.Variables = append(auto, opts.Variables...)
	st, d := Evaluate(context.Background(), cfg, opts)
	return st, append(diags, d...)
}

// cliVars are --var arguments.
func cliVars(t *testing.T, args ...string) RawValues {
	t.Helper()
	var out RawValues
	for _, a := range args {
		v, diags := ParseVarArg(a)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		out = append(out, v)
	}
	return out
}

// varFiles are --var-file arguments, read.
func varFiles(t *testing.T, paths ...string) RawValues {
	t.Helper()
	var out RawValues
	for _, p := range paths {
		v, diags := ReadVarFile(p)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		out = append(out, v)
	}
	return out
}
