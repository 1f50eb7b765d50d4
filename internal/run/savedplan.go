package run

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/plan/planfile"
)

// SavePlan saves a computed plan to path (mode 0600) with what it was made
// from: the stack directory and the variable values, so that
// `convoy apply path` works from anywhere without repeating them.
func SavePlan(path string, pl *Planned) error {
	origin, err := pl.Loaded.Origin()
	if err != nil {
		return err
	}
	for _, c := range pl.clusters {
		for _, name := range c.Names {
			if origin.Clusters == nil {
				origin.Clusters = map[string]string{}
			}
			origin.Clusters[name] = string(c.ID)
		}
	}
	return planfile.Save(path, &planfile.File{Plan: pl.Plan, Origin: origin})
}

// ReadPlan reads a saved plan (for convoy show).
func ReadPlan(path string) (*planfile.File, error) { return planfile.Open(path) }

// savedPlanSource is the source a saved plan is applied with: the one it
// was made from. What the command line gives as well must agree with it:
// -C names the same directory (Dir "" when not given), each --var and
// CONVOY_VAR_* value equals the plan's, --var-file files have the plan's
// contents. A plan saved without its origin takes the command line's.
func savedPlanSource(given Source, f *planfile.File, path string) (Source, error) {
	o := f.Origin
	if o == nil {
		given.Dir = cmp.Or(given.Dir, ".")
		return given, nil
	}
	differs := func(what string) error {
		return fmt.Errorf("%s differs from what the plan in %s was made with; run convoy plan again, or apply the plan without it", what, path)
	}
	if given.Dir != "" {
		dir, err := filepath.Abs(given.Dir)
		if err != nil {
			return Source{}, err
		}
		if !sameDir(dir, o.Dir) {
			return Source{}, fmt.Errorf("the plan in %s was made for the stack in %s, not %s", path, o.Dir, dir)
		}
	}
	gopts, diags := given.EvalOptions()
	if diags.HasErrors() {
		return Source{}, &DiagnosticsError{Diags: diags}
	}
	for _, name := range slices.Sorted(maps.Keys(gopts.Vars)) {
		if v, ok := o.Vars[name]; !ok || v != gopts.Vars[name] {
			return Source{}, differs("--var " + name)
		}
	}
	if len(gopts.VarFileSources) > 0 {
		same := len(gopts.VarFileSources) == len(o.VarFiles)
		for i := 0; same && i < len(o.VarFiles); i++ {
			same = string(gopts.VarFileSources[i].Src) == o.VarFiles[i].Content
		}
		if !same {
			return Source{}, differs("--var-file")
		}
	}
	for _, kv := range convoyEnv(given.Env) {
		if !slices.Contains(o.Env, kv) {
			name, _, _ := strings.Cut(kv, "=")
			return Source{}, differs("the environment variable " + name)
		}
	}
	// The plan's environment, which --env or CONVOY_ENV may only repeat.
	if given.Environment != "" {
		if err := planfile.VerifyEnvironment(f.Plan, given.Environment); err != nil {
			return Source{}, fmt.Errorf("the plan in %s: %w", path, err)
		}
	}
	src := Source{Dir: o.Dir, Env: o.Env, Environment: f.Plan.Environment, SensitiveVars: given.SensitiveVars}
	for _, name := range slices.Sorted(maps.Keys(o.Vars)) {
		src.Vars = append(src.Vars, name+"="+o.Vars[name])
	}
	for _, vf := range o.VarFiles {
		src.VarFileSources = append(src.VarFileSources, config.VarFile{Name: vf.Name, Src: []byte(vf.Content)})
	}
	return src, nil
}

// sameDir reports whether two absolute paths name one directory, through
// symbolic links.
func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	ra, erra := filepath.EvalSymlinks(a)
	rb, errb := filepath.EvalSymlinks(b)
	return erra == nil && errb == nil && ra == rb
}

// verifyClusters refuses a saved plan when a cluster it observed is now
// reached at another API server (another --kubeconfig or --kube-context):
// the plan's observations say nothing about that cluster.
func verifyClusters(ctx context.Context, o *planfile.Origin, cl *Clusters, st *config.Stack, path string) error {
	if o == nil || len(o.Clusters) == 0 {
		return nil
	}
	clusters, err := cl.Stack(ctx, st)
	if err != nil {
		return err
	}
	for _, c := range clusters {
		for _, name := range c.Names {
			want, ok := o.Clusters[name]
			if ok && want != string(c.ID) {
				return fmt.Errorf("the plan in %s was made against %s at %s, but it is now reached at %s: give the --kubeconfig and --kube-context the plan was made with", path, c.Describe(), want, c.ID)
			}
		}
	}
	return nil
}

// CheckSavedPlan verifies a saved plan as Apply does before it executes
// one (stack, environment, configuration, clusters, every observation),
// without taking the lock or changing anything. A plan whose observations
// no longer hold is a *planfile.StaleError.
func CheckSavedPlan(ctx context.Context, o Options, path string) error {
	f, err := planfile.Open(path)
	if err != nil {
		return err
	}
	if o.Source, err = savedPlanSource(o.Source, f, path); err != nil {
		return err
	}
	ls, err := Load(ctx, o.Source, Ordered)
	if err != nil {
		return err
	}
	_, err = applyPlan(ctx, o, ls, o.newClusters(nil), ApplyRequest{PlanFile: path}, f, "")
	return err
}
