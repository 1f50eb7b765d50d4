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
