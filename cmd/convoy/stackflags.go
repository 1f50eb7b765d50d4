package main

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/dag"
	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/pflag"
)

// stackFlags are the flags of every command that reads a stack: where it
// is and the values of its variables.
type stackFlags struct {
	Dir      string
	Vars     []string // --var name=value, in order
	VarFiles []string
	Env      string // --env; "" falls back to $CONVOY_ENV
	// Policies are --policy paths (files or directories of policies);
	// $CONVOY_POLICY_PATH adds more.
	Policies []string
}

// addStackFlags registers -C, --var and --var-file on fs.
func addStackFlags(fs *pflag.FlagSet, f *stackFlags) {
	addDirFlag(fs, &f.Dir)
	fs.StringArrayVar(&f.Vars, "var", nil, "set a variable: --var name=value (repeatable; highest precedence)")
	fs.StringArrayVar(&f.VarFiles, "var-file", nil, "read variable values from a .vars.hcl file (repeatable)")
	fs.StringVar(&f.Env, "env", "", "the stack's environment block to use (default $"+config.EnvEnvironment+", else the one named \"default\")")
	fs.StringArrayVar(&f.Policies, "policy", nil, "read policy blocks from this .hcl file or directory of .hcl files outside the stack (repeatable; $"+envPolicyPath+" adds :-separated paths; docs/policies.md)")
}

// addDirFlag registers -C for commands that only need the directory.
func addDirFlag(fs *pflag.FlagSet, dir *string) {
	fs.StringVarP(dir, "dir", "C", ".", "the stack directory")
}

// source is the stack the flags name, with the variable values the flags
// and the process environment (CONVOY_VAR_*) give, read here once (a
// --var-file may be a pipe). A malformed --var or an unreadable --var-file
// is a *run.DiagnosticsError.
func (f stackFlags) source() (run.Source, error) {
	env := f.Env
	if env == "" {
		env = os.Getenv(config.EnvEnvironment)
	}
	vals, diags := f.variables(os.Environ())
	if diags.HasErrors() {
		return run.Source{}, &run.DiagnosticsError{Diags: diags}
	}
	return run.Source{Dir: f.Dir, Variables: vals, Environment: env, PolicyPaths: policyPaths(f.Policies, os.Getenv(envPolicyPath))}, nil
}

// envPolicyPath names policy paths, :-separated, read with --policy's.
const envPolicyPath = "CONVOY_POLICY_PATH"

// policyPaths are $CONVOY_POLICY_PATH's paths, then the --policy ones.
func policyPaths(flags []string, env string) []string {
	var out []string
	for _, p := range strings.Split(env, string(os.PathListSeparator)) {
		if p != "" {
			out = append(out, p)
		}
	}
	return append(out, flags...)
}

// variables are the values of --var-file and of the CONVOY_VAR_* entries
// of environ in the order given, then of --var: the last one of a name,
// by name.
func (f stackFlags) variables(environ []string) (config.RawValues, hcl.Diagnostics) {
	var vals config.RawValues
	var diags hcl.Diagnostics
	for _, path := range f.VarFiles {
		v, d := config.ReadVarFile(path)
		diags = append(diags, d...)
		vals = append(vals, v)
	}
	vals = append(vals, config.EnvVarValues(environ)...)
	args := map[string]config.RawValue{}
	for _, arg := range f.Vars {
		v, d := config.ParseVarArg(arg)
		diags = append(diags, d...)
		if !d.HasErrors() {
			args[v.Name] = v
		}
	}
	for _, name := range slices.Sorted(maps.Keys(args)) {
		vals = append(vals, args[name])
	}
	return vals, diags
}

// clusterFlags choose the default cluster (for releases without a cluster
// block) and tune the client.
type clusterFlags struct {
	Kubeconfig    string
	Context       string
	QPS           float32
	Burst         int
	StorageDriver string
	Unreachable   time.Duration
}

func addClusterFlags(fs *pflag.FlagSet, f *clusterFlags) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "kubeconfig for releases without a cluster block (default $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&f.Context, "kube-context", "", "kubeconfig context for releases without a cluster block (default: current context; as helm --kube-context)")
	fs.StringVar(&f.Context, "context", "", "the same as --kube-context")
	fs.Float32Var(&f.QPS, "kube-qps", run.DefaultQPS, "client-side limit of queries per second to the Kubernetes API (the server's priority and fairness still applies)")
	fs.IntVar(&f.Burst, "kube-burst", run.DefaultBurst, "client-side burst of queries to the Kubernetes API")
	fs.Float32Var(&f.QPS, "qps", run.DefaultQPS, "the same as --kube-qps (helm's name)")
	fs.IntVar(&f.Burst, "burst-limit", run.DefaultBurst, "the same as --kube-burst (helm's name)")
	fs.StringVar(&f.StorageDriver, "storage-driver", "secret", "where release records live: secret, configmap or sql (as Helm's HELM_DRIVER; the sql driver connects to $HELM_DRIVER_SQL_CONNECTION_STRING); a stack's storage block decides instead")
	fs.DurationVar(&f.Unreachable, "unreachable-timeout", run.DefaultUnreachable, "how long an API server may not answer before convoy stops waiting on it and gives up, whatever the releases' timeouts")
}

