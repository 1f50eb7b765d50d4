package view

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
)

// apisPlan is bigPlan with two deprecations on its first release, a
// no-op, and a stored revision read as its successor on its second, an
// upgrade.
func apisPlan() *plan.Plan {
	p := bigPlan(2, 1)
	p.Releases[1].StoredAPIs = []plan.StoredAPI{{Revision: 1, FromAPIVersion: "policy/v1beta1", Kind: "PodDisruptionBudget", ToAPIVersion: "policy/v1", RemovedIn: "1.25"}}
	r := p.Releases[0]
	r.KubeTarget = "1.37"
	r.Deprecations = []plan.Deprecation{
		{Ref: plan.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "fleet", Name: "cfg"}, DeprecatedIn: "1.36", RemovedIn: "1.37", Removed: true},
		{Ref: plan.ObjectRef{Group: "example.com", Version: "v1beta1", Kind: "Widget", Namespace: "fleet", Name: "w"}, DeprecatedIn: "1.35", RemovedIn: "1.40", Replacement: "example.com/v1"},
	}
	return p
}

func TestAPIsText(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, apisPlan()); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"      note: stored revision 1 names policy/v1beta1 PodDisruptionBudget, removed in 1.25: compared as policy/v1\n",
		"APIs deprecated or removed in Kubernetes 1.37:\n" +
			"  release.svc00: v1 ConfigMap fleet/cfg: removed in 1.37, with no replacement\n" +
			"  release.svc00: example.com/v1beta1 Widget fleet/w: deprecated in 1.35, removed in 1.40, use example.com/v1\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("text lacks %q:\n%s", want, got)
		}
	}
	var md bytes.Buffer
	if err := Markdown(&md, apisPlan()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "**APIs deprecated or removed in Kubernetes 1.37**\n\n- release.svc00: v1 ConfigMap fleet/cfg: removed in 1.37, with no replacement\n") ||
		!strings.Contains(md.String(), "note: stored revision 1 names policy/v1beta1") {
		t.Errorf("markdown lacks the deprecations or the note:\n%s", md.String())
	}
}

func TestAPIsJSON(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, apisPlan()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Releases []struct {
			StoredAPIs   []map[string]any `json:"stored_apis"`
			KubeTarget   string           `json:"kube_target"`
			Deprecations []map[string]any `json:"deprecations"`
		} `json:"releases"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	r := doc.Releases[0]
	if r.KubeTarget != "1.37" || len(r.Deprecations) != 2 || len(doc.Releases[1].StoredAPIs) != 1 {
		t.Fatalf("release: %+v", r)
	}
	want := map[string]any{"ref": "v1 ConfigMap fleet/cfg", "api_version": "v1", "kind": "ConfigMap", "deprecated_in": "1.36", "removed_in": "1.37", "removed": true}
	for k, v := range want {
		if r.Deprecations[0][k] != v {
			t.Errorf("deprecations[0].%s = %v, want %v", k, r.Deprecations[0][k], v)
		}
	}
	if r.Deprecations[1]["replacement"] != "example.com/v1" || r.Deprecations[1]["removed"] != false {
		t.Errorf("deprecations[1] = %v", r.Deprecations[1])
	}
	// docs/policies.md: replacement is "" when nothing replaces the API,
	// in --json as in policies, never left out.
	if got, ok := r.Deprecations[0]["replacement"]; !ok || got != "" {
		t.Errorf("deprecations[0].replacement = %v (present: %v), want \"\"", got, ok)
	}
	if s := doc.Releases[1].StoredAPIs[0]; s["from_api_version"] != "policy/v1beta1" || s["to_api_version"] != "policy/v1" || s["removed_in"] != "1.25" || s["revision"] != float64(1) {
		t.Errorf("stored_apis[0] = %v", s)
	}
}

// A target past the releases convoy's table knows says so, with objects
// listed or none: an empty list there proves nothing (issue 55, item 9).
func TestAPIsPastTheTable(t *testing.T) {
	p := apisPlan()
	p.Releases[0].KubeKnown = "1.36"
	none := p.Releases[1]
	none.KubeTarget, none.KubeKnown = "2.0", "1.36"
	var b bytes.Buffer
	if err := Text(&b, p); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"APIs deprecated or removed in Kubernetes 1.37:\n" +
			"  release.svc00: v1 ConfigMap fleet/cfg: removed in 1.37, with no replacement\n" +
			"  release.svc00: example.com/v1beta1 Widget fleet/w: deprecated in 1.35, removed in 1.40, use example.com/v1\n" +
			"  convoy knows removals up to 1.36: what later releases remove is not listed\n",
		"APIs deprecated or removed in Kubernetes 2.0:\n" +
			"  convoy knows removals up to 1.36: what later releases remove is not listed\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	var md bytes.Buffer
	if err := Markdown(&md, p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "**APIs deprecated or removed in Kubernetes 2.0**\n\n- convoy knows removals up to 1.36") {
		t.Errorf("markdown lacks the note:\n%s", md.String())
	}
	b.Reset()
	if err := JSON(&b, p); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Releases []struct {
			KubeTarget string `json:"kube_target"`
			Known      string `json:"kube_known_through"`
		} `json:"releases"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if r := doc.Releases[1]; r.KubeTarget != "2.0" || r.Known != "1.36" {
		t.Errorf("release 1: kube_target %q, kube_known_through %q", r.KubeTarget, r.Known)
	}
	// Within the table: nothing said.
	b.Reset()
	if err := Text(&b, apisPlan()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "convoy knows removals") {
		t.Errorf("a target within the table says it is past it:\n%s", b.String())
	}
}
