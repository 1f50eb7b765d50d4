package planner_test

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planner"
)

// How a plan reads the release records, planned against planner/plannertest,
// whose records a plan reads through planner.RecordReads as it reads a
// real cluster's: what each kind of plan costs the API server in record
// lists and GETs (planner.Stats, `convoy plan --stats`).

// recordReads are the plan's record lists and records read one GET each.
func recordReads(s *planner.Stats) string {
	return fmt.Sprintf("%d lists, %d GETs", s.RecordLists.Load(), s.RecordReads.Load())
}

func TestMemUnchangedPlanReadsRecordsOnce(t *testing.T) {
	for _, tt := range []struct {
		name    string
		observe planner.Observe
		in      func(*planner.Input)
		want    string
	}{
		// The records' metadata proves each release unchanged
		// (incremental.go): no record read whole.
		{"metadata", planner.ObserveMetadata, nil, "1 lists, 0 GETs"},
		// The plan hashes the objects its deployed manifests apply: one
		// list of the records whole instead of a GET each.
		{"content", planner.ObserveContent, nil, "1 lists, 0 GETs"},
		{"full refresh", planner.ObserveMetadata, func(in *planner.Input) { in.Refresh = planner.RefreshFull }, "1 lists, 0 GETs"},
		// Policies over objects see the deployed objects of every
		// release: the deployed records, read by list.
		{"policy objects", planner.ObserveMetadata, func(in *planner.Input) { in.PolicyObjects = true }, "2 lists, 0 GETs"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := newMem(t, shopOf(t, 3, "a"))
			m.deploy()
			m.in = tt.in
			var stats planner.Stats
			p := m.mustPlan(&stats, tt.observe)
			if got := actions(p); got != "release.r0:no-op release.r1:no-op release.r2:no-op" {
				t.Fatalf("actions %s", got)
			}
			if got := recordReads(&stats); got != tt.want {
				t.Errorf("records read with %s, want %s (stats %s)", got, tt.want, stats.String())
			}
		})
	}
}

func TestMemRemovedReleasesRecordsAreReadByList(t *testing.T) {
	m := newMem(t, shopOf(t, 3, "a"))
	m.deploy()
	m.rewrite(shopOf(t, 1, "a"))
	var stats planner.Stats
	p := m.mustPlan(&stats, planner.ObserveMetadata)
	if got := actions(p); got != "release.r0:no-op removed:shop/r1:uninstall removed:shop/r2:uninstall" {
		t.Fatalf("actions %s", got)
	}
	// The uninstalls read both removed releases' deployed records whole:
	// predicted, they are read with one list.
	if got := recordReads(&stats); got != "2 lists, 0 GETs" {
		t.Errorf("records read with %s, want the metadata list and one of the deployed records", got)
	}
}

func TestMemDestroyReadsTheDeployedRecordsByList(t *testing.T) {
	m := newMem(t, shopOf(t, 3, "a"))
	m.deploy()
	m.in = func(in *planner.Input) { in.Destroy = true }
	var stats planner.Stats
	p := m.mustPlan(&stats, planner.ObserveMetadata)
	if got := p.Summary().String(); got != "Plan: 3 to uninstall." {
		t.Fatalf("summary %q", got)
	}
	if got := recordReads(&stats); got != "2 lists, 0 GETs" {
		t.Errorf("records read with %s, want the metadata list and one of the deployed records", got)
	}
}

