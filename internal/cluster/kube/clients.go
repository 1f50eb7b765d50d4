package kube

import (
	"cmp"
	"slices"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/restmapper"
)

// Clients are the clients a Client talks to its cluster through, for
// NewFromClients.
type Clients struct {
	Dynamic   dynamic.Interface
	Metadata  metadata.Interface
	Typed     kubernetes.Interface
	Discovery discovery.DiscoveryInterface
	// Cluster is the cluster's identity (what ClusterIDOf would say of
	// its REST config).
	Cluster ClusterID
}

// NewFromClients builds a Client over clients made elsewhere: client-go's
// fakes, for a cluster held in memory (planner/plannertest). Discovery is
// cached as New caches it. Options' rate limits and Reach apply only to
// clients New builds from a REST config; here they are the given
// clients' business.
func NewFromClients(c Clients, opts Options) *Client {
	fieldManager, predecessors := opts.FieldManager, opts.Predecessors
	if fieldManager == "" {
		fieldManager = DefaultFieldManager
		if predecessors == nil {
			predecessors = DefaultPredecessors
		}
	}
	cached := memory.NewMemCacheClient(c.Discovery)
	return &Client{
		dynamic:      c.Dynamic,
		metadata:     c.Metadata,
		typed:        c.Typed,
		discovery:    cached,
		mapper:       restmapper.NewDeferredDiscoveryRESTMapper(cached),
		fieldManager: fieldManager,
		clusterID:    c.Cluster,
		reach:        opts.Reach,
		predecessors: slices.Clone(predecessors),
		listPageSize: int64(cmp.Or(opts.ListPageSize, DefaultListPageSize)),
	}
}
