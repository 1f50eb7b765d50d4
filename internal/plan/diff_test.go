package plan

import (
	"encoding/json"
	"github.com/convoy-sh/convoy/internal/sensitive"
	"slices"
	"strings"
	"testing"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func paths(d *Diff) []string {
	if d == nil {
		return nil
	}
	var out []string
	for _, c := range d.Changes {
		out = append(out, map[FieldOp]string{FieldAdd: "+", FieldRemove: "-", FieldChange: "~"}[c.Op]+" "+c.Path)
	}
	return out
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name          string
		before, after string
		want          []string
	}{
		{"equal", `{"a":1}`, `{"a":1}`, nil},
		{"scalar change", `{"spec":{"replicas":2}}`, `{"spec":{"replicas":3}}`, []string{"~ spec.replicas"}},
		{"add and remove keys", `{"a":1,"b":2}`, `{"b":2,"c":3}`, []string{"- a", "+ c"}},
		{"odd keys are quoted", `{"data":{"app.conf":"x"}}`, `{"data":{"app.conf":"y"}}`, []string{`~ data["app.conf"]`}},
		{
			"containers by name, not position",
			`{"containers":[{"name":"a","image":"a:1"},{"name":"b","image":"b:1"}]}`,
			`{"containers":[{"name":"b","image":"b:2"},{"name":"a","image":"a:1"}]}`,
			[]string{"~ containers[name=b].image"},
		},
		{
			"env entry added by name",
			`{"env":[{"name":"A","value":"1"}]}`,
			`{"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]}`,
			[]string{"+ env[name=B]"},
		},
		{
			"ports by number",
			`{"ports":[{"containerPort":80,"protocol":"TCP"},{"containerPort":443,"protocol":"TCP"}]}`,
			`{"ports":[{"containerPort":443,"protocol":"UDP"}]}`,
			[]string{"- ports[containerPort=80]", "~ ports[containerPort=443].protocol"},
		},
		{"scalar lists by index", `{"args":["a","b"]}`, `{"args":["a","c"]}`, []string{"~ args[1]"}},
		{"scalar lists of other length whole", `{"args":["a"]}`, `{"args":["a","c"]}`, []string{"~ args"}},
		{"int equals float", `{"n":3}`, `{"n":3.0}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := paths(Compare(decode(t, tt.before), decode(t, tt.after)))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCompareMultilineStringIsUnifiedDiff(t *testing.T) {
	before := map[string]any{"conf": "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"}
	after := map[string]any{"conf": "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\n"}
	d := Compare(before, after)
	if len(d.Changes) != 1 {
		t.Fatalf("changes: %v", paths(d))
	}
	got := strings.Join(d.Changes[0].Lines, "\n")
	want := strings.Join([]string{"@@ 1 unchanged lines @@", " b", " c", " d", "-e", "+E", " f", " g", " h", "@@ 2 unchanged lines @@"}, "\n")
	if got != want {
		t.Fatalf("lines:\n%s\nwant:\n%s", got, want)
	}
}

func TestMask(t *testing.T) {
	red := sensitive.New([]string{"hunter22", "x"})
	d := Compare(
		decode(t, `{"data":{"password":"b2xk"},"url":"postgres://u:old@db","plain":"w","other":"keep","flag":"y"}`),
		decode(t, `{"data":{"password":"bmV3"},"url":"postgres://u:hunter22@db","plain":"z","other":"keep2","flag":"x"}`),
	)
	MaskDiff(d, red, "data")
	want := map[string]bool{"data.password": true, "url": true, "plain": false, "other": false, "flag": true}
	for _, c := range d.Changes {
		if c.Sensitive != want[c.Path] {
			t.Errorf("%s: sensitive %v, want %v", c.Path, c.Sensitive, want[c.Path])
		}
		if c.Sensitive && (c.Before != SensitivePlaceholder || c.After != SensitivePlaceholder) {
			t.Errorf("%s not masked: %v → %v", c.Path, c.Before, c.After)
		}
	}
	// Text redaction: the value and its base64 form; short values only as
	// whole values.
	got := red.Text("pw=hunter22 b64=aHVudGVyMjI= x")
	if got != "pw=(sensitive) b64=(sensitive) x" {
		t.Fatalf("redacted: %q", got)
	}
	got2 := red.Value(map[string]any{"hunter22": []any{"say hunter22", "x"}})
	if want := map[string]any{"hunter22": []any{"say (sensitive)", "(sensitive)"}}; !EqualJSON(got2, want) {
		t.Fatalf("value: %v", got2)
	}
}

type errTest string

func (e errTest) Error() string { return "failed with " + string(e) }

func TestSummary(t *testing.T) {
	p := &Plan{Releases: []*ReleaseChange{
		{Action: ActionInstall}, {Action: ActionInstall}, {Action: ActionUpgrade, Drift: []*ObjectDrift{{}}},
		{Action: ActionNoOp}, {Action: ActionNoOp}, {Action: ActionNoOp}, {Action: ActionNoOp},
	}}
	want := "Plan: 2 to install, 1 to upgrade, 0 to uninstall, 4 unchanged. Drift: 1 object."
	if got := p.Summary().String(); got != want {
		t.Fatalf("%q", got)
	}
	if !p.HasChanges() || (&Plan{Releases: []*ReleaseChange{{Action: ActionNoOp}}}).HasChanges() {
		t.Fatal("HasChanges")
	}
}

func TestMaskValuesByName(t *testing.T) {
	d := Compare(decode(t, `{"db":{"password":"old"},"apiToken":"t","replicas":1}`), decode(t, `{"db":{},"replicas":2}`))
	MaskValues(d, sensitive.New())
	for _, c := range d.Changes {
		if want := c.Path != "replicas"; c.Sensitive != want {
			t.Errorf("%s: sensitive %v", c.Path, c.Sensitive)
		}
	}
}