// A release the prediction misses (its live objects drifted) is read from
// the list of its namespace's deployed records when the plan lists them,
// else with a GET of its own.
func TestMemDriftedReleaseIsReadFromTheListOrAlone(t *testing.T) {
	for _, tt := range []struct {
		name    string
		changed int
		want    string
		actions string
	}{
		{"alone", 0, "1 lists, 1 GETs", "release.r0:no-op release.r1:no-op release.r2:no-op release.r3:upgrade"},
		{"listed", 2, "2 lists, 0 GETs", "release.r0:upgrade release.r1:upgrade release.r2:no-op release.r3:upgrade"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := newMem(t, shopOf(t, 4, "a"))
			m.deploy()
			hcl := shopOf(t, 4, "a")
			for i := range tt.changed {
				hcl = strings.Replace(hcl, fmt.Sprintf("release \"r%d\" {\n  chart  = %q\n  values = [{ message = \"a\" }]", i, webChart(t)),
					fmt.Sprintf("release \"r%d\" {\n  chart  = %q\n  values = [{ message = \"b\" }]", i, webChart(t)), 1)
			}
			m.rewrite(hcl)
			if err := m.v.Edit(context.Background(), ref("apps", "v1", "Deployment", "shop", "r3"), setReplicas(5)); err != nil {
				t.Fatal(err)
			}
			var stats planner.Stats
			p := m.mustPlan(&stats, planner.ObserveMetadata)
			if got := actions(p); got != tt.actions {
				t.Fatalf("actions %s, want %s", got, tt.actions)
			}
			if got := recordReads(&stats); got != tt.want {
				t.Errorf("records read with %s, want %s (stats %s)", got, tt.want, stats.String())
			}
		})
	}
}

