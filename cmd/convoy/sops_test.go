package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/stack/config/sopstest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSopsSecret decrypts a SOPS/age file in the stack into a release's
// values: the password reaches the Secret object and no output (plan text
// and JSON, apply) shows it; a tampered file is refused at the sops_file call.
func TestSopsSecret(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	key := sopstest.NewKey(t)
	sopstest.UseKeys(t, key)
	const password = "s0ps-hunter2-secret"
	chart, err := filepath.Abs(filepath.Join("..", "..", "internal", "plan", "planner", "testdata", "charts", "vault"))
	if err != nil {
		t.Fatal(err)
	}
	dir := writeStack(t, fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "vault" {
  chart  = %[1]q
  wait   = false
  values = [sops_file("secrets/prod.enc.yaml"), { user = "app", replicas = 1 }]
}
`, chart, ns))
	if err := os.MkdirAll(filepath.Join(dir, "secrets"), 0o755); err != nil {
		t.Fatal(err)
	}
	enc := sopstest.Encrypt(t, "x.yaml", []byte("password: "+password+"\nregion_unencrypted: eu\n"), key)
	encPath := filepath.Join(dir, "secrets", "prod.enc.yaml")
	if err := os.WriteFile(encPath, enc, 0o600); err != nil {
		t.Fatal(err)
	}
	leaks := func(what, out string) {
		t.Helper()
		for _, s := range []string{password, base64.StdEncoding.EncodeToString([]byte(password))} {
			if strings.Contains(out, s) {
				t.Errorf("%s shows the secret %q:\n%s", what, s, out)
			}
		}
	}

	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc)
	if code != 0 || !strings.Contains(out, "password: (sensitive)") {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	leaks("plan", out+errOut)
	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--json")
	if code != 0 {
		t.Fatalf("plan --json: exit %d\n%s", code, errOut)
	}
	leaks("plan --json", out+errOut)
	code, out, errOut = runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve")
	if code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	leaks("apply", out+errOut)
	sec, err := cluster.Client().CoreV1().Secrets(ns).Get(context.Background(), "vault-auth", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(sec.Data["password"]); got != password {
		t.Errorf("Secret password %q, want the decrypted one", got)
	}

	// A file altered after encryption (its MAC no longer matches) is refused.
	tampered := strings.Replace(string(enc), "region_unencrypted: eu", "region_unencrypted: us", 1)
	if err := os.WriteFile(encPath, []byte(tampered), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc)
	if code != 1 || !strings.Contains(errOut, "cannot decrypt secrets/prod.enc.yaml (recipients age:") ||
		!strings.Contains(errOut, key.Recipient) || !strings.Contains(errOut, "the MAC does not match") ||
		!strings.Contains(errOut, "stack.hcl line 8") {
		t.Fatalf("plan with a tampered file: exit %d\n%s\n%s", code, out, errOut)
	}
	leaks("the tampered plan", out+errOut)
}
