package plan_test

import (
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
)

// redisMaster is a bitnami-like StatefulSet whose selector and pod labels
// hold the release name.
func redisMaster(t *testing.T, instance string) map[string]any {
	return obj(t, `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"redis-master","namespace":"shop"},
	  "spec":{"replicas":1,"serviceName":"redis-headless",
	    "selector":{"matchLabels":{"app.kubernetes.io/name":"redis","app.kubernetes.io/instance":"`+instance+`"}},
	    "template":{"metadata":{"labels":{"app.kubernetes.io/name":"redis","app.kubernetes.io/instance":"`+instance+`"}},"spec":{"containers":[{"name":"redis","image":"redis:7.4"}]}},
	    "volumeClaimTemplates":[{"metadata":{"name":"redis-data"},"spec":{"resources":{"requests":{"storage":"8Gi"}}}}]}}`)
}

// TestReplaceWhy: a replaced object says which immutable field changes
// and how, in the words a reviewer reads; the server's refusal when
// convoy does not know the field.
func TestReplaceWhy(t *testing.T) {
	sts := plan.ObjectRef{Group: "apps", Version: "v1", Kind: "StatefulSet", Namespace: "shop", Name: "redis-master"}
	dep := plan.ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	svc := plan.ObjectRef{Version: "v1", Kind: "Service", Namespace: "shop", Name: "web"}
	widget := plan.ObjectRef{Group: "example.com", Version: "v1", Kind: "Widget", Namespace: "shop", Name: "w"}
	tests := []struct {
		name string
		o    *plan.ObjectChange
		want string
	}{
		{"a StatefulSet's selector holding the release name",
			change(sts, plan.ObjectReplace, redisMaster(t, "redis"), redisMaster(t, "cache")),
			"spec.selector is immutable and changes: app.kubernetes.io/instance redis → cache"},
		{"a Deployment's selector gaining a label",
			change(dep, plan.ObjectReplace, obj(t, `{"spec":{"selector":{"matchLabels":{"app":"web"}}}}`), obj(t, `{"spec":{"selector":{"matchLabels":{"app":"web","tier":"front"}}}}`)),
			"spec.selector is immutable and changes: tier (none) → front"},
		{"many changes are counted",
			change(dep, plan.ObjectReplace, obj(t, `{"spec":{"selector":{"matchLabels":{"a":"1","b":"1","c":"1","d":"1"}}}}`), obj(t, `{"spec":{"selector":{"matchLabels":{"a":"2","b":"2","c":"2","d":"2"}}}}`)),
			"spec.selector is immutable and changes: a 1 → 2, b 1 → 2, c 1 → 2, and 1 more"},
		{"a Service's clusterIP",
			change(svc, plan.ObjectReplace, obj(t, `{"spec":{"clusterIP":"10.0.0.1"}}`), obj(t, `{"spec":{"clusterIP":"None"}}`)),
			"spec.clusterIP is immutable and changes: 10.0.0.1 → None"},
		{"a kind convoy does not know: the server's refusal",
			func() *plan.ObjectChange {
				o := change(widget, plan.ObjectReplace, obj(t, `{"spec":{"size":1}}`), obj(t, `{"spec":{"size":2}}`))
				o.Reason = "spec.size: field is immutable"
				return o
			}(),
			"spec.size: field is immutable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := plan.ReplaceWhy(tt.o); got != tt.want {
				t.Errorf("ReplaceWhy = %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestStatefulSetSelectorChangeRecreatesPods: a StatefulSet whose new
// selector does not select its pods' labels cannot adopt them: its pods
// are recreated, on the claims of their names, and nothing is lost.
func TestStatefulSetSelectorChangeRecreatesPods(t *testing.T) {
	ref := plan.ObjectRef{Group: "apps", Version: "v1", Kind: "StatefulSet", Namespace: "shop", Name: "redis-master"}
	rc := release(change(ref, plan.ObjectReplace, redisMaster(t, "redis"), redisMaster(t, "cache")))
	imp := plan.ComputeImpact(rc, plan.ImpactFacts{Claims: map[plan.ObjectRef][]string{ref: {"redis-data-redis-master-0"}}})
	if imp == nil || len(imp.Replacements) != 1 {
		t.Fatalf("impact %+v", imp)
	}
	r := imp.Replacements[0]
	if !r.RecreatesPods || r.Propagation != "orphan" || len(r.RemountedClaims) != 1 || r.RemountedClaims[0] != "redis-data-redis-master-0" ||
		r.Why != "spec.selector is immutable and changes: app.kubernetes.io/instance redis → cache" || !strings.Contains(r.Note, "its new spec.selector does not select their labels") {
		t.Fatalf("replacement %+v", r)
	}
	if len(imp.DataLoss) != 0 {
		t.Fatalf("data loss %+v", imp.DataLoss)
	}
	if len(imp.Rollouts) != 1 || imp.Rollouts[0].Strategy.Type != "Replace" {
		t.Fatalf("rollouts %+v: want its pods replaced", imp.Rollouts)
	}
	// Same selector: the pods are adopted.
	same := plan.ComputeImpact(release(change(ref, plan.ObjectReplace, redisMaster(t, "redis"), func() map[string]any {
		m := redisMaster(t, "redis")
		m["spec"].(map[string]any)["serviceName"] = "other"
		return m
	}())), plan.ImpactFacts{})
	if same == nil || len(same.Replacements) != 1 || same.Replacements[0].RecreatesPods {
		t.Fatalf("a StatefulSet selecting its pods recreates them: %+v", same)
	}
}

// TestRenameRecreated: an object the renamed release renders under its
// name but replaces is not said to keep its identity.
func TestRenameRecreated(t *testing.T) {
	sts := plan.ObjectRef{Group: "apps", Version: "v1", Kind: "StatefulSet", Namespace: "shop", Name: "redis-master"}
	svc := plan.ObjectRef{Version: "v1", Kind: "Service", Namespace: "shop", Name: "redis-master"}
	objs := []*plan.ObjectChange{
		change(sts, plan.ObjectReplace, redisMaster(t, "redis"), redisMaster(t, "cache")),
		change(svc, plan.ObjectUpdate, obj(t, `{"spec":{"selector":{"i":"redis"}}}`), obj(t, `{"spec":{"selector":{"i":"cache"}}}`)),
	}
	got := plan.RenameObjects("redis", "cache", []plan.ObjectRef{sts, svc}, []plan.ObjectRef{sts, svc})
	plan.MarkRecreated(got, objs)
	if got[0].Kept || !got[0].Recreated || !got[1].Kept || got[1].Recreated {
		t.Fatalf("renamed objects %+v", got)
	}
	lines := (&plan.Rename{Objects: got}).ObjectLines()
	want := "apps/v1 StatefulSet shop/redis-master is replaced under its name, deleted and created again with a new uid: spec.selector is immutable and changes: app.kubernetes.io/instance redis → cache"
	if lines[0] != want || !strings.Contains(lines[1], "v1 Service shop/redis-master keeps its identity") {
		t.Fatalf("lines %q\nwant %q", lines, want)
	}
}
