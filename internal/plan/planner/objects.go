package planner

import (
	"strconv"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/sensitive"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// liveView is the live object as a plan keeps it, normalized, with its
// status (a policy or the impact summary reads replicas, an HPA's desired
// replicas, a PodDisruptionBudget's allowed disruptions). Like
// normalizedView it shares what lies below the maps it changes with live:
// its callers keep only maskObject's copy of it.
func liveView(live *unstructured.Unstructured) map[string]any {
	if live == nil {
		return nil
	}
	o := normalizedView(live)
	if st, ok := live.Object["status"]; ok {
		o["status"] = st
	}
	return o
}

// maskObject returns obj with every sensitive string masked, and every
// value at or below one of secret (Secret data, fields rendered from
// sensitive values) replaced by the placeholder, keys kept.
func maskObject(obj map[string]any, red *sensitive.Redactor, secret []string) map[string]any {
	if obj == nil {
		return nil
	}
	out := red.Value(obj).(map[string]any) // a copy, also with a nil redactor
	for _, p := range secret {
		ptr, ok := pointerAt(p, out)
		if !ok || len(ptr) == 0 {
			continue
		}
		setAt(out, ptr, maskLeaves)
	}
	return out
}

// setAt replaces the value at ptr with f of it.
func setAt(root any, ptr []string, f func(any) any) {
	v := root
	for i, seg := range ptr {
		last := i == len(ptr)-1
		switch t := v.(type) {
		case map[string]any:
			if last {
				t[seg] = f(t[seg])
				return
			}
			v = t[seg]
		case []any:
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || n >= len(t) {
				return
			}
			if last {
				t[n] = f(t[n])
				return
			}
			v = t[n]
		default:
			return
		}
	}
}

// maskLeaves replaces every scalar below v by the placeholder.
func maskLeaves(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = maskLeaves(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = maskLeaves(e)
		}
		return t
	case nil:
		return nil
	}
	return plan.SensitivePlaceholder
}

// deployedView is an object as a revision applies it, masked as the plan
// masks what it keeps of objects (plan.ObjectChange.Deployed): sensitive
// strings, Secret data and fields rendered from sensitive values.
func deployedView(obj *unstructured.Unstructured, red *sensitive.Redactor) map[string]any {
	if obj == nil {
		return nil
	}
	ref := kube.RefOf(obj)
	return maskObject(obj.Object, red, append(secretPaths(ref.Kind), red.FieldsOf(ref.Group, ref.Kind, ref.Namespace, ref.Name)...))
}

// keepDeployed sets, on the objects of a release planned unchanged in
// full, the objects of its deployed revision (plan.ObjectChange.Deployed)
// for policies.
func keepDeployed(objs []*plan.ObjectChange, deployed []*unstructured.Unstructured, red *sensitive.Redactor) {
	by := map[string]*unstructured.Unstructured{}
	for _, o := range deployed {
		by[identityKey(kube.RefOf(o))] = o
	}
	for _, o := range objs {
		if d := by[identityKey(kube.Ref(o.Ref))]; d != nil {
			o.Deployed = deployedView(d, red)
		}
	}
}
