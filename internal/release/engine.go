package release

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/kube"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// StorageDriver selects where release records live.
type StorageDriver int

// Storage drivers, as Helm's HELM_DRIVER.
const (
	DriverSecret StorageDriver = iota
	DriverConfigMap
)

// ParseStorageDriver accepts Helm's names: "secret"/"secrets" (default) and
// "configmap"/"configmaps".
func ParseStorageDriver(s string) (StorageDriver, error) {
	switch strings.ToLower(s) {
	case "", "secret", "secrets":
		return DriverSecret, nil
	case "configmap", "configmaps":
		return DriverConfigMap, nil
	}
	return 0, fmt.Errorf("unknown storage driver %q (want secret or configmap)", s)
}

// EngineOptions configure an Engine.
type EngineOptions struct {
	Kube   kube.Options
	Driver StorageDriver
	// Log receives one line per lifecycle step; nil discards.
	Log io.Writer
}

// Engine runs release operations against one cluster. It holds no
// per-operation state, so one Engine serves concurrent operations on
// different releases.
type Engine struct {
	kube   *kube.Client
	client kubernetes.Interface
	driver StorageDriver
	caps   *chart.Capabilities
	log    io.Writer
}

// NewEngine connects to the cluster and reads its capabilities (version and
// served API versions) once, for rendering.
func NewEngine(ctx context.Context, cfg *rest.Config, opts EngineOptions) (*Engine, error) {
	kc, err := kube.New(cfg, opts.Kube)
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	if opts.Kube.QPS > 0 {
		cfg.QPS, cfg.Burst = opts.Kube.QPS, opts.Kube.Burst
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	caps, err := clusterCapabilities(client)
	if err != nil {
		return nil, err
	}
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	return &Engine{kube: kc, client: client, driver: opts.Driver, caps: caps, log: log}, nil
}

// Kube is the engine's cluster client.
func (e *Engine) Kube() *kube.Client { return e.kube }

// Capabilities are what templates see as .Capabilities on this cluster.
func (e *Engine) Capabilities() *chart.Capabilities { return e.caps }

// Storage returns the release records of namespace ("" lists all).
func (e *Engine) Storage(namespace string) *Storage {
	if e.driver == DriverConfigMap {
		return &Storage{Driver: NewConfigMaps(e.client, namespace)}
	}
	return &Storage{Driver: NewSecrets(e.client, namespace)}
}

func (e *Engine) logf(release, format string, args ...any) {
	fmt.Fprintf(e.log, "%s %s: %s\n", time.Now().Format(time.RFC3339), release, fmt.Sprintf(format, args...))
}

// clusterCapabilities asks discovery for the server version and every
// served group/version and group/version/kind, as Helm does.
func clusterCapabilities(client kubernetes.Interface) (*chart.Capabilities, error) {
	sv, err := client.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("discover the cluster's version: %w", err)
	}
	kv, err := chart.ParseKubeVersion(sv.GitVersion)
	if err != nil {
		return nil, fmt.Errorf("cluster version %q: %w", sv.GitVersion, err)
	}
	_, lists, err := client.Discovery().ServerGroupsAndResources()
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("discover the cluster's APIs: %w", err)
	}
	var versions chart.VersionSet
	for _, l := range lists {
		versions = append(versions, l.GroupVersion)
		for _, r := range l.APIResources {
			if !strings.Contains(r.Name, "/") {
				versions = append(versions, l.GroupVersion+"/"+r.Kind)
			}
		}
	}
	slices.Sort(versions)
	versions = slices.Compact(versions)
	caps := chart.DefaultCapabilities()
	caps.KubeVersion = *kv
	caps.APIVersions = versions
	return caps, nil
}
