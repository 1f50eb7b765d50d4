package deploy_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/deploy"
	"github.com/convoy-sh/convoy/internal/chart"
)

// The Helm chart installs the same CRD as `convoy controller install`, and
// its Deployment elects leaders in the release namespace, per shard.
func TestChartMatchesTheManifests(t *testing.T) {
	ch, err := chart.Load("chart/convoy-controller")
	if err != nil {
		t.Fatal(err)
	}
	r, err := chart.Render(ch, chart.RenderOptions{ReleaseName: "convoy-a", Namespace: "ops", UserValues: map[string]any{"shard": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.CRDs) != 1 || !bytes.Equal(r.CRDs[0].Data, deploy.CRD) {
		t.Fatal("the chart's CRD differs from deploy/crd/stacks.convoy.dev.yaml: copy it over")
	}
	kinds := map[string]string{}
	for _, m := range r.Manifests {
		kinds[m.Kind] = m.Content
	}
	for _, k := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Deployment"} {
		if kinds[k] == "" {
			t.Errorf("the chart renders no %s", k)
		}
	}
	d := kinds["Deployment"]
	for _, want := range []string{"--leader-elect", "--leader-election-namespace=ops", "--shard=a", "serviceAccountName: convoy-a"} {
		if !strings.Contains(d, want) {
			t.Errorf("the Deployment lacks %q:\n%s", want, d)
		}
	}
	if !strings.Contains(kinds["ClusterRoleBinding"], "namespace: ops") {
		t.Errorf("the binding names another namespace:\n%s", kinds["ClusterRoleBinding"])
	}
}
