package run

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/plan/planfile"
	"github.com/hashicorp/hcl/v2"
)

// Source says where a stack is and how its variables are set.
type Source struct {
	// Dir is the stack directory.
	Dir string
	// Vars are --var values as written: "name=value", in order.
	Vars []string
	// VarFiles are --var-file paths, relative to the working directory.
	VarFiles []string
	// VarFileSources are variables files already read (a saved plan's),
	// applied after VarFiles.
	VarFileSources []config.VarFile
	// Env is the process environment (for CONVOY_VAR_* values).
	Env []string
	// Environment names the stack's environment block (--env, CONVOY_ENV);
	// "" chooses the one named "default".
	Environment string
	// SensitiveVars are variables whose values are sensitive whatever the
	// stack declares (values the controller read from Secrets).
	SensitiveVars map[string]bool
}

// EvalOptions turns the source's variable inputs into config.EvalOptions.
// A malformed --var is a diagnostic like any other user error. Each
// --var-file is read here, once (it may be a pipe), so that a saved plan
// records exactly what was evaluated.
func (s Source) EvalOptions() (config.EvalOptions, hcl.Diagnostics) {
	opts := config.EvalOptions{Vars: map[string]string{}, Env: s.Env, Environment: s.Environment, SensitiveVars: s.SensitiveVars}
	var diags hcl.Diagnostics
	for _, path := range s.VarFiles {
		vf, d := config.ReadVarFile(path)
		diags = append(diags, d...)
		opts.VarFileSources = append(opts.VarFileSources, vf)
	}
	opts.VarFileSources = append(opts.VarFileSources, s.VarFileSources...)
	for _, kv := range s.Vars {
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

// Loaded is a stack loaded, evaluated and ordered.
type Loaded struct {
	// Config is the source configuration (its files render diagnostics).
	Config *config.Config
	Stack  *config.Stack
	// Order is the topological order of the release instances.
	Order []config.ReleaseInstanceAddr
	// Warnings are the diagnostics of a successful load.
	Warnings hcl.Diagnostics
	opts     config.EvalOptions
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
		files = cfg.Files
	}
	return &DiagnosticsError{Diags: diags, Files: files}
}

// LoadLevel says how far Load goes.
type LoadLevel int

const (
	// Evaluated stops after evaluation: the stack's graph may be invalid.
	Evaluated LoadLevel = iota + 1
	// Ordered also builds the graph and orders the releases.
	Ordered
)

// Load loads and evaluates the stack. Errors are *DiagnosticsError when
// the stack is at fault; warnings of a successful load are in Loaded.
// A failed load still returns what was read (Config), so that callers can
// show diagnostics with their source.
func Load(ctx context.Context, src Source, level LoadLevel) (*Loaded, error) {
	ls := &Loaded{}
	opts, diags := src.EvalOptions()
	ls.opts = opts
	cfg, d := config.LoadDir(src.Dir)
	diags = append(diags, d...)
	ls.Config = cfg
	if diags.HasErrors() || cfg == nil {
		return ls, diagError(diags, cfg)
	}
	st, d := config.Evaluate(ctx, cfg, opts)
	diags = append(diags, d...)
	ls.Stack = st
	if st != nil && !diags.HasErrors() && level >= Ordered {
		g, d := st.Graph()
		diags = append(diags, d...)
		if !d.HasErrors() {
			ls.Order, d = g.TopologicalOrder()
			diags = append(diags, d...)
		}
	}
	if err := diagError(diags, cfg); err != nil {
		return ls, err
	}
	ls.Warnings = diags
	return ls, nil
}

// ConfigHash identifies the configuration the stack was loaded from, for
// saved plans.
func (ls *Loaded) ConfigHash() (string, error) {
	return ConfigHash(ls.Config, ls.opts, ls.Stack.Environment, ls.Stack.EnvironmentFiles)
}

// Origin is what a saved plan records of the stack's inputs: the absolute
// directory and every variable value given (CONVOY_VAR_* only from the
// environment).
func (ls *Loaded) Origin() (*planfile.Origin, error) {
	dir, err := filepath.Abs(ls.Config.Dir)
	if err != nil {
		return nil, err
	}
	o := &planfile.Origin{Dir: dir}
	if len(ls.opts.Vars) > 0 {
		o.Vars = maps.Clone(ls.opts.Vars)
	}
	for _, vf := range ls.opts.VarFileSources {
		o.VarFiles = append(o.VarFiles, planfile.VarFile{Name: vf.Name, Content: string(vf.Src)})
	}
	o.Env = convoyEnv(ls.opts.Env)
	return o, nil
}

// convoyEnv are the CONVOY_VAR_* entries of env, sorted.
func convoyEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if strings.HasPrefix(kv, config.EnvVarPrefix) {
			out = append(out, kv)
		}
	}
	slices.Sort(out)
	return out
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

// ReleaseAddresses are the addresses of the stack's release instances, in
// dependency order when the graph is valid (for shell completion: offline,
// nothing read but the stack).
func ReleaseAddresses(ctx context.Context, src Source) ([]string, error) {
	ls, err := Load(ctx, src, Evaluated)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range ls.Stack.Releases {
		out = append(out, r.Addr.String())
	}
	return out, nil
}
