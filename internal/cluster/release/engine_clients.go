package release

import (
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
)

// NewEngineFromClients is NewEngine over clients made elsewhere: kc (see
// kube.NewFromClients), and client and meta for the records. The
// capabilities are read from kc's discovery, as NewEngine reads them. A
// cluster held in memory (planner/plannertest) renders and parses with such an
// engine; its records are the memory view's.
func NewEngineFromClients(kc *kube.Client, client kubernetes.Interface, meta metadata.Interface, opts EngineOptions) (*Engine, error) {
	caps, err := clusterCapabilities(kc.Discovery())
	if err != nil {
		return nil, err
	}
	return &Engine{Renderer: &Renderer{kube: kc, caps: caps, driver: opts.Driver, apis: opts.APIs}, client: client, meta: meta, notify: opts.notify(), grace: opts.Grace, timings: opts.Timings, listPageSize: int64(opts.Kube.ListPageSize), metadata: opts.Metadata, lock: opts.Lock, namespaces: opts.Namespaces, fresh: &freshCaps{}}, nil
}
