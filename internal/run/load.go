package run

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/cluster/health"
	"github.com/convoy-sh/convoy/internal/plan/planfile"
	"github.com/convoy-sh/convoy/internal/plan/policy"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/hashicorp/hcl/v2"
)

// Source says where a stack is and how its variables are set.
type Source struct {
	// Dir is the stack directory.
	Dir string
	// Variables are the variable values given, collected at the edge: the
	// command line's --var-file, CONVOY_VAR_* and --var values, the
	// controller's from the Stack, a saved plan's. Load adds the stack
	// directory's *.auto.vars.hcl files.
	Variables config.RawValues
	// Environment names the stack's environment block (--env, CONVOY_ENV);
	// "" chooses the one named "default".
	Environment string
	// PolicyPaths are policy files and directories from outside the stack
	// (--policy, CONVOY_POLICY_PATH), collected at the edge.
	PolicyPaths []string
	// Root, when set, confines every path the stack names to this
	// directory, which holds Dir (config.EvalOptions.Root): the
	// controller sets its pulled artifact. "": the CLI's rules.
	Root string
	// Config is the stack directory's files as the caller parsed them
	// already (config.LoadDir of Dir; the controller reads the declared
	// variables first): loading does not parse them again. nil, or the
	// files of another directory: loading parses Dir.
	Config *config.Config
}

// Loaded is a stack loaded, evaluated and ordered.
type Loaded struct {
	// Config is the source configuration (its files render diagnostics).
	Config *config.Config
	Stack  *config.Stack
	// Order is the topological order of the release instances.
	Order []config.ReleaseInstanceAddr
	// Warnings are the diagnostics of a successful load.
	Warnings hcl.Diagnostics
	// Policies are the stack's and the policy paths' policies, compiled.
	Policies *policy.Set
	// Health are the releases' health_check blocks, compiled, by release
	// block name (none: no entry).
	Health map[string]*health.Set
	opts   config.EvalOptions
	// moves are the instances that keep the Helm name of the address they
	// had before count was added or removed (keepMovedNames).
	moves []movedSince
	// ordered: Order is set (order).
	ordered bool
}

// DiagnosticsError carries diagnostics with the source files they point
// into, so that the command layer renders them with their snippets.
type DiagnosticsError struct {
	Diags hcl.Diagnostics
	Files map[string]*hcl.File
}

func (e *DiagnosticsError) Error() string { return e.Diags.Error() }

// diagError returns an error for diags when they hold errors, else nil.
func diagError(diags hcl.Diagnostics, cfg *config.Config) error {
	if !diags.HasErrors() {
		return nil
	}
	var files map[string]*hcl.File
	if cfg != nil {
		files = cfg.AllFiles()
	}
	return &DiagnosticsError{Diags: diags, Files: files}
}

// loadEvaluated loads and evaluates the stack. Errors are
// *DiagnosticsError when the stack is at fault; warnings of a successful
// load are in Loaded. A failed load still returns what was read (Config),
// so that callers can show diagnostics with their source.
func loadEvaluated(ctx context.Context, src Source) (*Loaded, error) {
	ls := &Loaded{}
	cfg, diags := src.parsed()
	ls.Config = cfg
	if diags.HasErrors() || cfg == nil {
		return ls, diagError(diags, cfg)
	}
	diags = append(diags, cfg.LoadPolicyPaths(src.PolicyPaths)...)
	if !diags.HasErrors() {
		set, d := policy.Compile(cfg.SortedPolicies(), policy.Options{})
		diags = append(diags, d...)
		ls.Policies = set
	}
	diags = append(diags, ls.compileHealth(cfg)...)
	if diags.HasErrors() {
		return ls, diagError(diags, cfg)
	}
	auto, d := config.ReadAutoVarFiles(cfg.Dir)
	diags = append(diags, d...)
	ls.opts = config.EvalOptions{Variables: append(auto, src.Variables...), Environment: src.Environment, Root: src.Root}
	st, d := config.Evaluate(ctx, cfg, ls.opts)
	diags = append(diags, d...)
	ls.Stack = st
	if err := diagError(diags, cfg); err != nil {
		return ls, err
	}
	ls.Warnings = diags
	return ls, nil
}

// order builds the evaluated stack's graph and orders its releases,
// once: its diagnostics join the load's.
func (ls *Loaded) order() error {
	if ls.ordered {
		return nil
	}
	g, diags := ls.Stack.Graph()
	if !diags.HasErrors() {
		var d hcl.Diagnostics
		ls.Order, d = g.TopologicalOrder()
		diags = append(diags, d...)
	}
	all := append(slices.Clip(ls.Warnings), diags...)
	if err := diagError(all, ls.Config); err != nil {
		return err
	}
	ls.Warnings, ls.ordered = all, true
	return nil
}

// ConfigHash identifies the configuration the stack was loaded from, for
// saved plans.
func (ls *Loaded) ConfigHash() (string, error) {
	return ConfigHash(ls.Config, ls.opts, ls.Stack.Environment, ls.Stack.EnvironmentFiles)
}

// Origin is what a saved plan records of the stack's inputs: the absolute
// directory and every variable value given. The *.auto.vars.hcl files are
// left out: apply reads them again, and the configuration hash refuses a
// plan whose files changed.
func (ls *Loaded) Origin() (*planfile.Origin, error) {
	dir, err := filepath.Abs(ls.Config.Dir)
	if err != nil {
		return nil, err
	}
	o := &planfile.Origin{Dir: dir}
	for _, v := range ls.opts.Variables {
		if v.Source != config.ValueFromAutoFile {
			o.Variables = append(o.Variables, v)
		}
	}
	return o, nil
}

// FindRelease finds a release instance by address (release.api["eu"]) or
// by Helm release name (which must then be unique).
func (ls *Loaded) FindRelease(name string) (*config.ReleaseInstance, error) {
	st := ls.Stack
	if addr, diags := config.ParseReleaseInstanceAddr(name); !diags.HasErrors() {
		if r := st.Release(addr); r != nil {
			return r, nil
		}
	}
	var found *config.ReleaseInstance
	var names []string
	for _, r := range st.Releases {
		names = append(names, r.Addr.String())
		if r.Name == name {
			if found != nil {
				return nil, fmt.Errorf("release name %q is used by %s and %s; use an address", name, found.Addr, r.Addr)
			}
			found = r
		}
	}
	if found == nil {
		return nil, fmt.Errorf("no release %q in the stack (releases: %s)", name, strings.Join(names, ", "))
	}
	return found, nil
}

// EnvironmentNames are the names of the stack's environment blocks,
// sorted (for shell completion: the files are parsed, not evaluated).
func EnvironmentNames(dir string) ([]string, error) {
	cfg, diags := config.LoadDir(dir)
	if diags.HasErrors() {
		return nil, diags
	}
	return slices.Sorted(maps.Keys(cfg.Environments)), nil
}

// parsed is the stack directory's files: src.Config when it holds Dir's,
// else Dir parsed.
func (src Source) parsed() (*config.Config, hcl.Diagnostics) {
	if src.Config != nil && filepath.Clean(src.Config.Dir) == filepath.Clean(src.Dir) {
		return src.Config, nil
	}
	return config.LoadDir(src.Dir)
}
