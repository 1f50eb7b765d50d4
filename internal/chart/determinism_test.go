package chart

import (
	"encoding/json"
	"runtime"
	"sync"
	"testing"
)

// TestDeterminism renders every succeeding corpus case repeatedly, with
// GOMAXPROCS 1 and 2 and from concurrent goroutines sharing one loaded
// chart, and requires identical bytes every time and an unmodified chart.
func TestDeterminism(t *testing.T) {
	for _, c := range loadCases(t) {
		if c.WantError {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			chart := chartPath(t, c)
			want, err := renderCase(c, chart)
			if err != nil {
				t.Fatal(err)
			}
			for _, procs := range []int{1, 2} {
				prev := runtime.GOMAXPROCS(procs)
				for range 3 {
					got, err := renderCase(c, chart)
					if err != nil || got != want {
						runtime.GOMAXPROCS(prev)
						t.Fatalf("GOMAXPROCS=%d: output changed (err %v):\n%s", procs, err, lineDiff(want, got))
					}
				}
				runtime.GOMAXPROCS(prev)
			}
		})
	}
}

func TestConcurrentRendersShareChart(t *testing.T) {
	ch, err := Load("testdata/charts/umbrella")
	if err != nil {
		t.Fatal(err)
	}
	before, err := json.Marshal(ch)
	if err != nil {
		t.Fatal(err)
	}
	opts := RenderOptions{ReleaseName: "r", Namespace: "ns", UserValues: map[string]any{"global": map[string]any{"env": "x"}}}
	first, err := Render(ch, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := first.TemplateOutput(true)
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for range 16 {
		wg.Go(func() {
			r, err := Render(ch, opts)
			if err != nil {
				errs <- err.Error()
				return
			}
			if got := r.TemplateOutput(true); got != want {
				errs <- lineDiff(want, got)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	after, err := json.Marshal(ch)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Error("rendering modified the loaded chart")
	}
}
