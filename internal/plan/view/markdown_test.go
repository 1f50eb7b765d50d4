package view

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/convoy-sh/convoy/internal/plan/plantest"

	"github.com/convoy-sh/convoy/internal/plan"
)

// bigPlan is a plan of n releases: every third unchanged, the others
// upgrading a ConfigMap whose data grows with lines keys each.
func bigPlan(n, lines int) *plan.Plan {
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Stack: "fleet"}
	app := &plan.ChartRef{Name: "app", Version: "1.0.0"}
	for i := range n {
		r := &plan.ReleaseChange{Addr: plantest.Addr(fmt.Sprintf("svc%02d", i)), Name: fmt.Sprintf("svc%02d", i), Namespace: "fleet",
			Chart: plan.ChartChange{Before: app, After: app}, Action: plan.ActionNoOp}
		if i%3 != 0 {
			before, after := map[string]any{}, map[string]any{}
			for k := range lines * (i%4 + 1) {
				before[fmt.Sprintf("key%03d", k)] = "old"
				after[fmt.Sprintf("key%03d", k)] = fmt.Sprintf("new value %d of svc%02d", k, i)
			}
			r.Action = plan.ActionUpgrade
			r.Reasons = []plan.Reason{{Kind: plan.ReasonManifest}}
			r.Objects = []*plan.ObjectChange{{Ref: plantest.Ref("v1 ConfigMap fleet/" + r.Name),
				Action: plan.ObjectUpdate, Diff: plan.Compare(map[string]any{"data": before}, map[string]any{"data": after})}}
		}
		p.Releases = append(p.Releases, r)
	}
	return p
}

// A markdown plan of 60 releases: unchanged ones on one line, short diffs
// open, long ones in <details>, and under a comment's size limit with a
// note on what was cut.
func TestMarkdownOf60ReleasesStaysUnderTheLimit(t *testing.T) {
	got := markdown(bigPlan(60, 40), MarkdownLimit)
	compareGolden(t, filepath.Join("testdata", "render", "plan-60.md"), got)
	if n := utf8.RuneCountInString(got); len(got) >= MarkdownLimit || n >= MarkdownLimit {
		t.Fatalf("%d bytes, %d characters: not under %d", len(got), n, MarkdownLimit)
	}
	for _, want := range []string{
		"20 unchanged: `release.svc00`, `release.svc03`",
		"**Cut to stay under a pull-request comment's 65536 characters:** the diffs of ",
		"<details><summary><code>release.svc01</code> (upgrade, ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if strings.Contains(got, "| `release.svc00` |") {
		t.Error("an unchanged release has a table row")
	}

	small := markdown(bigPlan(4, 1), MarkdownLimit)
	if strings.Contains(small, "<details>") || strings.Contains(small, "Cut to stay") || !strings.Contains(small, "**`release.svc01`** (upgrade)\n\n```diff\n") {
		t.Errorf("short diffs are not shown open:\n%s", small)
	}
}
