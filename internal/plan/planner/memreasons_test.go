package planner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planner"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Whatever a chart carries — lookups, crds/, hooks —, a release nothing
// changed is proven unchanged from its fingerprint after the apply that
// deployed it, without a rendering or a dry run; and when one is planned
// in full, --stats says which and why (Stats.PlannedInFull). Each reason
// has a scene here; the real charts that showed them are hack/bench/real.sh's.

// oneRelease is a stack of release "app" of chart in namespace shop.
func oneRelease(t *testing.T, chart, settings string) string {
	return fmt.Sprintf(`
stack "shop" {
  default_namespace = "shop"
}
release "app" {
  chart = %q
  %s
}
`, chartPath(t, "testdata", "charts", chart), settings)
}

// proven asserts that the plan found release.app unchanged from its
// fingerprint: no rendering, no dry run, no record read whole.
func proven(t *testing.T, m *mem) {
	t.Helper()
	var stats planner.Stats
	rc := change(t, m.mustPlan(&stats, planner.ObserveMetadata), "release.app")
	if rc.Action != plan.ActionNoOp {
		t.Fatalf("%s (reasons %s), want a no-op", rc.Action, reasonKinds(rc))
	}
	if stats.Unchanged.Load() != 1 || stats.Renders.Load() != 0 || stats.DryRuns.Load() != 0 || stats.RecordReads.Load() != 0 {
		t.Fatalf("stats %s: want release.app proven unchanged from its fingerprint, without a render, a dry run or a record read whole", stats.String())
	}
}

// plannedInFull asserts that the plan planned release.app in full for
// why, names it so, and returns its change.
func plannedInFull(t *testing.T, m *mem, why string) *plan.ReleaseChange {
	t.Helper()
	var stats planner.Stats
	rc := change(t, m.mustPlan(&stats, planner.ObserveMetadata), "release.app")
	if got := stats.PlannedInFull()["release.app"]; got != why {
		t.Fatalf("stats %s: release.app planned in full for %q, want %q", stats.String(), got, why)
	}
	return rc
}

func TestMemLookupOfItsOwnSecretIsProvenUnchanged(t *testing.T) {
	// bitnami's charts keep a generated password through lookup (reuse
	// the live Secret, else randAlphaNum): impure, yet rendered as
	// deployed as long as the Secret is as the apply left it.
	m := newMem(t, oneRelease(t, "kept-secret", ""))
	m.deploy()
	proven(t, m)

	// Someone rewrites the password: the plan renders again, and the
	// chart keeps what it finds.
	if err := m.v.Edit(context.Background(), ref("", "v1", "Secret", "shop", "app-auth"), func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "Y2hhbmdlZA==", "data", "password")
	}); err != nil {
		t.Fatal(err)
	}
	plannedInFull(t, m, "lookups-changed")
}

func TestMemLookupOfAnotherObjectIsReadAgain(t *testing.T) {
	m := newMem(t, oneRelease(t, "looks-up", ""))
	settings := &unstructured.Unstructured{}
	settings.SetAPIVersion("v1")
	settings.SetKind("ConfigMap")
	settings.SetNamespace("shop")
	settings.SetName("settings")
	_ = unstructured.SetNestedField(settings.Object, "fast", "data", "mode")
	if err := m.v.Put(context.Background(), settings); err != nil {
		t.Fatal(err)
	}
	m.deploy()
	proven(t, m)

	if err := m.v.Edit(context.Background(), ref("", "v1", "ConfigMap", "shop", "settings"), func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "safe", "data", "mode")
	}); err != nil {
		t.Fatal(err)
	}
	rc := plannedInFull(t, m, "lookups-changed")
	if rc.Action != plan.ActionUpgrade || objectActions(rc) != "ConfigMap/app-copy:update" {
		t.Fatalf("%s with objects %s, want the copy updated", rc.Action, objectActions(rc))
	}

	// Deleted, it is absent to the lookup: that too is read again.
	m.deploy()
	proven(t, m)
	if err := m.v.Delete(context.Background(), ref("", "v1", "ConfigMap", "shop", "settings")); err != nil {
		t.Fatal(err)
	}
	plannedInFull(t, m, "lookups-changed")
}

func TestMemRandomOutputIsPlannedInFullAndSaysSo(t *testing.T) {
	// A rendering that draws random numbers differs every time: no
	// fingerprint proves it unchanged, and --stats names it.
	m := newMem(t, oneRelease(t, "stamped", ""))
	m.deploy()
	plannedInFull(t, m, "no-fingerprint")
}

func TestMemHooksAreNeitherRenderedNorDryRunWhenNothingChanged(t *testing.T) {
	// ingress-nginx's admission webhook: Jobs run as pre-install and
	// pre-upgrade hooks.
	m := newMem(t, oneRelease(t, "hooked", ""))
	m.deploy()
	proven(t, m)
}

