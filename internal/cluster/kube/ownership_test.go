package kube_test

import (
	"slices"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func managersOf(u *unstructured.Unstructured) []string {
	var out []string
	for _, mf := range u.GetManagedFields() {
		out = append(out, mf.Manager+"/"+string(mf.Operation))
	}
	slices.Sort(out)
	return out
}

func settingsRef(ns string) kube.Ref {
	return kube.Ref{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "settings"}
}

// Fields Helm's client-side apply wrote (manager helm, Update) and fields
// convoy applied as "convoy" become the client's own applied fields: a
// field the new object no longer sets is removed, not left co-owned.
func TestApplyInheritsThePredecessorsFields(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	c := newClient(t)
	for _, tt := range []struct {
		name  string
		write func(t *testing.T, ns string)
	}{
		{"helm client-side", func(t *testing.T, ns string) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"color": "blue", "size": "1"}}
			if _, err := cluster.Client().CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{FieldManager: "helm"}); err != nil {
				t.Fatal(err)
			}
		}},
		{"convoy before it applied as helm", func(t *testing.T, ns string) {
			old, err := kube.New(cluster.RESTConfig(), kube.Options{FieldManager: "convoy"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := old.Apply(ctx, parse(t, old, ns, configMap("{color: blue, size: '1'}")), kube.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ns := cluster.Namespace(t)
			tt.write(t, ns)
			res, err := c.Apply(ctx, parse(t, c, ns, configMap("{color: red}")), kube.ApplyOptions{})
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			live := res[0].Live
			if got := managersOf(live); !slices.Equal(got, []string{"helm/Apply"}) {
				t.Errorf("managers %v, want helm/Apply only", got)
			}
			if data, _, _ := unstructured.NestedStringMap(live.Object, "data"); len(data) != 1 || data["color"] != "red" {
				t.Errorf("data %v, want only color: red", data)
			}
		})
	}
}

// Ignored fields are left to the manager that owns them, and kept at their
// live value when only convoy owns them (leaving them out would delete
// them).
func TestApplyLeavesIgnoredFields(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := testContext(t, 30*time.Second)
	c := newClient(t)
	if _, err := c.Apply(ctx, parse(t, c, ns, configMap("{color: blue, size: '1'}")), kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := cluster.Client().CoreV1().ConfigMaps(ns)
	cm, err := cms.Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["size"] = "2"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "autoscaler"}); err != nil {
		t.Fatal(err)
	}
	ignore := kube.IgnoreRules{{Kind: "ConfigMap", Name: "sett*", Paths: []kube.Pointer{{"data", "size"}, {"data", "color"}}}}
	for _, dry := range []kube.DryRun{kube.DryRunServer, kube.DryRunNone} {
		res, err := c.Apply(ctx, parse(t, c, ns, configMap("{color: red, size: '1'}")), kube.ApplyOptions{Force: true, Ignore: ignore, DryRun: dry})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Action != kube.ActionUnchanged {
			t.Errorf("dry run %v: action %s, want unchanged", dry, res[0].Action)
		}
		data, _, _ := unstructured.NestedStringMap(res[0].Live.Object, "data")
		if data["color"] != "blue" || data["size"] != "2" {
			t.Errorf("dry run %v: data %v, want color blue (ours, kept) and size 2 (the autoscaler's)", dry, data)
		}
	}
	live, err := c.Get(ctx, settingsRef(ns))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path kube.Pointer
		want string
	}{{kube.Pointer{"data", "size"}, `"autoscaler"`}, {kube.Pointer{"data", "color"}, `"helm"`}} {
		var got []string
		for _, o := range kube.OwnersOf(live, tt.path) {
			got = append(got, o.String())
		}
		if !slices.Equal(got, []string{tt.want}) {
			t.Errorf("%s owned by %v, want %s", tt.path, got, tt.want)
		}
	}
}
