package stack_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A registry with htpasswd auth holds the stack artifact and its OCI
// chart: a Stack without spec.sourceSecretRef fails saying it needs one;
// with a docker-registry Secret of the right credentials it is applied;
// with wrong ones it says they are refused. The password never shows.
func TestSourceSecretRef(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	const user, pass = "deployer", "s3cret-pa55word"
	reg := sourcetest.StartRegistry(t, user, pass)
	charts := t.TempDir()
	reg.Push(t, sourcetest.Package(t, charts, "api", "1.0.0"), "charts")
	dir := filepath.Join(t.TempDir(), "stack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	hcl := fmt.Sprintf("stack %[1]q {\n  default_namespace = %[1]q\n}\nrelease \"api\" {\n  chart   = \"oci://%[2]s/charts/api\"\n  version = \"^1.0\"\n}\n", ns, reg.Host)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	res := &source.Resolver{Cache: source.Cache{Dir: t.TempDir()}}
	if _, err := runInit(context.Background(), run.Options{Source: run.Source{Dir: dir}, ChartCache: res.Cache.Dir},
		run.InitRequest{Resolver: &source.Resolver{Cache: res.Cache, RegistryConfigs: []string{dockerConfig(t, reg.Host, user, pass)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := artifact.Push(context.Background(), artifact.Registry{Username: user, Password: pass}, dir, "oci://"+reg.Host+"/stacks/app:v1"); err != nil {
		t.Fatal(err)
	}
	src := "oci://" + reg.Host + "/stacks/app:v1"
	create(t, c, newStack(ns, "anonymous", src, nil))
	create(t, c, dockerSecret(ns, "wrong", reg.Host, user, "not-it"))
	create(t, c, newStack(ns, "wrong", src, func(st *v1alpha1.Stack) {
		st.Spec.SourceSecretRef = &v1alpha1.LocalObjectReference{Name: "wrong"}
	}))
	create(t, c, dockerSecret(ns, "pull", reg.Host, user, pass))
	create(t, c, newStack(ns, "shop", src, func(st *v1alpha1.Stack) {
		st.Spec.SourceSecretRef = &v1alpha1.LocalObjectReference{Name: "pull"}
	}))
	startController(t, ns, nil)

	st := waitStack(t, c, ns, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	if revisionsOf(st) != "api:1:deployed" {
		t.Fatalf("with the Secret:%s", describe(st))
	}
	st = waitStack(t, c, ns, "anonymous", 60*time.Second, "SourceFailed", isCond("Ready", metav1.ConditionFalse, "SourceFailed"))
	if !strings.Contains(st.Status.LastError, "set spec.sourceSecretRef") {
		t.Errorf("without the Secret, lastError %q does not say to set spec.sourceSecretRef", st.Status.LastError)
	}
	st = waitStack(t, c, ns, "wrong", 60*time.Second, "SourceFailed", isCond("Ready", metav1.ConditionFalse, "SourceFailed"))
	if !strings.Contains(st.Status.LastError, "refuses the credentials of spec.sourceSecretRef, v1 Secret "+ns+"/wrong") {
		t.Errorf("with wrong credentials, lastError %q", st.Status.LastError)
	}
	for _, name := range []string{"shop", "anonymous", "wrong"} {
		if s := describe(getStack(t, c, ns, name)); strings.Contains(s, pass) || strings.Contains(s, "not-it") {
			t.Errorf("Stack %s shows a password:%s", name, s)
		}
	}

	// A Secret of another type is named as such.
	create(t, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "opaque", Namespace: ns}, StringData: map[string]string{"password": pass}})
	create(t, c, newStack(ns, "opaque", src, func(st *v1alpha1.Stack) {
		st.Spec.SourceSecretRef = &v1alpha1.LocalObjectReference{Name: "opaque"}
	}))
	st = waitStack(t, c, ns, "opaque", 60*time.Second, "Stalled", isCond("Stalled", metav1.ConditionTrue, "Invalid"))
	if want := `v1 Secret ` + ns + `/opaque is of type "Opaque", want kubernetes.io/dockerconfigjson`; !strings.Contains(st.Status.LastError, want) {
		t.Errorf("lastError %q, want %q", st.Status.LastError, want)
	}
}
