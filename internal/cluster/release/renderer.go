package release

import (
	"context"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/apimap"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Renderer is the part of a release engine that reads and writes no
// release record and no object: it renders a release's chart with the
// cluster's capabilities (read once, when the engine connected), parses
// rendered and stored manifests, computes fingerprints and the size of
// the record a revision would write. A plan renders, parses and
// fingerprints through it, and reads the cluster through its ClusterView.
//
// What it still asks the cluster: discovery, through kube.Client's REST
// mapper, when it parses an object of a kind not mapped yet (whether the
// kind is served, and namespaced); and the live lookups of a rendering
// whose request brings none (Request.Lookups).
type Renderer struct {
	kube   *kube.Client
	caps   *chart.Capabilities
	driver StorageDriver
	// apis is EngineOptions.APIs.
	apis *apimap.Map
}

// ClusterID names the cluster the renderer renders for
// (kube.Client.ClusterID).
func (e *Renderer) ClusterID() kube.ClusterID { return e.kube.ClusterID() }

// Parse parses a manifest as kube.Client.Parse: the kinds mapped by the
// cluster's discovery, namespaced objects given namespace when they name
// none.
func (e *Renderer) Parse(manifest, namespace string) ([]*unstructured.Unstructured, error) {
	return e.kube.Parse(manifest, namespace)
}

// Served says whether the cluster serves gvk (kube.Client.Served).
func (e *Renderer) Served(gvk schema.GroupVersionKind) bool { return e.kube.Served(gvk) }

// FieldManager is the field manager convoy applies as on this cluster.
func (e *Renderer) FieldManager() string { return e.kube.FieldManager() }

// IsOwn says whether a field manager is convoy's (kube.Client.IsOwn).
func (e *Renderer) IsOwn(o kube.FieldOwner) bool { return e.kube.IsOwn(o) }

// AppliedState is the fingerprint of what convoy applied of objs
// (kube.Client.AppliedState).
func (e *Renderer) AppliedState(refs []kube.Ref, objs []*unstructured.Unstructured) string {
	return e.kube.AppliedState(refs, objs)
}

// Lookup answers a template's lookup with the live object
// (kube.Client.Lookup): a rendering reads the cluster, as Helm's does.
func (e *Renderer) Lookup(ctx context.Context) func(apiVersion, kind, namespace, name string) (map[string]any, error) {
	return e.kube.Lookup(ctx)
}
