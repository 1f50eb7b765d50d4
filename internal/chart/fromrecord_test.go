package chart

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// TestFromRecordRendersAsTheRecordedChart: a chart rebuilt from what a
// release record keeps of it (the chart JSON of a rendered release, as
// the record stores it) renders the same manifests, hooks and notes with
// the same values, and records as the same chart JSON.
func TestFromRecordRendersAsTheRecordedChart(t *testing.T) {
	user := map[string]any{"extra": "from-user"}
	for _, name := range []string{"basic", "hooks", "schema", "scaffold"} {
		t.Run(name, func(t *testing.T) {
			ch, err := Load("testdata/charts/" + name)
			if err != nil {
				t.Fatal(err)
			}
			opts := RenderOptions{ReleaseName: "rel", Namespace: "ns", UserValues: user}
			want, err := Render(ch, opts)
			if err != nil {
				t.Fatal(err)
			}
			recorded := recordRoundTrip(t, want.Chart)
			rebuilt, err := FromRecord(recorded)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Render(rebuilt, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Manifests, want.Manifests) || got.Notes != want.Notes || len(got.Hooks) != len(want.Hooks) {
				t.Fatalf("the rebuilt chart renders differently:\n got %+v\nwant %+v", got.Manifests, want.Manifests)
			}
			for i := range want.Hooks {
				if got.Hooks[i].Manifest != want.Hooks[i].Manifest {
					t.Fatalf("hook %d differs:\n%s\n%s", i, got.Hooks[i].Manifest, want.Hooks[i].Manifest)
				}
			}
			g, _ := json.Marshal(got.Chart)
			w, _ := json.Marshal(want.Chart)
			if string(g) != string(w) {
				t.Fatalf("the rebuilt chart records differently:\n%s", lineDiff(string(w), string(g)))
			}
		})
	}
}

// A chart with subcharts cannot be rebuilt: the record lacks them.
func TestFromRecordRefusesSubcharts(t *testing.T) {
	ch, err := Load("testdata/charts/umbrella")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Render(ch, RenderOptions{ReleaseName: "rel", Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FromRecord(recordRoundTrip(t, r.Chart)); !errors.Is(err, ErrRecordLacksSubcharts) {
		t.Fatalf("got %v, want ErrRecordLacksSubcharts", err)
	}
	if _, err := FromRecord(nil); err == nil {
		t.Fatal("a record without a chart was rebuilt")
	}
}

// recordRoundTrip is the chart as a release record gives it back: its
// JSON decoded.
func recordRoundTrip(t *testing.T, ch *Chart) *Chart {
	t.Helper()
	b, err := json.Marshal(ch)
	if err != nil {
		t.Fatal(err)
	}
	var out Chart
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}
