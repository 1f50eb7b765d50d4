// Package releasetest is a release engine over client-go's fake clients:
// a cluster in memory that serves the given API resources, for -short
// tests of code that needs an engine (to parse manifests as a cluster
// serves their kinds, to name the field manager) but no API server.
// planner/plannertest builds its cluster on it.
package releasetest

import (
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	fakedynamic "k8s.io/client-go/dynamic/fake"
	fakekube "k8s.io/client-go/kubernetes/fake"
	fakemetadata "k8s.io/client-go/metadata/fake"
)

// Cluster is an engine and the fake clients under it.
type Cluster struct {
	Engine  *release.Engine
	Kube    *kube.Client
	Dynamic *fakedynamic.FakeDynamicClient
}

// New returns an engine whose cluster (named cluster) serves resources
// at kubeVersion and holds nothing.
func New(cluster kube.ClusterID, kubeVersion string, resources []*metav1.APIResourceList) (*Cluster, error) {
	typed := fakekube.NewClientset()
	disco := typed.Discovery().(*fakediscovery.FakeDiscovery)
	disco.Resources = resources
	disco.FakedServerVersion = &version.Info{GitVersion: kubeVersion}
	listKinds := map[schema.GroupVersionResource]string{}
	for _, l := range resources {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, r := range l.APIResources {
			listKinds[gv.WithResource(r.Name)] = r.Kind + "List"
		}
	}
	dyn := fakedynamic.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
	meta := fakemetadata.NewSimpleMetadataClient(fakemetadata.NewTestScheme())
	kc := kube.NewFromClients(kube.Clients{Dynamic: dyn, Metadata: meta, Typed: typed, Discovery: disco, Cluster: cluster}, kube.Options{})
	eng, err := release.NewEngineFromClients(kc, typed, meta, release.EngineOptions{})
	if err != nil {
		return nil, err
	}
	return &Cluster{Engine: eng, Kube: kc, Dynamic: dyn}, nil
}

// DefaultResources are the API resources of the core kinds charts use
// most.
func DefaultResources() []*metav1.APIResourceList {
	res := func(name, kind string, namespaced bool) metav1.APIResource {
		return metav1.APIResource{Name: name, Kind: kind, Namespaced: namespaced, Verbs: metav1.Verbs{"get", "list", "create", "update", "patch", "delete"}}
	}
	return []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			res("configmaps", "ConfigMap", true), res("secrets", "Secret", true), res("services", "Service", true),
			res("serviceaccounts", "ServiceAccount", true), res("pods", "Pod", true),
			res("persistentvolumeclaims", "PersistentVolumeClaim", true), res("namespaces", "Namespace", false),
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			res("deployments", "Deployment", true), res("statefulsets", "StatefulSet", true), res("daemonsets", "DaemonSet", true),
		}},
		{GroupVersion: "batch/v1", APIResources: []metav1.APIResource{res("jobs", "Job", true)}},
		{GroupVersion: "networking.k8s.io/v1", APIResources: []metav1.APIResource{res("ingresses", "Ingress", true)}},
		{GroupVersion: "rbac.authorization.k8s.io/v1", APIResources: []metav1.APIResource{
			res("roles", "Role", true), res("clusterroles", "ClusterRole", false),
		}},
		{GroupVersion: "storage.k8s.io/v1", APIResources: []metav1.APIResource{res("storageclasses", "StorageClass", false)}},
		{GroupVersion: "apiextensions.k8s.io/v1", APIResources: []metav1.APIResource{res("customresourcedefinitions", "CustomResourceDefinition", false)}},
	}
}
