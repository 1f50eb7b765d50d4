package config

import (
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/stack/config/sopstest"
)

func TestSopsFile(t *testing.T) {
	key := sopstest.NewKey(t)
	sopstest.UseKeys(t, key)
	files := map[string]string{
		"secrets/prod.enc.yaml": string(sopstest.Encrypt(t, "x.yaml", []byte("db:\n  password: hunter2\nregion_unencrypted: eu\n"), key)),
		"secrets/prod.enc.json": string(sopstest.Encrypt(t, "x.json", []byte(`{"token": "s3cr3t"}`), key)),
		"secrets/prod.env":      string(sopstest.Encrypt(t, "x.env", []byte("API_KEY=abc123\n"), key)),
	}
	if strings.Contains(files["secrets/prod.enc.yaml"], "hunter2") {
		t.Fatal("the test file is not encrypted")
	}
	files["main.hcl"] = `
locals {
  db = yamldecode(sops_file("secrets/prod.enc.yaml")).db
}
release "r" {
  chart  = "./c"
  values = [
    sops_file("secrets/prod.enc.yaml"),
    jsondecode(sops_file("secrets/prod.enc.json")),
    { env = sops_file("secrets/prod.env"), password = local.db.password },
  ]
}
`
	st := mustEvaluate(t, files, EvalOptions{})
	vals := st.Releases[0].Values
	if len(vals) != 3 {
		t.Fatalf("values: %d layers", len(vals))
	}
	for i, l := range vals {
		if !l.Value.ContainsMarked() {
			t.Errorf("layer %d is not sensitive", i)
		}
	}
	y, _ := vals[0].Value.Unmark()
	if !strings.Contains(y.AsString(), "password: hunter2") {
		t.Errorf("yaml: %q", y.AsString())
	}
	j, _ := vals[1].Value.UnmarkDeep()
	if j.GetAttr("token").AsString() != "s3cr3t" {
		t.Errorf("json: %#v", j)
	}
	o, _ := vals[2].Value.UnmarkDeep()
	if o.GetAttr("env").AsString() != "API_KEY=abc123\n" || o.GetAttr("password").AsString() != "hunter2" {
		t.Errorf("dotenv / local: %#v", o)
	}
}

func TestSopsFileErrors(t *testing.T) {
	owner, other := sopstest.NewKey(t), sopstest.NewKey(t)
	enc := string(sopstest.Encrypt(t, "x.yaml", []byte("password: hunter2\nregion_unencrypted: eu\n"), owner))
	stack := `
release "r" {
  chart  = "./c"
  values = [sops_file("secrets/prod.enc.yaml")]
}
`
	tests := []struct {
		name    string
		keys    []sopstest.Key
		content string
		want    []string
	}{
		{"wrong key", []sopstest.Key{other}, enc, []string{"main.hcl:4:24", "cannot decrypt secrets/prod.enc.yaml: no key of its recipients (age: " + owner.Recipient + ") is available"}},
		{"missing key", nil, enc, []string{"main.hcl:4:24", "no key of its recipients (age: " + owner.Recipient + ")"}},
		{"tampered", []sopstest.Key{owner}, strings.Replace(enc, "region_unencrypted: eu", "region_unencrypted: us", 1), []string{"main.hcl:4:24", "cannot decrypt secrets/prod.enc.yaml (recipients age: " + owner.Recipient + "): the MAC does not match"}},
		{"not sops", []sopstest.Key{owner}, "password: hunter2\n", []string{"secrets/prod.enc.yaml is not a SOPS-encrypted file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sopstest.UseKeys(t, tt.keys...)
			_, diags := evaluateSources(t, map[string]string{"main.hcl": stack, "secrets/prod.enc.yaml": tt.content}, EvalOptions{})
			for _, w := range tt.want {
				if !strings.Contains(diags, w) {
					t.Errorf("diagnostics:\n%s\nwant %q", diags, w)
				}
			}
			if strings.Contains(diags, "hunter2") {
				t.Errorf("the secret is in the diagnostics:\n%s", diags)
			}
		})
	}
}

// An evaluation is counted once, and a SOPS file read by several
// expressions is decrypted once per evaluation.
func TestCountsEvaluationsAndDecryptions(t *testing.T) {
	key := sopstest.NewKey(t)
	sopstest.UseKeys(t, key)
	files := map[string]string{
		"s.enc.yaml": string(sopstest.Encrypt(t, "x.yaml", []byte("a: 1\nb: 2\n"), key)),
		"main.hcl": `
release "r" {
  chart  = "./c"
  values = [yamldecode(sops_file("s.enc.yaml")), { b = yamldecode(sops_file("s.enc.yaml")).b }]
}
`,
	}
	before := ReadCounts()
	mustEvaluate(t, files, EvalOptions{})
	mustEvaluate(t, files, EvalOptions{})
	if got := ReadCounts().Sub(before); got != (Counts{Parses: 2, Evaluations: 2, Decryptions: 2}) {
		t.Fatalf("two loads counted as %+v, want 2 parses, 2 evaluations and 2 decryptions", got)
	}
}