func TestMemCRDsAreComparedByTheirMetadata(t *testing.T) {
	gadgets := ref("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "", "gadgets.example.com")
	for _, policy := range []string{"create", "create_replace", "skip"} {
		t.Run(policy, func(t *testing.T) {
			// kube-prometheus-stack's crds/ (create), traefik's
			// (create_replace).
			m := newMem(t, oneRelease(t, "with-crds", fmt.Sprintf("crds = %q", policy)))
			m.deploy()
			proven(t, m)
			rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.app")
			want := "CustomResourceDefinition/gadgets.example.com:no-op ConfigMap/app-config:no-op"
			if got := objectActions(rc); got != want {
				t.Fatalf("objects %s, want %s", got, want)
			}
			// The incremental plan says of each CRD what a full one says.
			m.in = func(in *planner.Input) { in.Refresh = planner.RefreshFull }
			full := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.app")
			m.in = nil
			if rc.Objects[0].Reason != full.Objects[0].Reason || rc.Objects[0].Template != full.Objects[0].Template {
				t.Fatalf("CRD planned unchanged as %q (%s), in full as %q (%s)", rc.Objects[0].Reason, rc.Objects[0].Template, full.Objects[0].Reason, full.Objects[0].Template)
			}
			if policy == "skip" {
				return
			}

			// Someone edits the CRD: what create_replace would restore
			// is planned in full; create leaves it as it is.
			if err := m.v.Edit(context.Background(), gadgets, func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, "gadgetz", "spec", "names", "singular")
			}); err != nil {
				t.Fatal(err)
			}
			if policy == "create" {
				proven(t, m)
				return
			}
			plannedInFull(t, m, "crds-changed")
		})
	}
}

func TestMemCRDsPolicyIsAnInput(t *testing.T) {
	m := newMem(t, oneRelease(t, "with-crds", ""))
	m.deploy()
	m.rewrite(oneRelease(t, "with-crds", `crds = "create_replace"`))
	plannedInFull(t, m, "inputs-changed")
}

func TestMemLookupsAreReadOncePerPlan(t *testing.T) {
	// Two releases looking up one ConfigMap, rendered in full (each as
	// the next revision, and the first again as the deployed one when it
	// differs): one GET.
	chart := chartPath(t, "testdata", "charts", "looks-up")
	m := newMem(t, fmt.Sprintf(`
stack "shop" {
  default_namespace = "shop"
}
release "a" {
  chart = %[1]q
}
release "b" {
  chart = %[1]q
}
`, chart))
	settings := &unstructured.Unstructured{}
	settings.SetAPIVersion("v1")
	settings.SetKind("ConfigMap")
	settings.SetNamespace("shop")
	settings.SetName("settings")
	_ = unstructured.SetNestedField(settings.Object, "fast", "data", "mode")
	if err := m.v.Put(context.Background(), settings); err != nil {
		t.Fatal(err)
	}
	m.deploy()
	m.in = func(in *planner.Input) { in.Refresh = planner.RefreshFull }
	at := ref("", "v1", "ConfigMap", "shop", "settings")
	before := m.v.Gets(at)
	var stats planner.Stats
	m.mustPlan(&stats, planner.ObserveMetadata)
	if got := m.v.Gets(at) - before; got != 1 || stats.Renders.Load() < 2 {
		t.Fatalf("%d GETs of the ConfigMap looked up in %d renders, want 1", got, stats.Renders.Load())
	}
}

// Item 7 of issue 55: values set to what the chart defaults them to
// (`message: hello`) change the record's values and no object. The
// upgrade says so (its pre-upgrade hook Job runs again), and with
// SkipNoOpUpgrades the release is left alone, its record unrelabelled,
// so that a plan without it still upgrades.
func TestMemValuesEqualToDefaultsChangeNoObject(t *testing.T) {
	m := newMem(t, oneRelease(t, "hooked", ""))
	m.deploy()
	m.rewrite(oneRelease(t, "hooked", `values = [{ message = "hello" }]`))
	rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.app")
	if rc.Action != plan.ActionUpgrade || reasonKinds(rc) != "values" {
		t.Fatalf("%s (reasons %s), want an upgrade for the values", rc.Action, reasonKinds(rc))
	}
	if got := strings.Join(rc.Warnings, "\n"); !strings.Contains(got, "values changed, no object changes: they render the objects and hooks of revision 1") || !strings.Contains(got, "its 1 hook run again") {
		t.Errorf("warnings %q, want the upgrade to say it changes no object and runs its hook again", got)
	}

	m.in = func(in *planner.Input) { in.SkipNoOpUpgrades = true }
	rc = change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.app")
	if rc.Action != plan.ActionNoOp || len(rc.Hooks) != 0 || len(rc.Relabel) != 0 {
		t.Fatalf("%s hooks %d relabel %v, want the release left alone, its record as it is", rc.Action, len(rc.Hooks), rc.Relabel)
	}
	if got := strings.Join(rc.Warnings, "\n"); !strings.Contains(got, "1 value changed, but they render the objects and hooks of revision 1: left alone (--skip-no-op-upgrades)") {
		t.Errorf("warnings %q, want the plan to say the values were left alone", got)
	}

	// A value that changes an object is an upgrade, skip or not.
	m.rewrite(oneRelease(t, "hooked", `values = [{ message = "bye" }]`))
	rc = change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.app")
	if rc.Action != plan.ActionUpgrade || strings.Contains(strings.Join(rc.Warnings, "\n"), "no object changes") {
		t.Fatalf("%s warnings %q, want an upgrade that changes the ConfigMap", rc.Action, rc.Warnings)
	}
}
