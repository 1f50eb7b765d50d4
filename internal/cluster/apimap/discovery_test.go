package apimap_test

import (
	"os"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/apimap"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var cluster = devtest.New()

func TestMain(m *testing.M) { os.Exit(cluster.Run(m)) }

// TestTableAgainstDiscovery checks convoy's table against what the local
// control plane serves: every API the table says its release removed is
// not served, and every successor is.
func TestTableAgainstDiscovery(t *testing.T) {
	cluster.Need(t)
	disco := cluster.Client().Discovery()
	info, err := disco.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	version, err := apimap.ParseVersion(info.GitVersion)
	if err != nil {
		t.Fatal(err)
	}
	if known := apimap.Kubernetes().KnownThrough(); known.Less(version) {
		t.Errorf("the control plane is Kubernetes %s, past the table's knownThrough %s: read Kubernetes' deprecated API migration guide again, add what it removes up to %s and raise knownThrough (internal/cluster/apimap/kubernetes.yaml)", version, known, version)
	}
	_, lists, err := disco.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	served := map[schema.GroupVersionKind]bool{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			served[gv.WithKind(r.Kind)] = true
		}
	}
	isServed := func(a apimap.API) bool {
		gv, err := schema.ParseGroupVersion(a.APIVersion)
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		return served[gv.WithKind(a.Kind)]
	}
	removed := 0
	for _, e := range apimap.Kubernetes().Entries() {
		if !e.RemovedBy(version) {
			t.Errorf("%s: removed in %s, after the cluster's %s: the table holds only what a release removed", e.From, e.RemovedIn, version)
			continue
		}
		removed++
		if isServed(e.From) {
			t.Errorf("%s: the table says 1.%d removed it, but Kubernetes %s serves it", e.From, e.RemovedIn.Minor, info.GitVersion)
		}
		if e.To != nil && !isServed(*e.To) {
			t.Errorf("%s: its successor %s is not served by Kubernetes %s", e.From, e.To, info.GitVersion)
		}
	}
	if removed < 50 {
		t.Errorf("only %d entries checked", removed)
	}
	t.Logf("%d removals checked against Kubernetes %s", removed, info.GitVersion)
}
