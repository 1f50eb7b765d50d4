package planner_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan/planner"
	"github.com/convoy-sh/convoy/internal/plan/view"
)

// TestMemPlanShowsTheRevisionsHistoryMaxPrunes: a release with no
// history_max keeps 10 revisions, as helm upgrade --history-max: the plan
// of its 11th revision says it prunes revision 1, in the text and the
// JSON; history_max = 0 prunes nothing, history_max = 3 the 8 oldest.
func TestMemPlanShowsTheRevisionsHistoryMaxPrunes(t *testing.T) {
	stack := func(rev int, settings string) string {
		return oneRelease(t, "web", fmt.Sprintf("values = [{ message = \"m%d\" }]\n  %s", rev, settings))
	}
	m := newMem(t, stack(1, ""))
	for rev := 1; rev <= 10; rev++ {
		m.rewrite(stack(rev, ""))
		rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.app")
		if rc.Prunes != nil {
			t.Fatalf("revision %d: the plan prunes %s, with %d revisions kept", rev, rc.Prunes, rev-1)
		}
		m.deploy()
	}
	m.rewrite(stack(11, ""))
	p := m.mustPlan(nil, planner.ObserveMetadata)
	rc := change(t, p, "release.app")
	if rc.Prunes == nil || !slices.Equal(rc.Prunes.Revisions, []int{1}) || rc.Prunes.Keep != 10 {
		t.Fatalf("the plan of revision 11 prunes %+v, want revision 1 (history_max 10)", rc.Prunes)
	}
	var text, js strings.Builder
	if err := view.Text(&text, p); err != nil || !strings.Contains(text.String(), "history: prunes revision 1 (history_max = 10 keeps the newest 10)") {
		t.Fatalf("the text plan does not say what it prunes: %v\n%s", err, text.String())
	}
	if err := view.JSON(&js, p); err != nil || !strings.Contains(strings.Join(strings.Fields(js.String()), ""), `"prunes":{"revisions":[1],"history_max":10}`) {
		t.Fatalf("the JSON plan does not say what it prunes: %v\n%s", err, js.String())
	}
	m.rewrite(stack(11, "history_max = 0"))
	if rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.app"); rc.Prunes != nil {
		t.Fatalf("history_max = 0 prunes %s", rc.Prunes)
	}
	m.rewrite(stack(11, "history_max = 3"))
	if rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.app"); rc.Prunes == nil || !slices.Equal(rc.Prunes.Revisions, []int{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Fatalf("history_max = 3 prunes %+v, want revisions 1–8", rc.Prunes)
	}
}
