package deploy_test

import (
	"bytes"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/deploy"
	"github.com/convoy-sh/convoy/internal/chart"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The Helm chart installs the same CRD as `convoy controller install`, and
// its Deployment elects leaders in the release namespace, per shard.
func TestChartMatchesTheManifests(t *testing.T) {
	ch, err := chart.Load("chart/convoy-controller")
	if err != nil {
		t.Fatal(err)
	}
	r, err := chart.Render(ch, chart.RenderOptions{ReleaseName: "convoy-a", Namespace: "ops", UserValues: map[string]any{"shard": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	crds := map[string][]byte{}
	for _, c := range r.CRDs {
		crds[path.Base(c.Name)] = c.Data
	}
	if len(r.CRDs) != 3 || !bytes.Equal(crds["convoy.dev_stacks.yaml"], deploy.CRD) || !bytes.Equal(crds["convoy.dev_pipelines.yaml"], deploy.PipelineCRD) ||
		!bytes.Equal(crds["convoy.dev_stacksets.yaml"], deploy.StackSetCRD) {
		t.Fatalf("the chart installs %d CRDs, not the three convoy controller install embeds", len(r.CRDs))
	}
	kinds := map[string]string{}
	for _, m := range r.Manifests {
		kinds[m.Kind] = m.Content
	}
	for _, k := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Deployment"} {
		if kinds[k] == "" {
			t.Errorf("the chart renders no %s", k)
		}
	}
	d := kinds["Deployment"]
	for _, want := range []string{"--leader-elect", "--leader-election-namespace=ops", "--shard=a", "serviceAccountName: convoy-a"} {
		if !strings.Contains(d, want) {
			t.Errorf("the Deployment lacks %q:\n%s", want, d)
		}
	}
	if !strings.Contains(kinds["ClusterRoleBinding"], "namespace: ops") {
		t.Errorf("the binding names another namespace:\n%s", kinds["ClusterRoleBinding"])
	}
}

// renderDeployment renders the chart's Deployment with values.
func renderDeployment(t *testing.T, values map[string]any) *appsv1.Deployment {
	t.Helper()
	ch, err := chart.Load("chart/convoy-controller")
	if err != nil {
		t.Fatal(err)
	}
	r, err := chart.Render(ch, chart.RenderOptions{ReleaseName: "convoy", Namespace: "ops", UserValues: values})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range r.Manifests {
		if m.Kind == "Deployment" {
			var d appsv1.Deployment
			if err := yaml.Unmarshal([]byte(m.Content), &d); err != nil {
				t.Fatal(err)
			}
			return &d
		}
	}
	t.Fatal("the chart renders no Deployment")
	return nil
}

// The chart runs ghcr.io/convoy-sh/convoy:<appVersion> unless the image
// value names another, as non-root with a read-only root file system, its
// cache and /tmp on emptyDirs.
func TestChartImage(t *testing.T) {
	ch, err := chart.Load("chart/convoy-controller")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		values map[string]any
		want   string
	}{
		{nil, deploy.DefaultImage(ch.Metadata.AppVersion)},
		{map[string]any{"image": "127.0.0.1:5000/convoy:test"}, "127.0.0.1:5000/convoy:test"},
		{map[string]any{"image": "registry.example.com/team/convoy@sha256:" + strings.Repeat("ab", 32)}, "registry.example.com/team/convoy@sha256:" + strings.Repeat("ab", 32)},
	} {
		d := renderDeployment(t, tc.values)
		c := d.Spec.Template.Spec.Containers[0]
		if c.Image != tc.want {
			t.Errorf("values %v: image %q, want %q", tc.values, c.Image, tc.want)
		}
		checkHardened(t, "the chart's Deployment", &d.Spec.Template.Spec)
	}
	if got := renderDeployment(t, map[string]any{"imagePullSecrets": []any{"ghcr"}}).Spec.Template.Spec.ImagePullSecrets; len(got) != 1 || got[0].Name != "ghcr" {
		t.Errorf("imagePullSecrets: %v", got)
	}
}

// A value that is no image reference is refused by the chart's schema,
// naming the value, before anything reaches the cluster.
func TestChartRefusesABadImage(t *testing.T) {
	ch, err := chart.Load("chart/convoy-controller")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{"http://registry/convoy:1", "convoy:a b", map[string]any{"tag": "x"}} {
		_, err := chart.Render(ch, chart.RenderOptions{ReleaseName: "convoy", Namespace: "ops", UserValues: map[string]any{"image": v}})
		if err == nil || !strings.Contains(err.Error(), "image") {
			t.Errorf("image %v: err = %v", v, err)
		}
	}
}

// The manifests `convoy controller install` applies: the same hardening,
// and an image placeholder that install replaces.
func TestManifestDeploymentIsHardened(t *testing.T) {
	var d appsv1.Deployment
	if err := yaml.Unmarshal(deploy.Deployment, &d); err != nil {
		t.Fatal(err)
	}
	checkHardened(t, "deploy/deployment.yaml", &d.Spec.Template.Spec)
	if c := d.Spec.Template.Spec.Containers[0]; c.Name != "controller" || !strings.HasPrefix(c.Image, deploy.ImageRepository+":") {
		t.Errorf("deploy/deployment.yaml: container %s image %s", c.Name, c.Image)
	}
}

// checkHardened checks what the image needs to run as built: user 65532,
// no root, a read-only root file system with writable /cache and /tmp.
func checkHardened(t *testing.T, what string, p *corev1.PodSpec) {
	t.Helper()
	sc := p.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != 65532 {
		t.Errorf("%s: pod securityContext %+v: want runAsNonRoot and runAsUser 65532", what, sc)
	}
	c := p.Containers[0]
	if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Errorf("%s: the container's root file system is writable", what)
	}
	if c.SecurityContext == nil || c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
		t.Errorf("%s: privilege escalation allowed", what)
	}
	emptyDirs := map[string]bool{}
	for _, v := range p.Volumes {
		if v.EmptyDir != nil {
			emptyDirs[v.Name] = true
		}
	}
	mounts := map[string]bool{}
	for _, m := range c.VolumeMounts {
		if emptyDirs[m.Name] {
			mounts[m.MountPath] = true
		}
	}
	if !mounts["/cache"] || !mounts["/tmp"] {
		t.Errorf("%s: emptyDir mounts %v: want /cache and /tmp", what, mounts)
	}
	if !slices.Contains(c.Args, "--cache-dir=/cache") {
		t.Errorf("%s: args %v lack --cache-dir=/cache", what, c.Args)
	}
}

