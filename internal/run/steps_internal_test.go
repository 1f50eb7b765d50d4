package run

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/run/apply"
	"github.com/convoy-sh/convoy/internal/run/apply/applytest"
)

// A destroy plan runs its uninstalls in reverse dependency order: what
// reads a release goes before it (reverseSteps), against the fake engine.
func TestDestroyUninstallsDependentsFirst(t *testing.T) {
	const ns = "shop"
	f := applytest.New()
	uninstall := func(name string, deps ...string) *apply.Step {
		f.Seed(ns, name, release.StatusDeployed)
		return &apply.Step{ID: "release." + name, Name: name, Namespace: ns, DependsOn: deps, Kind: apply.StepUninstall, Engine: f,
			Uninstall: release.UninstallRequest{Name: name, Namespace: ns}}
	}
	// web reads api, api reads db; cache stands alone.
	steps := reverseSteps([]*apply.Step{
		uninstall("db"), uninstall("api", "release.db"), uninstall("web", "release.api"), uninstall("cache"),
	})
	results := apply.Execute(context.Background(), steps, apply.ExecOptions{Parallelism: 1})
	for _, r := range results {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Step.ID, r.Err)
		}
	}
	pos := map[string]int{}
	for i, c := range f.Calls() {
		if c.Op == applytest.OpUninstall {
			pos[c.Name] = i
		}
	}
	if len(pos) != 4 || !(pos["web"] < pos["api"] && pos["api"] < pos["db"]) {
		t.Fatalf("uninstall order %v, want web before api before db", pos)
	}
	for _, name := range []string{"db", "api", "web", "cache"} {
		if f.History(ns, name) != nil {
			t.Errorf("%s still has records", name)
		}
	}
}

// A plan that would change releases other stacks own, or objects other
// releases own, is refused whole by the one ownership rule, naming each.
func TestForeignPlansAreRefusedWhole(t *testing.T) {
	addr := func(name string) plan.ReleaseAddr { return plan.RemovedAddr("", "shop", name) }
	for _, tc := range []struct {
		name     string
		releases []*plan.ReleaseChange
		want     []string // "" for no refusal
	}{
		{"this stack's releases", []*plan.ReleaseChange{{Addr: addr("a"), Name: "a", Namespace: "shop"}}, nil},
		{"adopted from another stack", []*plan.ReleaseChange{{Addr: addr("a"), Name: "a", Namespace: "shop", Owner: "team-y", Adopt: true}}, nil},
		{"owned by another stack", []*plan.ReleaseChange{{Addr: addr("a"), Name: "a", Namespace: "shop", Owner: "team-y", Observed: plan.Observed{LastRevision: 3}}},
			[]string{`is owned by stack "team-y" (revision 3); to take it over, set adopt_from_stack = "team-y"`}},
		{"an object of another release", []*plan.ReleaseChange{{Addr: addr("b"), Name: "b", Namespace: "shop",
			Conflicts: []plan.ObjectConflict{{Ref: plan.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "x"}, OwnerRelease: "grafana", OwnerNamespace: "staging", OwnerStack: "obs/staging"}}}},
			[]string{`v1 ConfigMap shop/x is owned by release grafana (namespace staging, stack "obs/staging")`}},
		{"both, each named", []*plan.ReleaseChange{
			{Addr: addr("a"), Name: "a", Namespace: "shop", Owner: "team-y"},
			{Addr: addr("b"), Name: "b", Namespace: "shop", Conflicts: []plan.ObjectConflict{{Ref: plan.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "x"}, OwnerRelease: "legacy", OwnerNamespace: "shop"}}},
		}, []string{`removed:shop/a (release a, namespace shop) is owned by stack "team-y"`, "removed:shop/b: v1 ConfigMap shop/x is owned by release legacy (namespace shop); take_ownership = true in the release block adopts it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := (&plan.Plan{Releases: tc.releases}).Foreign()
			var fe *plan.ForeignError
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want a ForeignError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
}