// stackRun are the flags of the commands that run a stack on its clusters.
type stackRun struct {
	Stack       stackFlags
	Cluster     clusterFlags
	Parallelism int
	// APIMap is --api-map; KubeVersion --kube-version, on the commands
	// that plan.
	APIMap      string
	KubeVersion string
	// Grace is run.Options.Grace (no flag: tests shorten it).
	Grace time.Duration
}

func addStackRunFlags(fs *pflag.FlagSet, f *stackRun) {
	addStackFlags(fs, &f.Stack)
	addClusterFlags(fs, &f.Cluster)
	addAPIMapFlag(fs, &f.APIMap)
}

// addParallelismFlag registers -p for commands that walk the releases
// (default dag.DefaultParallelism releases at once).
func addParallelismFlag(fs *pflag.FlagSet, p *int, what string) {
	fs.IntVarP(p, "parallelism", "p", dag.DefaultParallelism, what)
}

// options are the run's options; the API servers' warnings go to s.Err.
// It fails as source does.
func (f stackRun) options(s streams) (run.Options, error) {
	src, err := f.Stack.source()
	if err != nil {
		return run.Options{}, err
	}
	apis, err := readAPIMap(f.APIMap)
	if err != nil {
		return run.Options{}, err
	}
	kv, err := parseKubeVersion(f.KubeVersion)
	if err != nil {
		return run.Options{}, err
	}
	c := f.Cluster
	return run.Options{
		APIMap:      apis,
		KubeVersion: kv,
		Source:      src,
		Clusters:    run.ClusterOptions{Kubeconfig: c.Kubeconfig, Context: c.Context, QPS: c.QPS, Burst: c.Burst, StorageDriver: c.StorageDriver, SQLConnection: os.Getenv("HELM_DRIVER_SQL_CONNECTION_STRING"), Unreachable: c.Unreachable, Warnings: s.Err},
		ChartCache:  chartCache(),
		Parallelism: f.Parallelism,
		Grace:       f.Grace,
	}, nil
}

// writerOptions are the options of a command that changes the stack: what
// the run does on its own (a dead holder's lock taken over, an interrupted
// run's record marked failed) is printed as a warning.
func (f stackRun) writerOptions(s streams) (run.Options, error) {
	o, err := f.options(s)
	o.Announce = func(msg string) { fmt.Fprintf(s.Err, "Warning: %s\n", msg) }
	return o, err
}

// chartCache is the chart cache directory from the environment
// ($CONVOY_CACHE_DIR, else the user cache directory); "" when there is
// none, which matters only to repository charts.
func chartCache() string {
	dir, _ := source.DefaultCacheDir(os.Getenv)
	return dir
}

// selectionFlags limit a run to some releases: --target addresses and -l
// label selectors (helmfile's), with --include-deps.
type selectionFlags struct {
	Targets     []string
	Selectors   []string
	IncludeDeps bool
	// IncludeDependents (plan --destroy, destroy) also uninstalls what
	// depends on the selected releases.
	IncludeDependents bool
}

// addSelectorFlag registers -l on fs.
func addSelectorFlag(fs *pflag.FlagSet, selectors *[]string, what string) {
	fs.StringArrayVarP(selectors, "selector", "l", nil, what+" the releases whose labels match: key=value or key!=value, comma-separated terms all hold; repeatable, any selector matches (as helmfile)")
}

// addSelectionFlags registers --target, -l and --include-deps on fs.
func addSelectionFlags(fs *pflag.FlagSet, f *selectionFlags, verb string) {
	fs.StringArrayVar(&f.Targets, "target", nil, verb+" only this release (release.NAME or release.NAME[\"key\"]; repeatable)")
	addSelectorFlag(fs, &f.Selectors, verb+" only")
	fs.BoolVar(&f.IncludeDeps, "include-deps", false, "with --target or -l, also "+verb+" the releases they depend on")
}

// addIncludeDependentsFlag registers --include-dependents on the
// commands that destroy.
func addIncludeDependentsFlag(fs *pflag.FlagSet, f *selectionFlags) {
	fs.BoolVar(&f.IncludeDependents, "include-dependents", false, "with --target or -l, also destroy the releases that depend on them, dependents first (without it they stay, and the plan names them and what they read)")
}

// request is the plan request of the selection.
func (f selectionFlags) request() run.PlanRequest {
	return run.PlanRequest{Targets: f.Targets, Selectors: f.Selectors, IncludeDeps: f.IncludeDeps, IncludeDependents: f.IncludeDependents}
}

// any says whether the flags select anything.
func (f selectionFlags) any() bool { return len(f.Targets) > 0 || len(f.Selectors) > 0 }
