package config

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func evalInline(t *testing.T, src string) (*Stack, string, []string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := LoadDir(dir)
	var st *Stack
	if !diags.HasErrors() {
		var d = diags
		st, d = Evaluate(context.Background(), cfg, EvalOptions{Variables: EnvVarValues(testEnv)})
		diags = append(diags, d...)
	}
	var out []string
	for _, d := range diags {
		at := ""
		if d.Subject != nil {
			at = fmt.Sprintf("%d:%d ", d.Subject.Start.Line, d.Subject.Start.Column)
		}
		out = append(out, at+d.Summary+": "+d.Detail)
	}
	return st, dir, out
}

func TestRepositoryBlockAuthAndTLS(t *testing.T) {
	st, dir, diags := evalInline(t, `
variable "token" {
  sensitive = true
  default   = "s3cret"
}
repository "internal" {
  url                      = "https://charts.internal.example"
  bearer_token             = var.token
  ca_file                  = "certs/ca.pem"
  cert_file                = "/etc/convoy/client.pem"
  key_file                 = "certs/client-key.pem"
  insecure_skip_tls_verify = true
}
release "web" {
  chart   = "internal/web"
  version = "^1.2.0"
}
`)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	r := st.Repositories["internal"]
	if tok, _ := r.BearerToken.Unmark(); !r.BearerToken.HasMark(Sensitive) || tok.AsString() != "s3cret" {
		t.Errorf("bearer_token %#v is not the sensitive token", r.BearerToken)
	}
	if r.CAFile != filepath.Join(dir, "certs/ca.pem") || r.CertFile != "/etc/convoy/client.pem" || r.KeyFile != filepath.Join(dir, "certs/client-key.pem") || !r.InsecureSkipTLSVerify {
		t.Errorf("spec %+v", r)
	}
	if st.Releases[0].Repository != r {
		t.Errorf("release does not use the repository")
	}
}

func TestRepositoryBlockDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"token and password", `username = "u"
  password = "p"
  bearer_token = "t"`, "4:18 Conflicting repository credentials"},
		{"cert without key", `cert_file = "c.pem"`, "2:15 Incomplete client certificate"},
		{"key without cert", `key_file = "k.pem"`, "2:14 Incomplete client certificate"},
		{"insecure not bool", `insecure_skip_tls_verify = "maybe"`, `2:30 Incorrect attribute value type: Inappropriate value for attribute "insecure_skip_tls_verify": bool required`},
		{"unknown attribute", `token = "t"`, `2:3 Unsupported argument: An argument named "token" is not expected here`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, diags := evalInline(t, fmt.Sprintf("repository \"r\" {\n  %s\n  url = \"https://example.com\"\n}\n", tc.body))
			for _, d := range diags {
				if strings.HasPrefix(d, tc.want) {
					return
				}
			}
			t.Fatalf("no diagnostic %q in %q", tc.want, diags)
		})
	}
}
