package view

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan/plantest"

	"github.com/convoy-sh/convoy/internal/plan"
)

// A release another stack owns is shown refused, not as an upgrade; an
// adoption and an interrupted run's record say so.
func TestRenderOwnershipAndInterruptedRuns(t *testing.T) {
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Stack: "team-x", Releases: []*plan.ReleaseChange{
		{Addr: plantest.Addr("shared"), Name: "shared", Namespace: "shr", Action: plan.ActionUpgrade, Owner: "team-y",
			Warnings: []string{`owned by stack "team-y" (revision 3): apply refuses to change it; adopt_from_stack = "team-y" in its release block takes it over`}},
		{Addr: plantest.Addr("taken"), Name: "taken", Namespace: "shr", Action: plan.ActionUpgrade, Owner: "team-y", Adopt: true},
		{Addr: plantest.Addr("api"), Name: "api", Namespace: "shr", Action: plan.ActionUpgrade,
			Interrupted: &plan.Interrupted{RunID: "a1b2c3d4e5f6", Revision: 4, Status: "pending-upgrade"}},
	}}
	var b bytes.Buffer
	if err := Text(&b, p); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`  ! release.shared (refused: owned by stack "team-y") namespace shr`,
		`  ~ release.taken (upgrade, adopted from stack "team-y") namespace shr`,
		"      interrupted run a1b2c3d4e5f6: revision 4 left pending-upgrade; apply marks it failed",
		"Plan: 0 to install, 2 to upgrade, 0 to uninstall, 0 unchanged. Refused: 1 release owned by another stack: apply refuses to run.",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := JSON(&b, p); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Summary  struct{ Refused int }
		Releases []struct {
			OwnerStack  string `json:"owner_stack"`
			Refused     bool
			Adopt       bool
			Interrupted *struct {
				RunID    string `json:"run_id"`
				Revision int
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	r := doc.Releases
	if doc.Summary.Refused != 1 || r[0].OwnerStack != "team-y" || !r[0].Refused || r[1].Refused || !r[1].Adopt ||
		r[2].Interrupted == nil || r[2].Interrupted.RunID != "a1b2c3d4e5f6" || r[2].Interrupted.Revision != 4 {
		t.Fatalf("JSON: %s", b.String())
	}
}
