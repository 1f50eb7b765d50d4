package stack_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A stack's errors name stack.hcl as the user wrote it, not the
// controller's cache path (…/stacks/sha256-…/tree/stack/stack.hcl).
func TestConditionsNameTheStackFileNotTheCache(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	dir := stackDir(t, ns, "v1", `set = { extra = tonumber("abc") }`)
	push(t, reg, dir, "v1")
	hcl, err := os.ReadFile(filepath.Join(dir, "stack.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	typed := strings.Replace(strings.Replace(string(hcl), `set = { extra = tonumber("abc") }`, "", 1),
		"variable \"token\" {", "variable \"replicas\" {\n  type = number\n}\nvariable \"token\" {", 1)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(typed), 0o644); err != nil {
		t.Fatal(err)
	}
	push(t, reg, dir, "v2")
	create(t, c, newStack(ns, "eval", "oci://"+reg.Host+"/stacks/app:v1", nil))
	create(t, c, newStack(ns, "vars", "oci://"+reg.Host+"/stacks/app:v2", func(st *v1alpha1.Stack) {
		st.Spec.Vars = map[string]string{"replicas": "many"}
	}))
	cacheDir := t.TempDir()
	runController(t, ns, cacheDir)
	for _, name := range []string{"eval", "vars"} {
		st := waitStack(t, c, ns, name, 60*time.Second, "Stalled", isCond("Stalled", metav1.ConditionTrue, ""))
		t.Logf("%s: %s", name, st.Status.LastError)
		for _, msg := range []string{st.Status.LastError, cond(st, "Ready").Message, cond(st, "Stalled").Message} {
			if strings.Contains(msg, cacheDir) || strings.Contains(msg, "/tree/") || !strings.Contains(msg, "stack.hcl") {
				t.Errorf("Stack %s: want stack.hcl, not the cache path:\n%s", name, msg)
			}
		}
	}
}
