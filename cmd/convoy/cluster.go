package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/kube"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/release"
	"github.com/convoy-sh/convoy/internal/resolve"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// clusterFlags choose the default cluster (for releases without a cluster
// block) and tune the client.
type clusterFlags struct {
	Kubeconfig    string
	Context       string
	QPS           float32
	Burst         int
	StorageDriver string
}

func addClusterFlags(fs *pflag.FlagSet, f *clusterFlags) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "kubeconfig for releases without a cluster block (default $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&f.Context, "context", "", "kubeconfig context for releases without a cluster block (default: current context)")
	fs.Float32Var(&f.QPS, "kube-qps", kube.DefaultQPS, "client-side limit of queries per second to the Kubernetes API (the server's priority and fairness still applies)")
	fs.IntVar(&f.Burst, "kube-burst", kube.DefaultBurst, "client-side burst of queries to the Kubernetes API")
	fs.StringVar(&f.StorageDriver, "storage-driver", "secret", "where release records live: secret or configmap (as Helm's HELM_DRIVER)")
}

// restConfig builds the client configuration for a cluster block (nil: the
// default cluster from the flags and environment).
func (f clusterFlags) restConfig(spec *config.ClusterSpec) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	overrides := &clientcmd.ConfigOverrides{}
	path, ctxName := f.Kubeconfig, f.Context
	if spec != nil {
		if spec.Kubeconfig != "" {
			path = spec.Kubeconfig
		}
		if spec.Context != "" {
			ctxName = spec.Context
		}
	}
	if path != "" {
		rules.ExplicitPath = expandHome(path)
	}
	overrides.CurrentContext = ctxName
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		err = errors.New("no kubeconfig found: set $KUBECONFIG, pass --kubeconfig, or give the release a cluster block")
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", clusterDescription(spec), err)
	}
	cfg.QPS, cfg.Burst = f.QPS, f.Burst
	return cfg, nil
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	return p
}

// newCharts is the chart loader of a run, with the chart cache taken from
// the environment ($CONVOY_CACHE_DIR, else the user cache directory).
func newCharts() *resolve.Charts {
	dir, _ := source.DefaultCacheDir(os.Getenv) // "": reported if a repository chart needs it
	return resolve.NewCharts(dir)
}

// engines connects lazily, once per cluster, and shares the engines.
type engines struct {
	flags   clusterFlags
	observe func(release.Event) // nil: steps are not reported
	mu      sync.Mutex
	byKey   map[string]engineEntry
}

// engineEntry memoizes a connection attempt, failed ones included, so a
// broken cluster is reported once rather than once per release.
type engineEntry struct {
	eng *release.Engine
	err error
}

func newEngines(flags clusterFlags, observe func(release.Event)) *engines {
	return &engines{flags: flags, observe: observe, byKey: map[string]engineEntry{}}
}

// logTo reports engine steps as timestamped lines on w.
func logTo(w io.Writer) func(release.Event) {
	var mu sync.Mutex
	return func(ev release.Event) {
		mu.Lock()
		defer mu.Unlock()
		release.WriteEvent(w, ev)
	}
}

func (e *engines) forCluster(ctx context.Context, spec *config.ClusterSpec) (*release.Engine, error) {
	key := ""
	if spec != nil {
		key = spec.Name
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if ent, ok := e.byKey[key]; ok {
		return ent.eng, ent.err
	}
	eng, err := e.connect(ctx, spec)
	if err != nil {
		err = &errOnce{err: err}
	}
	e.byKey[key] = engineEntry{eng: eng, err: err}
	return eng, err
}

// connectAll connects to every cluster the stack uses, so that a cluster
// that cannot be reached is reported once, before any per-release work.
func (e *engines) connectAll(ctx context.Context, st *config.Stack) error {
	clusters := plan.Clusters(st)
	for _, key := range slices.Sorted(maps.Keys(clusters)) {
		if _, err := e.forCluster(ctx, clusters[key]); err != nil {
			return err
		}
	}
	return nil
}

// errOnce is a connection error shared by every release of that cluster.
type errOnce struct{ err error }

func (e *errOnce) Error() string { return e.err.Error() }
func (e *errOnce) Unwrap() error { return e.err }

func (e *engines) connect(ctx context.Context, spec *config.ClusterSpec) (*release.Engine, error) {
	driver, err := release.ParseStorageDriver(e.flags.StorageDriver)
	if err != nil {
		return nil, err
	}
	cfg, err := e.flags.restConfig(spec)
	if err != nil {
		return nil, err
	}
	opts := release.EngineOptions{
		Kube:   kube.Options{QPS: e.flags.QPS, Burst: e.flags.Burst},
		Driver: driver,
	}
	if e.observe != nil {
		opts.Observer = e.observe
	}
	eng, err := release.NewEngine(ctx, cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", clusterDescription(spec), err)
	}
	return eng, nil
}

func clusterDescription(spec *config.ClusterSpec) string {
	if spec == nil {
		return "the default cluster"
	}
	return fmt.Sprintf("cluster %q (%s)", spec.Name, spec.DeclRange)
}