// A record without the objects annotation (an older convoy wrote it) does
// not say which objects to compare: the plan reads it whole, and still
// proves the release unchanged.
func TestMemRecordWithoutItsObjectsIsReadWhole(t *testing.T) {
	m := newMem(t, webStack(t, ``))
	m.deploy()
	store := m.v.Records.Storage("shop")
	r, err := store.Get(context.Background(), "web", 1)
	if err != nil {
		t.Fatal(err)
	}
	delete(r.Annotations, release.ObjectsAnnotation)
	if err := store.Update(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	var stats planner.Stats
	rc := change(t, m.mustPlan(&stats, planner.ObserveMetadata), "release.web")
	if rc.Action != plan.ActionNoOp {
		t.Fatalf("%s (reasons %q), want a no-op", rc.Action, reasonKinds(rc))
	}
	if got := recordReads(&stats); got != "1 lists, 1 GETs" {
		t.Errorf("records read with %s, want the record read whole with a GET", got)
	}
}

// The stack's records in a namespace its files no longer declare are
// found by the stack's label (the namespaces it declares are listed
// anyway): the release there is uninstalled.
func TestMemRemovedReleaseOfAnUndeclaredNamespaceIsUninstalled(t *testing.T) {
	api := fmt.Sprintf(`
release "api" {
  chart     = %q
  namespace = "back"
}
`, webChart(t))
	m := newMem(t, webStack(t, ``)+api)
	m.deploy()
	m.rewrite(webStack(t, ``))
	p := m.mustPlan(nil, planner.ObserveMetadata)
	if got := actions(p); got != "release.web:no-op removed:back/api:uninstall" {
		t.Fatalf("actions %s, want api uninstalled from back", got)
	}
}

// After a failed upgrade, the next upgrade's values diff is against the
// deployed revision, not the failed one (what users last had running).
func TestMemUpgradeAfterAFailedRevisionComparesValuesWithTheDeployed(t *testing.T) {
	m := newMem(t, webStack(t, `{ message = "a" }`))
	m.deploy()
	m.rewrite(webStack(t, `{ message = "b", extra = true }`))
	m.deploy()
	setStatus(t, m, "web", 2, release.StatusFailed, nil)
	setStatus(t, m, "web", 1, release.StatusDeployed, nil)
	m.rewrite(webStack(t, `{ message = "c" }`))
	rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.web")
	if rc.Action != plan.ActionUpgrade || rc.Values == nil {
		t.Fatalf("%s with values %v, want an upgrade with a values diff", rc.Action, rc.Values)
	}
	var ops []string
	for _, c := range rc.Values.Changes {
		ops = append(ops, fmt.Sprintf("%s %s %v->%v", c.Op, c.Path, c.Before, c.After))
	}
	if got := strings.Join(ops, ", "); got != "change message a->c" {
		t.Errorf("values diff %q, want message a->c against revision 1", got)
	}
	if !slices.ContainsFunc(rc.Reasons, func(r plan.Reason) bool { return strings.HasPrefix(r.String(), "values: 1 value changed") }) {
		t.Errorf("reasons %v, want the one value changed since the deployed revision", rc.Reasons)
	}
}

func TestMemTargetsWithAndWithoutTheirDependencies(t *testing.T) {
	hcl := webStack(t, ``) + fmt.Sprintf(`
release "api" {
  chart      = %q
  depends_on = [release.web]
}
`, webChart(t))
	for _, tt := range []struct {
		includeDeps bool
		want        string
	}{{false, "release.api:install"}, {true, "release.web:install release.api:install"}} {
		t.Run(fmt.Sprint(tt.includeDeps), func(t *testing.T) {
			m := newMem(t, hcl)
			m.in = func(in *planner.Input) {
				addrs, _ := in.Stack.ResolveTargets([]string{"release.api"})
				in.Targets, in.IncludeDeps = addrs, tt.includeDeps
			}
			p := m.mustPlan(nil, planner.ObserveMetadata)
			if got := actions(p); got != tt.want || fmt.Sprint(p.Targets) != "[release.api]" || p.IncludeDeps != tt.includeDeps {
				t.Errorf("actions %s targets %v include deps %v, want %s", got, p.Targets, p.IncludeDeps, tt.want)
			}
		})
	}
}

// Each release reads the revision of the one before, and there are more
// of them than goroutines planning at parallelism 1: each waits for its
// dependency's plan, the releases are taken in order, and the plan
// completes.
func TestMemChainLongerThanThePool(t *testing.T) {
	n := 3 * max(2, 4*runtime.GOMAXPROCS(0))
	hcl := webStack(t, ``)
	for i := 1; i < n; i++ {
		prev := "web"
		if i > 1 {
			prev = fmt.Sprintf("r%d", i-1)
		}
		hcl += fmt.Sprintf("release \"r%d\" {\n  chart  = %q\n  values = [{ message = \"after ${release.%s.revision}\" }]\n}\n", i, webChart(t), prev)
	}
	m := newMem(t, hcl)
	m.in = func(in *planner.Input) { in.Parallelism = 1 }
	p := m.mustPlan(nil, planner.ObserveMetadata)
	if len(p.Releases) != n {
		t.Fatalf("%d releases planned, want %d", len(p.Releases), n)
	}
	for i, rc := range p.Releases {
		if rc.Action != plan.ActionInstall || rc.KnownAfterApply != (i > 0) {
			t.Fatalf("%s: %s, known after apply %v", rc.Addr, rc.Action, rc.KnownAfterApply)
		}
	}
}

// The records of the stack's releases, as the view lists them
// (ClusterView.StackReleases): every release with a record of the stack,
// in every namespace, with the newest record saying whose it is now and
// at which address — what the run reads to keep the names of instances
// moved by count (run/moves.go) — read with the label's one list and one
// metadata list per namespace, as a plan reads them.
func TestMemStackReleasesListTheStacksRecords(t *testing.T) {
	m := newMem(t, webStack(t, ``)+fmt.Sprintf(`
release "api" {
  chart     = %q
  namespace = "back"
}
`, webChart(t)))
	m.deploy()
	otherStack(t, m, false) // the other stack's release web, over ours: its revision 2
	var stats planner.Stats
	view := m.v.For(planner.Reads{Stats: &stats})
	got, err := view.StackReleases(context.Background(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	var newest []string
	for _, k := range slices.SortedFunc(maps.Keys(got), func(a, b release.RecordKey) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	}) {
		last := got[k][len(got[k])-1]
		newest = append(newest, fmt.Sprintf("%s/%s: revision %d %s of stack %s at %s", k.Namespace, k.Name, last.Version, last.Info.Status,
			last.Labels[release.StackLabel], last.Labels[release.AddressLabel]))
	}
	want := []string{
		"back/api: revision 1 deployed of stack shop at release.api",
		"shop/web: revision 2 deployed of stack other at release.web",
	}
	if !slices.Equal(newest, want) {
		t.Errorf("the stack's releases:\n%s\nwant:\n%s", strings.Join(newest, "\n"), strings.Join(want, "\n"))
	}
	keys, err := view.StackRecords(context.Background(), "shop")
	if err != nil || len(keys) != len(got) {
		t.Errorf("StackRecords %v (%v), want the releases StackReleases lists", keys, err)
	}
	if got := recordReads(&stats); got != "2 lists, 0 GETs" {
		t.Errorf("records read with %s, want a metadata list of back and of shop", got)
	}
}