// tenancy strict reaches the controller's arguments with its default
// service account, which the chart's schema requires with it; both the
// chart's ClusterRole and deploy/rbac let the controller impersonate.
func TestChartTenancy(t *testing.T) {
	args := renderDeployment(t, map[string]any{"tenancy": "strict", "defaultServiceAccount": "convoy-deployer"}).Spec.Template.Spec.Containers[0].Args
	joined := strings.Join(args, " ")
	for _, want := range []string{"--tenancy=strict", "--default-service-account=convoy-deployer"} {
		if !strings.Contains(joined, want) {
			t.Errorf("args %q lack %s", joined, want)
		}
	}
	ch, err := chart.Load("chart/convoy-controller")
	if err != nil {
		t.Fatal(err)
	}
	_, err = chart.Render(ch, chart.RenderOptions{ReleaseName: "convoy", Namespace: "ops", UserValues: map[string]any{"tenancy": "strict"}})
	if err == nil || !strings.Contains(err.Error(), "defaultServiceAccount") {
		t.Errorf("tenancy strict without defaultServiceAccount: err = %v", err)
	}
	r, err := chart.Render(ch, chart.RenderOptions{ReleaseName: "convoy", Namespace: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	role := "" // the controller's own (roles.yaml has the users' roles)
	for _, m := range r.Manifests {
		if m.Kind == "ClusterRole" && strings.HasSuffix(m.Path, "templates/rbac.yaml") {
			role = m.Content
		}
	}
	for name, text := range map[string]string{"the chart's ClusterRole": role, "deploy/rbac/rbac.yaml": string(deploy.RBAC)} {
		if !strings.Contains(text, `resources: ["serviceaccounts"]`) || !strings.Contains(text, "verbs: [impersonate]") {
			t.Errorf("%s: no impersonate on serviceaccounts", name)
		}
	}
}

// webhookTokenSecret runs the push receiver and its Service, which
// selects the release's pods on the port they name; a value that is not
// NAMESPACE/NAME is refused.
func TestChartWebhook(t *testing.T) {
	d := renderDeployment(t, nil)
	if args := strings.Join(d.Spec.Template.Spec.Containers[0].Args, " "); strings.Contains(args, "--webhook") {
		t.Fatalf("no webhookTokenSecret, yet args %q", args)
	}
	d = renderDeployment(t, map[string]any{"webhookTokenSecret": "ops/convoy-webhook"})
	c := d.Spec.Template.Spec.Containers[0]
	if args := strings.Join(c.Args, " "); !strings.Contains(args, "--webhook-listen=:9292 --webhook-token-secret=ops/convoy-webhook") {
		t.Fatalf("args %q", args)
	}
	ch, err := chart.Load("chart/convoy-controller")
	if err != nil {
		t.Fatal(err)
	}
	r, err := chart.Render(ch, chart.RenderOptions{ReleaseName: "convoy", Namespace: "ops", UserValues: map[string]any{"webhookTokenSecret": "ops/convoy-webhook"}})
	if err != nil {
		t.Fatal(err)
	}
	var svc *corev1.Service
	for _, m := range r.Manifests {
		if m.Kind == "Service" {
			svc = &corev1.Service{}
			if err := yaml.Unmarshal([]byte(m.Content), svc); err != nil {
				t.Fatal(err)
			}
		}
	}
	if svc == nil || svc.Name != "convoy-webhook" || svc.Namespace != "ops" {
		t.Fatalf("Service %+v", svc)
	}
	for k, v := range svc.Spec.Selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("the Service selects %s=%s, the pods are %v", k, v, d.Spec.Template.Labels)
		}
	}
	named := false
	for _, p := range c.Ports {
		named = named || p.Name == svc.Spec.Ports[0].TargetPort.StrVal && p.ContainerPort == deploy.WebhookPort
	}
	if !named || svc.Spec.Ports[0].Port != deploy.WebhookPort {
		t.Errorf("the Service's port %+v is not the container's %+v", svc.Spec.Ports, c.Ports)
	}
	for _, bad := range []string{"convoy-webhook", "ops/", "Ops/x"} {
		if _, err := chart.Render(ch, chart.RenderOptions{ReleaseName: "convoy", Namespace: "ops", UserValues: map[string]any{"webhookTokenSecret": bad}}); err == nil || !strings.Contains(err.Error(), "webhookTokenSecret") {
			t.Errorf("webhookTokenSecret %q: err = %v", bad, err)
		}
	}
	// Without the value there is no Service.
	r, err = chart.Render(ch, chart.RenderOptions{ReleaseName: "convoy", Namespace: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range r.Manifests {
		if m.Kind == "Service" {
			t.Errorf("no webhookTokenSecret, yet a Service:\n%s", m.Content)
		}
	}
}
