package deploy_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var cluster = devtest.New()

func TestMain(m *testing.M) { os.Exit(cluster.Run(m)) }

// helm lint (the oracle, helm v4) passes with the default values and with
// an image of one's own.
func TestChartLint(t *testing.T) {
	helm := devtest.HelmBinary(t)
	for _, args := range [][]string{nil, {"--set", "image=127.0.0.1:5000/convoy:test", "--set", "shard=a"}} {
		if out, err := runHelm(t, helm, append([]string{"lint", "--strict", "chart/convoy-controller"}, args...)...); err != nil {
			t.Errorf("helm lint %v: %v\n%s", args, err, out)
		}
	}
}

// `helm install` of the chart on the devcluster, with an image of one's
// own: the Deployment runs that image in the release namespace under the
// release's ServiceAccount, bound to its ClusterRole, and the Stack CRD
// is established. (The devcluster's nodes are fake: the pods are never
// run; docs/controller-image.md says how to run it on a real cluster.)
func TestChartHelmInstall(t *testing.T) {
	ns := cluster.Namespace(t)
	rel := "convoy-" + ns[len(ns)-6:] // the ClusterRole is named after it: one per test run
	const image = "127.0.0.1:5000/convoy:test"
	install := []string{"install", rel, "chart/convoy-controller", "--namespace", ns, "--set", "image=" + image, "--set", "shard=a"}
	if crdsInstalledByConvoy(t) {
		// Other packages' tests on this cluster install the CRDs with
		// `convoy controller install --min-interval 1s`: helm's
		// server-side apply of the chart's crds/ (1m) would conflict with
		// that field manager. The CRDs are cluster-wide; leave them be.
		install = append(install, "--skip-crds")
	}
	out, err := cluster.Helm(t, install...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = cluster.Helm(t, "uninstall", rel, "--namespace", ns) })
	ctx := context.Background()
	c := cluster.Client()

	d, err := c.AppsV1().Deployments(ns).Get(ctx, rel, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := d.Spec.Template.Spec
	if got := spec.Containers[0].Image; got != image {
		t.Errorf("apps/v1 Deployment %s/%s runs %q, want %q", ns, rel, got, image)
	}
	if spec.ServiceAccountName != rel {
		t.Errorf("apps/v1 Deployment %s/%s runs as ServiceAccount %q", ns, rel, spec.ServiceAccountName)
	}
	args := strings.Join(spec.Containers[0].Args, " ")
	for _, want := range []string{"--leader-elect", "--leader-election-namespace=" + ns, "--shard=a", "--cache-dir=/cache"} {
		if !strings.Contains(args, want) {
			t.Errorf("apps/v1 Deployment %s/%s: args %q lack %s", ns, rel, args, want)
		}
	}
	checkHardened(t, "apps/v1 Deployment "+ns+"/"+rel, &spec)

	if _, err := c.CoreV1().ServiceAccounts(ns).Get(ctx, rel, metav1.GetOptions{}); err != nil {
		t.Errorf("v1 ServiceAccount %s/%s: %v", ns, rel, err)
	}
	role, err := c.RbacV1().ClusterRoles().Get(ctx, rel, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("rbac.authorization.k8s.io/v1 ClusterRole %s: %v", rel, err)
	}
	stacks := false
	for _, r := range role.Rules {
		stacks = stacks || (strings.Join(r.APIGroups, ",") == "convoy.dev" && strings.Contains(strings.Join(r.Resources, ","), "stacks/status"))
	}
	if !stacks {
		t.Errorf("rbac.authorization.k8s.io/v1 ClusterRole %s grants nothing on stacks/status: %+v", rel, role.Rules)
	}
	b, err := c.RbacV1().ClusterRoleBindings().Get(ctx, rel, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("rbac.authorization.k8s.io/v1 ClusterRoleBinding %s: %v", rel, err)
	}
	if b.RoleRef.Name != rel || len(b.Subjects) != 1 || b.Subjects[0].Name != rel || b.Subjects[0].Namespace != ns {
		t.Errorf("rbac.authorization.k8s.io/v1 ClusterRoleBinding %s binds %+v to %+v", rel, b.RoleRef, b.Subjects)
	}

	// The approval policy and the user roles, named after the release.
	if _, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, rel+"-stack-approval", metav1.GetOptions{}); err != nil {
		t.Errorf("admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy %s-stack-approval: %v", rel, err)
	}
	if _, err := c.RbacV1().ClusterRoles().Get(ctx, rel+"-approver", metav1.GetOptions{}); err != nil {
		t.Errorf("rbac.authorization.k8s.io/v1 ClusterRole %s-approver: %v", rel, err)
	}

	ext, err := apiextensionsclient.NewForConfig(cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	// helm creates the CRD (or leaves the one there), and does not wait.
	var getErr error
	devtest.Eventually(t, 30*time.Second, func() bool {
		crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "stacks.convoy.dev", metav1.GetOptions{})
		getErr = err
		return err == nil && established(crd)
	}, func() string {
		return fmt.Sprintf("apiextensions.k8s.io/v1 CustomResourceDefinition stacks.convoy.dev not established after 30s: %v", getErr)
	})
}

// crdsInstalledByConvoy says whether the Stack CRD exists, applied by
// `convoy controller install`.
func crdsInstalledByConvoy(t *testing.T) bool {
	ext, err := apiextensionsclient.NewForConfig(cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), "stacks.convoy.dev", metav1.GetOptions{})
	if err != nil {
		return false
	}
	for _, m := range crd.ManagedFields {
		if m.Manager == "convoy" {
			return true
		}
	}
	return false
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

func runHelm(t *testing.T, helm string, args ...string) (string, error) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(helm, args...)
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+home+"/config", "HELM_CACHE_HOME="+home+"/cache", "HELM_DATA_HOME="+home+"/data")
	out, err := cmd.CombinedOutput()
	return string(out), err
}
