package view

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/plantest"
)

// TestPromotedChartSaysWhereItComesFrom: a promoted release's chart is
// named with its source environment and revision in every view, and JSON
// carries promoted_from in full.
func TestPromotedChartSaysWhereItComesFrom(t *testing.T) {
	p := &plan.Plan{Stack: "shop", Environment: "production", Releases: []*plan.ReleaseChange{{
		Addr: plantest.Addr("web"), Name: "web", Namespace: "shop-production", Action: plan.ActionUpgrade,
		Chart: plan.ChartChange{Before: &plan.ChartRef{Name: "podinfo", Version: "6.14.0"}, After: &plan.ChartRef{Name: "podinfo", Version: "6.14.1"}},
		PromotedFrom: &plan.Promotion{
			Environment: "staging", Name: "web", Namespace: "shop-staging", Revision: 3,
			ChartDigest: "sha256:" + strings.Repeat("ab", 32),
		},
	}}}
	var text, md, js bytes.Buffer
	if err := Text(&text, p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "chart: podinfo 6.14.0 → podinfo 6.14.1 promoted from staging (revision 3)\n") {
		t.Errorf("text:\n%s", text.String())
	}
	if err := Markdown(&md, p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "podinfo 6.14.0 → 6.14.1 (promoted from staging revision 3)") {
		t.Errorf("markdown:\n%s", md.String())
	}
	if err := JSON(&js, p); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Releases []struct {
			PromotedFrom map[string]any `json:"promoted_from"`
		} `json:"releases"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := doc.Releases[0].PromotedFrom
	want := map[string]any{"environment": "staging", "name": "web", "namespace": "shop-staging", "revision": float64(3), "chart_digest": "sha256:" + strings.Repeat("ab", 32)}
	if len(got) != len(want) {
		t.Fatalf("promoted_from: %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("promoted_from.%s = %v, want %v", k, got[k], v)
		}
	}
}
