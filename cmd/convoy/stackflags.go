package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/convoy-sh/convoy/internal/config"
	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/pflag"
)

// stackFlags are the flags of every command that reads a stack: where it
// is and the values of its variables. render, plan and apply reuse them.
type stackFlags struct {
	Dir      string
	Vars     []string // --var name=value, in order
	VarFiles []string
}

// addStackFlags registers -C, --var and --var-file on fs.
func addStackFlags(fs *pflag.FlagSet, f *stackFlags) {
	addDirFlag(fs, &f.Dir)
	fs.StringArrayVar(&f.Vars, "var", nil, "set a variable: --var name=value (repeatable; highest precedence)")
	fs.StringArrayVar(&f.VarFiles, "var-file", nil, "read variable values from a .vars.hcl file (repeatable)")
}

// addDirFlag registers -C for commands that only need the directory.
func addDirFlag(fs *pflag.FlagSet, dir *string) {
	fs.StringVarP(dir, "dir", "C", ".", "the stack directory")
}

// evalOptions turns the flags into config.EvalOptions. Malformed --var
// values are diagnostics like any other user error.
func (f stackFlags) evalOptions(env []string) (config.EvalOptions, hcl.Diagnostics) {
	opts := config.EvalOptions{VarFiles: f.VarFiles, Vars: map[string]string{}, Env: env}
	var diags hcl.Diagnostics
	for _, kv := range f.Vars {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid --var",
				Detail:   fmt.Sprintf("%q is not of the form name=value.", kv),
			})
			continue
		}
		opts.Vars[name] = val
	}
	return opts, diags
}

// loadedStack is what loadStack produced: the source configuration (nil if
// the directory could not be read) and the evaluated stack (nil on errors).
type loadedStack struct {
	Config *config.Config
	Stack  *config.Stack
}

// loadStack loads and evaluates the stack the flags point at, with the
// process environment for CONVOY_VAR_* values.
func (f stackFlags) loadStack(ctx context.Context) (loadedStack, hcl.Diagnostics) {
	var ls loadedStack
	opts, diags := f.evalOptions(os.Environ())
	cfg, d := config.LoadDir(f.Dir)
	diags = append(diags, d...)
	ls.Config = cfg
	if diags.HasErrors() || cfg == nil {
		return ls, diags
	}
	stack, d := config.Evaluate(ctx, cfg, opts)
	ls.Stack = stack
	return ls, append(diags, d...)
}
