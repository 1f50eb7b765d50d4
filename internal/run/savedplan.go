package run

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

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
	if given.Dir != "" {
		dir, err := filepath.Abs(given.Dir)
		if err != nil {
			return Source{}, err
		}
		if !sameDir(dir, o.Dir) {
			return Source{}, fmt.Errorf("the plan in %s was made for the stack in %s, not %s", path, o.Dir, dir)
		}
	}
	if what := variablesDiffer(given.Variables, o.Variables); what != "" {
		return Source{}, fmt.Errorf("%s differs from what the plan in %s was made with; run convoy plan again, or apply the plan without it", what, path)
	}
	// The plan's environment, which --env or CONVOY_ENV may only repeat.
	if given.Environment != "" {
		if err := planfile.VerifyEnvironment(f.Plan, given.Environment); err != nil {
			return Source{}, fmt.Errorf("the plan in %s: %w", path, err)
		}
	}
	return Source{Dir: o.Dir, Environment: f.Plan.Environment, Variables: o.Variables}, nil
}

// variablesDiffer names the first value given that disagrees with the
// values a plan was saved with ("" when none does): a --var (or caller's
// value) that is not the plan's last value of the variable, --var-files of
// other contents, a CONVOY_VAR_* the plan was not made with.
func variablesDiffer(given, saved config.RawValues) string {
	last := func(vals config.RawValues, src config.ValueSource) map[string]config.RawValue {
		out := map[string]config.RawValue{}
		for _, v := range vals {
			if v.Source == src && !v.IsFile() {
				out[v.Name] = v
			}
		}
		return out
	}
	for _, src := range []config.ValueSource{config.ValueFromCLIArg, config.ValueFromCaller} {
		g, s := last(given, src), last(saved, src)
		for _, name := range slices.Sorted(maps.Keys(g)) {
			if v, ok := s[name]; !ok || v.Text != g[name].Text {
				if src == config.ValueFromCLIArg {
					return "--var " + name
				}
				return fmt.Sprintf("%s (var.%s)", g[name].Where, name)
			}
		}
	}
	files := func(vals config.RawValues) []string {
		var out []string
		for _, v := range vals {
			if v.Source == config.ValueFromNamedFile {
				out = append(out, string(v.File))
			}
		}
		return out
	}
	if gf := files(given); len(gf) > 0 && !slices.Equal(gf, files(saved)) {
		return "--var-file"
	}
	var env []config.RawValue
	for _, v := range given {
		if v.Source == config.ValueFromEnvVar {
			env = append(env, v)
		}
	}
	slices.SortStableFunc(env, func(a, b config.RawValue) int { return cmp.Compare(a.Where+"="+a.Text, b.Where+"="+b.Text) })
	for _, v := range env {
		if !slices.ContainsFunc(saved, func(s config.RawValue) bool {
			return s.Source == v.Source && s.Name == v.Name && s.Text == v.Text
		}) {
			return "the environment variable " + v.Where
		}
	}
	return ""
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
