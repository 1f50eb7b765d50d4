package kube

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// maxNameChecks bounds the pods heldNames reads one by one.
const maxNameChecks = 10

// heldNames says which pods of a StatefulSet's names (<name>-<ordinal>)
// exist but are not its own, and the way out: the StatefulSet controller
// cannot create a pod whose name is taken, and adopts only an orphan its
// selector selects, so such a pod blocks it for good — typically one
// orphaned by an earlier StatefulSet of the same name whose selector held
// another release name. The pods of u's selector are listed once; the
// names none of them holds are read one by one (at most maxNameChecks).
func (c *Client) heldNames(ctx context.Context, u *unstructured.Unstructured) []string {
	if u.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: "apps", Kind: "StatefulSet"}) {
		return nil
	}
	replicas, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !found {
		replicas = 1
	}
	start, _, _ := unstructured.NestedInt64(u.Object, "spec", "ordinals", "start")
	sel, err := selectorOf(u)
	if err != nil {
		return nil
	}
	selected := map[string]*corev1.Pod{}
	if !sel.Empty() {
		list, err := c.typed.CoreV1().Pods(u.GetNamespace()).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil {
			return nil
		}
		for i := range list.Items {
			selected[list.Items[i].Name] = &list.Items[i]
		}
	}
	var out []string
	checks := 0
	for i := start; i < start+replicas && len(out) < maxPods; i++ {
		name := fmt.Sprintf("%s-%d", u.GetName(), i)
		pod, ok := selected[name]
		if !ok {
			if checks == maxNameChecks {
				break
			}
			checks++
			if pod, err = c.typed.CoreV1().Pods(u.GetNamespace()).Get(ctx, name, metav1.GetOptions{}); err != nil {
				continue
			}
		}
		if why := heldName(u, sel, pod); why != "" {
			out = append(out, why)
		}
	}
	return out
}

// heldName says how pod, named as one of StatefulSet u's, keeps u from
// having it, "" when it is u's (or will be: an orphan u selects, which u
// adopts).
func heldName(u *unstructured.Unstructured, sel labels.Selector, pod *corev1.Pod) string {
	ctrl := metav1.GetControllerOf(pod)
	if ctrl != nil && ctrl.UID == u.GetUID() {
		return ""
	}
	selects := sel.Matches(labels.Set(pod.Labels))
	if ctrl == nil && selects {
		return "" // adopted at the controller's next sync
	}
	owner := "owned by no StatefulSet"
	if ctrl != nil {
		owner = fmt.Sprintf("owned by %s %s (uid %s), not by this StatefulSet (uid %s)", ctrl.Kind, ctrl.Name, ctrl.UID, u.GetUID())
	}
	why := ""
	if !selects {
		have, want := mismatched(sel, pod.Labels)
		why = fmt.Sprintf(" (its %s does not match the StatefulSet's selector %s, so it is never adopted)", have, want)
	}
	state := ""
	if pod.DeletionTimestamp != nil {
		state = ", being deleted"
	}
	// The controller backs off after each failed attempt to create the
	// pod, and the orphan's deletion does not wake it (the pod is not its
	// own): an update of the StatefulSet does.
	return fmt.Sprintf("pod %s/%s exists%s, %s%s: the StatefulSet cannot create its pod of that name; delete it (kubectl delete pod -n %s %s), "+
		"then make the StatefulSet try again at once (kubectl rollout restart statefulset -n %s %s): after its failed attempts it may wait minutes",
		pod.Namespace, pod.Name, state, owner, why, pod.Namespace, pod.Name, u.GetNamespace(), u.GetName())
}

// mismatched are the pod's labels that sel's requirements do not match
// ("app.kubernetes.io/instance=redis"), and those requirements
// ("app.kubernetes.io/instance=cache").
func mismatched(sel labels.Selector, podLabels map[string]string) (have, want string) {
	var h, w []string
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		if r.Matches(labels.Set(podLabels)) {
			continue
		}
		if v, ok := podLabels[r.Key()]; ok {
			h = append(h, r.Key()+"="+v)
		} else {
			h = append(h, r.Key()+" unset")
		}
		w = append(w, r.String())
	}
	return strings.Join(h, ", "), strings.Join(w, ",")
}
