package planner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planner"
)

// instanceStack is release name of the instance chart in namespace shop,
// with values; extra is more HCL.
func instanceStack(t *testing.T, name, values, extra string) string {
	return fmt.Sprintf(`stack "shop" {
  default_namespace = "shop"
}
release %q {
  chart  = %q
  values = [%s]
}
%s`, name, chartPath(t, "testdata", "charts", "instance"), values, extra)
}

// A release renamed by a moved block, its objects' names kept by a
// fullnameOverride (issue 55, item 5): the label naming the instance
// changes because the release name did, and its provenance names the
// release name at the moved block, not the fullnameOverride; a values
// change beside it is still the values leaf's.
func TestMemRenameIsAttributedToTheReleaseName(t *testing.T) {
	m := newMem(t, instanceStack(t, "redis", `{}`, ""))
	m.deploy()
	m.rewrite(instanceStack(t, "cache", `{ fullnameOverride = "redis-cache", message = "bye" }`, `
moved {
  from = release.redis
  to   = release.cache
}
`))
	p := m.mustPlan(nil, planner.ObserveMetadata)
	rc := change(t, p, "release.cache")
	if rc.Action != plan.ActionUpgrade || rc.Rename == nil {
		t.Fatalf("%s rename %+v, want an upgrade renaming redis", rc.Action, rc.Rename)
	}
	var cm *plan.ObjectChange
	for _, o := range rc.Objects {
		if o.Ref.Kind == "ConfigMap" && o.Ref.Name == "redis-cache" {
			cm = o
		}
	}
	if cm == nil || cm.Diff.Empty() {
		t.Fatalf("objects %s: want ConfigMap redis-cache updated", objectActions(rc))
	}
	got := map[string]string{}
	for _, ch := range cm.Diff.Changes {
		var names []string
		for _, o := range ch.Provenance {
			s := string(o.Kind) + " " + o.Input
			if o.Source != nil {
				s += fmt.Sprintf(" (%s:%d:%d)", o.Source.File, o.Source.Line, o.Source.Column)
			}
			names = append(names, s)
		}
		got[ch.Path] = strings.Join(names, "; ")
	}
	t.Logf("provenance: %q", got)
	for _, path := range []string{`metadata.labels["app.kubernetes.io/instance"]`, `metadata.annotations["meta.helm.sh/release-name"]`} {
		if want := "release_name release name redis → cache (moved from release.redis) (stack.hcl:9:1)"; got[path] != want {
			t.Errorf("%s attributed to %q, want %q", path, got[path], want)
		}
	}
	if want := "values values message"; !strings.HasPrefix(got["data.message"], want) || strings.Contains(got["data.message"], "release") {
		t.Errorf("data.message attributed to %q, want the values leaf alone", got["data.message"])
	}
}
