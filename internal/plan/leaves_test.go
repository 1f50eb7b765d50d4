package plan

import (
	"encoding/json"
	"github.com/convoy-sh/convoy/internal/sensitive"
	"strings"
	"testing"
)

func TestMaskingIsAtTheLeaf(t *testing.T) {
	d := Compare(map[string]any{}, map[string]any{
		"auth":  map[string]any{"user": "admin", "pass": "hunter2-canary", "hosts": []any{"a", "b"}},
		"other": map[string]any{"x": int64(1)},
	})
	MaskValues(d, sensitive.New([]string{"hunter2-canary"}))
	var got []string
	for _, c := range d.Changes {
		b, _ := json.Marshal(c.After)
		got = append(got, c.Path+"="+string(b))
	}
	want := `auth.hosts[0]="a" auth.hosts[1]="b" auth.pass="(sensitive)" auth.user="admin" other={"x":1}`
	if strings.Join(got, " ") != want {
		t.Fatalf("masked changes:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}
