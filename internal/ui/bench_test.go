package ui

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/stack/addrs"
)

// The goals: the Stacks page of 1,000 Stacks in ≤ 300 ms of server
// time, a Stack page with a 100-release plan in ≤ 200 ms (the backend's
// reads are one list, resp. the plan Secret, measured apart).

func BenchmarkStacksPage1000(b *testing.B) {
	f := &fakeBackend{}
	for i := range 1000 {
		st := stack(fmt.Sprintf("team-%d", i%20), fmt.Sprintf("stack-%04d", i), "True", "Applied", map[string]string{"team": fmt.Sprint(i % 20)})
		f.stacks = append(f.stacks, st)
	}
	benchPage(b, f, "/stacks")
}

func BenchmarkStackPage100Releases(b *testing.B) {
	p := samplePlan()
	tmpl := p.Releases[1] // api-eu: an upgrade with object diffs and drift
	p.Releases = nil
	for i := range 100 {
		r := *tmpl
		r.Addr = plan.InstanceAddr(addrs.Release{Name: fmt.Sprintf("r%03d", i)}.Instance(addrs.NoKey))
		r.Name = fmt.Sprintf("r%03d", i)
		if i > 0 {
			r.DependsOn = []addrs.ReleaseInstance{addrs.Release{Name: fmt.Sprintf("r%03d", i/2)}.Instance(addrs.NoKey)}
		}
		p.Releases = append(p.Releases, &r)
	}
	benchPage(b, &fakeBackend{stacks: []v1alpha1.Stack{stack("shop", "web", "False", "ApprovalRequired", nil)}, plan: p}, "/stacks/shop/web")
}

func benchPage(b *testing.B, f *fakeBackend, path string) {
	s, err := New(Options{Backend: f, Token: "t"})
	if err != nil {
		b.Fatal(err)
	}
	h := s.Handler()
	req := httptest.NewRequest("GET", path, nil)
	req.AddCookie(&http.Cookie{Name: s.cookieName(), Value: "t"})
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("%d: %s", w.Code, w.Body)
		}
		b.SetBytes(int64(w.Body.Len()))
		_, _ = io.Discard.Write(w.Body.Bytes())
	}
}

// BenchmarkStackSetPage200 is the StackSet page of the scale: 200
// generated Stacks in four steps, each read live (the one list request is
// the backend's, measured apart).
func BenchmarkStackSetPage200(b *testing.B) {
	ss := haltedSet()
	ss.Status.Stacks = nil
	ss.Status.Plans = []v1alpha1.PlanGroup{{Plan: "1 to install, 0 to upgrade, 0 to uninstall, 0 unchanged (install release.api)"}, {Plan: "no changes"}}
	ss.Spec.Strategy.Rolling.Steps = append(ss.Spec.Strategy.Rolling.Steps, v1alpha1.RolloutStep{Name: "last"})
	f := &fakeBackend{}
	steps := []string{"canary", "eu", "step-3", "last"}
	for i := range 200 {
		name := fmt.Sprintf("web-c%03d", i)
		ss.Status.Stacks = append(ss.Status.Stacks, v1alpha1.StackSetStack{Name: name, Element: fmt.Sprintf("c%03d", i), Cluster: fmt.Sprintf("fleet/c%03d", i), Step: steps[min(i/10, 3)], State: "Ready"})
		ss.Status.Plans[i%2].Stacks = append(ss.Status.Plans[i%2].Stacks, name)
		st := stack("fleet", name, "True", "Applied", map[string]string{v1alpha1.StackSetLabel: "web"})
		f.stacks = append(f.stacks, st)
	}
	f.stacksets = []v1alpha1.StackSet{ss}
	benchPage(b, f, "/stacksets/fleet/web")
}
