package chart

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"testing"
)

// TestReleaseJSONMatchesHelm compares what a release record needs with
// `helm install --dry-run=client -o json`: the processed chart as
// encoding/json marshals it, and the release manifest.
func TestReleaseJSONMatchesHelm(t *testing.T) {
	helm := helmBinary(t)
	for _, name := range []string{"umbrella", "basic", "legacy", "hooks", "schema"} {
		t.Run(name, func(t *testing.T) {
			dir := "testdata/charts/" + name
			cmd := exec.Command(helm, "install", "rel", dir, "--namespace", "ns", "--dry-run=client", "-o", "json")
			cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("helm: %v: %s", err, stderr.String())
			}
			var rel struct {
				Chart    any    `json:"chart"`
				Manifest string `json:"manifest"`
				Hooks    []struct {
					Name, Kind, Path, Manifest string
					Events                     []string `json:"events"`
					Weight                     int      `json:"weight"`
					DeletePolicies             []string `json:"delete_policies"`
				} `json:"hooks"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &rel); err != nil {
				t.Fatal(err)
			}
			ch, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Render(ch, RenderOptions{ReleaseName: "rel", Namespace: "ns"})
			if err != nil {
				t.Fatal(err)
			}
			data, err := json.Marshal(r.Chart)
			if err != nil {
				t.Fatal(err)
			}
			var got any
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, rel.Chart) {
				g, _ := json.MarshalIndent(got, "", " ")
				w, _ := json.MarshalIndent(rel.Chart, "", " ")
				t.Fatalf("chart JSON differs:\n%s", lineDiff(string(w), string(g)))
			}
			if m := r.Manifest(false); m != rel.Manifest {
				t.Fatalf("manifest differs:\n%s", lineDiff(rel.Manifest, m))
			}
			if len(r.Hooks) != len(rel.Hooks) {
				t.Fatalf("%d hooks, helm has %d", len(r.Hooks), len(rel.Hooks))
			}
			for i, h := range rel.Hooks {
				g := r.Hooks[i]
				if g.Name != h.Name || g.Kind != h.Kind || g.Path != h.Path || g.Manifest != h.Manifest || g.Weight != h.Weight ||
					len(g.Events) != len(h.Events) || len(g.DeletePolicies) != len(h.DeletePolicies) {
					t.Errorf("hook %d: %+v, helm %+v", i, g, h)
				}
			}
		})
	}
}
