package release

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/chart"
)

func rec(name string, version int, status Status) *Release {
	return &Release{
		Name: name, Namespace: "ns", Version: version,
		Info:   &Info{Status: status, LastDeployed: time.Unix(1700000000, 0).UTC()},
		Config: map[string]any{"replicas": float64(version)},
	}
}

func versions(rs []*Release) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.Version)
	}
	return out
}

func TestHistoryLastDeployed(t *testing.T) {
	ctx := context.Background()
	s := &Storage{Driver: NewMemory()}
	for _, r := range []*Release{rec("api", 2, StatusDeployed), rec("api", 1, StatusSuperseded), rec("api", 3, StatusFailed), rec("web", 1, StatusDeployed)} {
		if err := s.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	h, err := s.History(ctx, "api")
	if err != nil || !reflect.DeepEqual(versions(h), []int{1, 2, 3}) {
		t.Fatalf("history %v, %v", versions(h), err)
	}
	last, _ := s.Last(ctx, "api")
	dep, _ := s.Deployed(ctx, "api")
	if last.Version != 3 || dep.Version != 2 {
		t.Fatalf("last %d deployed %d, want 3 and 2", last.Version, dep.Version)
	}
	if _, err := s.Last(ctx, "nope"); !errors.Is(err, ErrReleaseNotFound) {
		t.Fatalf("Last of unknown release: %v", err)
	}
	if err := s.Create(ctx, rec("api", 3, StatusFailed)); !errors.Is(err, ErrReleaseExists) {
		t.Fatalf("creating an existing revision: %v, want ErrReleaseExists", err)
	}
}

func TestPruneNeverDeletesTheDeployedRevision(t *testing.T) {
	tests := []struct {
		name     string
		statuses []Status
		max      int
		want     []int
	}{
		{"under the limit", []Status{StatusSuperseded, StatusDeployed}, 5, []int{1, 2}},
		{"oldest go first", []Status{StatusSuperseded, StatusSuperseded, StatusSuperseded, StatusDeployed}, 2, []int{3, 4}},
		{"deployed kept although old", []Status{StatusSuperseded, StatusDeployed, StatusFailed, StatusFailed}, 2, []int{2, 4}},
		{"zero keeps all", []Status{StatusSuperseded, StatusSuperseded, StatusDeployed}, 0, []int{1, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s := &Storage{Driver: NewMemory()}
			for i, st := range tt.statuses {
				if err := s.Create(ctx, rec("api", i+1, st)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Prune(ctx, "api", tt.max); err != nil {
				t.Fatal(err)
			}
			h, _ := s.History(ctx, "api")
			if got := versions(h); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("kept %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRecordLabels(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	s := &Storage{Driver: m}
	r := rec("api", 1, StatusPendingInstall)
	r.Labels = map[string]string{"convoy.dev/stack": "shop", "status": "forged", "owner": "me"}
	if err := s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	l := maps.Clone(m.records[recordKey("api", 1)].labels)
	want := map[string]string{"convoy.dev/stack": "shop", "name": "api", "owner": "helm", "status": "pending-install", "version": "1"}
	created := l["createdAt"]
	delete(l, "createdAt")
	if !reflect.DeepEqual(l, want) || created == "" {
		t.Fatalf("labels %v createdAt %q", l, created)
	}
	got, _ := s.Get(ctx, "api", 1)
	if !reflect.DeepEqual(got.Labels, map[string]string{"convoy.dev/stack": "shop"}) {
		t.Fatalf("custom labels read back as %v", got.Labels)
	}
	got.Info.Status = StatusDeployed
	if err := s.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	l = m.records[recordKey("api", 1)].labels
	if l["createdAt"] != created || l["modifiedAt"] == "" || l["status"] != "deployed" || l["convoy.dev/stack"] != "shop" {
		t.Fatalf("labels after update: %v", l)
	}
}

func TestRecordKeyIsHelms(t *testing.T) {
	if got := recordKey("my-api", 12); got != "sh.helm.release.v1.my-api.v12" {
		t.Fatal(got)
	}
}

func TestEncodeIsBase64GzipJSONWithHelmFieldNames(t *testing.T) {
	r := rec("api", 3, StatusDeployed)
	r.Manifest = "---\n# Source: c/templates/cm.yaml\nkind: ConfigMap\n"
	r.Hooks = []*Hook{{Name: "migrate", Kind: "Job", Path: "c/templates/job.yaml", Events: []chart.HookEvent{chart.HookPreInstall}, Weight: -5}}
	r.ApplyMethod = ApplyMethodSSA
	payload, err := encode(r)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(payload)
	if err != nil || !bytes.HasPrefix(raw, gzipMagic) {
		t.Fatalf("payload is not base64 of gzip: %v", err)
	}
	zr, _ := gzip.NewReader(bytes.NewReader(raw))
	var doc map[string]any
	if err := json.NewDecoder(zr).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"name", "info", "config", "manifest", "hooks", "version", "namespace", "apply_method"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("record JSON lacks %q: %v", k, doc)
		}
	}
	hook := doc["hooks"].([]any)[0].(map[string]any)
	if hook["last_run"] == nil || hook["weight"] != float64(-5) || hook["events"].([]any)[0] != "pre-install" {
		t.Errorf("hook JSON %v", hook)
	}
	info := doc["info"].(map[string]any)
	if info["status"] != "deployed" || info["last_deployed"] != "2023-11-14T22:13:20Z" {
		t.Errorf("info JSON %v", info)
	}
	back, err := decode(payload)
	if err != nil || back.Version != 3 || back.Hooks[0].Weight != -5 || back.Config["replicas"] != float64(3) {
		t.Fatalf("round trip: %+v %v", back, err)
	}
}

func TestDecodeAcceptsHelmQuirksAndRejectsGarbage(t *testing.T) {
	// Older Helm wrote empty strings for unset times, and plain JSON
	// without gzip is accepted, as by Helm.
	plain := base64.StdEncoding.EncodeToString([]byte(`{"name":"x","version":1,"info":{"status":"deployed","deleted":"","first_deployed":""},"hooks":[{"name":"h","last_run":{"started_at":"","phase":""}}]}`))
	r, err := decode(plain)
	if err != nil || r.Info.Status != StatusDeployed || !r.Info.Deleted.IsZero() {
		t.Fatalf("decode of helm-quirk record: %+v %v", r, err)
	}
	for name, payload := range map[string]string{
		"not base64":     "%%%",
		"truncated gzip": base64.StdEncoding.EncodeToString(append(append([]byte{}, gzipMagic...), 0, 0, 0)),
		"not json":       base64.StdEncoding.EncodeToString([]byte("not json")),
		"json of a list": base64.StdEncoding.EncodeToString([]byte("[1,2]")),
	} {
		if _, err := decode(payload); err == nil || !strings.Contains(err.Error(), "decode release payload") {
			t.Errorf("%s: err %v", name, err)
		}
	}
}
