package ctl

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/deploy"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// The CRDs refuse intervals under 1m; installed with another minimum,
// the rule and its message say that one.
func TestCRDIntervalMinimum(t *testing.T) {
	for name, crd := range map[string][]byte{"stacks": deploy.CRD, "pipelines": deploy.PipelineCRD} {
		decode := func() *unstructured.Unstructured {
			objs, err := decodeAll(crd)
			if err != nil || len(objs) != 1 {
				t.Fatalf("%s: %d objects, %v", name, len(objs), err)
			}
			return objs[0]
		}
		rules := func(u *unstructured.Unstructured) string {
			var out []string
			var walk func(v any)
			walk = func(v any) {
				switch v := v.(type) {
				case map[string]any:
					if rs, ok := v["x-kubernetes-validations"].([]any); ok {
						for _, r := range rs {
							r := r.(map[string]any)
							out = append(out, fmt.Sprint(r["rule"], " ", r["message"]))
						}
					}
					for _, e := range v {
						walk(e)
					}
				case []any:
					for _, e := range v {
						walk(e)
					}
				}
			}
			walk(u.Object)
			return strings.Join(out, "\n")
		}
		u := decode()
		if got := rules(u); !strings.Contains(got, minIntervalRule) || !strings.Contains(got, minIntervalMessage) {
			t.Errorf("%s: the CRD has no rule %q:\n%s", name, minIntervalRule, got)
		}
		if n := setMinInterval(u, 10*time.Second); n != 1 {
			t.Errorf("%s with --min-interval 10s: %d rules lowered, want 1", name, n)
		}
		if got := rules(u); !strings.Contains(got, "duration(self) >= duration('10s')") || !strings.Contains(got, "the minimum of 10s") || strings.Contains(got, minIntervalRule) {
			t.Errorf("%s with --min-interval 10s: the rule is not lowered:\n%s", name, got)
		}
		u = decode()
		if n := setMinInterval(u, 0); n != 0 || !equality.Semantic.DeepEqual(u, decode()) {
			t.Errorf("%s: the default minimum changed the CRD", name)
		}
	}
}

func TestParseSecretRef(t *testing.T) {
	if ref, err := ParseSecretRef("convoy-system/webhook"); err != nil || ref != (types.NamespacedName{Namespace: "convoy-system", Name: "webhook"}) {
		t.Fatalf("%v %v", ref, err)
	}
	for _, bad := range []string{"", "webhook", "/webhook", "ns/", "a/b/c"} {
		if _, err := ParseSecretRef(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// install --webhook-token-secret: the Deployment runs the receiver on
// the port its Service targets, with the token Secret; without it the
// Deployment is as it was.
func TestInstallWebhook(t *testing.T) {
	objs, err := decodeAll(deploy.Deployment)
	if err != nil || len(objs) != 1 {
		t.Fatalf("%d objects, %v", len(objs), err)
	}
	dep := objs[0]
	plain := dep.DeepCopy()
	if err := setWebhook(plain, ""); err != nil || !equality.Semantic.DeepEqual(plain.Object, dep.Object) {
		t.Fatalf("no secret changed the Deployment (%v)", err)
	}
	if err := setWebhook(dep, "convoy-system/convoy-webhook"); err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(dep.Object, &d); err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers[0]
	args := strings.Join(c.Args, " ")
	if !strings.Contains(args, "--leader-elect") || !strings.Contains(args, "--webhook-listen=:9292 --webhook-token-secret=convoy-system/convoy-webhook") {
		t.Fatalf("args %q", args)
	}
	svcs, err := decodeAll(deploy.WebhookService)
	if err != nil || len(svcs) != 1 {
		t.Fatalf("%d objects, %v", len(svcs), err)
	}
	var svc corev1.Service
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(svcs[0].Object, &svc); err != nil {
		t.Fatal(err)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) || svc.Namespace != d.Namespace {
		t.Fatalf("the Service %s/%s does not select the Deployment's pods", svc.Namespace, svc.Name)
	}
	target := svc.Spec.Ports[0].TargetPort.StrVal
	found := false
	for _, p := range c.Ports {
		found = found || p.Name == target && p.ContainerPort == deploy.WebhookPort
	}
	if !found {
		t.Fatalf("the Service targets port %q, which the container does not name as %d: %+v", target, deploy.WebhookPort, c.Ports)
	}
	if err := setWebhook(objs[0].DeepCopy(), "no-slash"); err == nil {
		t.Fatal("a Secret reference without namespace was taken")
	}
}
