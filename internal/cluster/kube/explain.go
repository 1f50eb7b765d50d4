package kube

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	"github.com/fluxcd/cli-utils/pkg/object"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	// explainTimeout bounds the reads that explain a failed wait. They
	// happen after ctx may have run out, so they get a budget of their own.
	explainTimeout = 5 * time.Second
	// maxPods and maxEvents keep one object's line readable.
	maxPods   = 3
	maxEvents = 2
)

// isWorkload: gk owns pods through spec.selector.
func isWorkload(gk schema.GroupKind) bool {
	switch gk {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"},
		schema.GroupKind{Group: "apps", Kind: "ReplicaSet"},
		schema.GroupKind{Group: "apps", Kind: "StatefulSet"},
		schema.GroupKind{Group: "apps", Kind: "DaemonSet"},
		schema.GroupKind{Group: "batch", Kind: "Job"}:
		return true
	}
	return false
}

// explain fills in the Details of objs: the problems of their pods and
// recent Warning events. Reads that fail leave the details out; the wait
// result stands on its own.
func (c *Client) explain(ctx context.Context, objs []ObjectStatus, seen map[object.ObjMetadata]*event.ResourceStatus) {
	// ctx has often just expired (that is why we are here); keep its values,
	// not its deadline.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), explainTimeout)
	defer cancel()
	warnings := map[string]warningIndex{}
	for i := range objs {
		rs := seen[objMeta(objs[i].Ref)]
		if rs == nil || rs.Resource == nil {
			continue
		}
		ns := rs.Resource.GetNamespace()
		if _, ok := warnings[ns]; !ok && ns != "" {
			warnings[ns] = c.warnings(ctx, ns)
		}
		for _, d := range c.details(ctx, rs.Resource, warnings[ns]) {
			if d != "event "+objs[i].Message { // the Job controller says it twice
				objs[i].Details = append(objs[i].Details, d)
			}
		}
	}
}

func (c *Client) details(ctx context.Context, u *unstructured.Unstructured, warnings warningIndex) []string {
	// A pod holding one of a StatefulSet's names blocks it for good.
	out := c.heldNames(ctx, u)
	for _, pod := range c.problemPods(ctx, u) {
		if why := stuckOldRevision(u, &pod); why != "" {
			// Its own problem (and its scheduler's events) would only say
			// why the old revision does not run, which no longer matters.
			out = append(out, "pod "+pod.Name+": "+why)
			continue
		}
		for _, p := range podProblems(&pod) {
			out = append(out, "pod "+pod.Name+": "+p)
		}
		for _, e := range warnings.about("Pod", pod.Name) {
			out = append(out, "pod "+pod.Name+": "+e)
		}
	}
	out = append(out, warnings.about(u.GetKind(), u.GetName())...)
	if u.GroupVersionKind().GroupKind() == (schema.GroupKind{Group: "apps", Kind: "Deployment"}) {
		// A Deployment's pod creation failures (quota, admission) are
		// reported on its ReplicaSets.
		out = append(out, warnings.aboutPrefix("ReplicaSet", u.GetName()+"-")...)
	}
	return out
}

// stuckOldRevision says why a StatefulSet's rollout waits forever on pod,
// one of an earlier revision that is not Running and Ready, and the way
// out; "" for any other pod. With podManagementPolicy OrderedReady (the
// default) the StatefulSet controller replaces no pod while one is not
// Running and Ready, so a pod of the old revision that never will be (say,
// Pending for want of resources the new revision no longer asks for) is
// never replaced: Kubernetes' known issue kubernetes#67250. Its documented
// way out, the "forced rollback", is to delete the pod, which the
// controller recreates from the update revision. With Parallel it deletes
// the pod itself.
func stuckOldRevision(u *unstructured.Unstructured, pod *corev1.Pod) string {
	if u.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: "apps", Kind: "StatefulSet"}) {
		return ""
	}
	policy, _, _ := unstructured.NestedString(u.Object, "spec", "podManagementPolicy")
	strategy, _, _ := unstructured.NestedString(u.Object, "spec", "updateStrategy", "type")
	update, _, _ := unstructured.NestedString(u.Object, "status", "updateRevision")
	revision := pod.Labels[appsv1.ControllerRevisionHashLabelKey]
	if policy == string(appsv1.ParallelPodManagement) || strategy == string(appsv1.OnDeleteStatefulSetStrategyType) ||
		update == "" || revision == "" || revision == update {
		return ""
	}
	// Pods below the partition keep the old revision on purpose.
	if partition := partitionOf(u); partition > 0 {
		if index, err := strconv.ParseInt(pod.Labels[appsv1.PodIndexLabel], 10, 64); err != nil || index < partition {
			return ""
		}
	}
	state := string(pod.Status.Phase)
	switch {
	case state == "":
		state = string(corev1.PodPending)
	case pod.Status.Phase == corev1.PodRunning:
		state = "Running, not Ready"
	}
	return fmt.Sprintf("of the previous revision (%s) and %s: the StatefulSet replaces no pod while one is not Running and Ready "+
		"(podManagementPolicy OrderedReady; Kubernetes' known issue kubernetes#67250), so the rollout waits on it forever. "+
		"Delete the pod (kubectl delete pod -n %s %s): the StatefulSet recreates it from the new revision (%s), as Kubernetes' \"forced rollback\" does",
		revision, state, pod.Namespace, pod.Name, update)
}

// partitionOf is a StatefulSet's rolling update partition (0: none).
func partitionOf(u *unstructured.Unstructured) int64 {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "updateStrategy", "rollingUpdate", "partition")
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 0
}

// problemPods are the pods of u (u itself if a Pod) that have a problem,
// at most maxPods of them.
func (c *Client) problemPods(ctx context.Context, u *unstructured.Unstructured) []corev1.Pod {
	var pods []corev1.Pod
	gk := u.GroupVersionKind().GroupKind()
	switch {
	case gk == schema.GroupKind{Kind: "Pod"}:
		var pod corev1.Pod
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &pod) != nil {
			return nil
		}
		pods = []corev1.Pod{pod}
	case isWorkload(gk):
		sel, found, _ := unstructured.NestedMap(u.Object, "spec", "selector")
		if !found {
			return nil
		}
		var ls metav1.LabelSelector
		if runtime.DefaultUnstructuredConverter.FromUnstructured(sel, &ls) != nil {
			return nil
		}
		selector, err := metav1.LabelSelectorAsSelector(&ls)
		if err != nil || selector.Empty() {
			return nil
		}
		list, err := c.typed.CoreV1().Pods(u.GetNamespace()).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
		if err != nil {
			return nil
		}
		pods = list.Items
	}
	var out []corev1.Pod
	for _, pod := range pods {
		if len(podProblems(&pod)) > 0 {
			out = append(out, pod)
		}
	}
	slices.SortFunc(out, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	if len(out) > maxPods {
		out = out[:maxPods]
	}
	return out
}

// podProblems says why a pod is not ready or failed, most specific first:
// container states, then scheduling and phase. A ready or succeeded pod
// has none.
func podProblems(pod *corev1.Pod) []string {
	if pod.Status.Phase == corev1.PodSucceeded || pod.DeletionTimestamp != nil {
		return nil
	}
	ready, readyReason := false, ""
	var scheduled *corev1.PodCondition
	for i, cond := range pod.Status.Conditions {
		switch cond.Type {
		case corev1.PodReady:
			ready, readyReason = cond.Status == corev1.ConditionTrue, cond.Reason
		case corev1.PodScheduled:
			if cond.Status == corev1.ConditionFalse {
				scheduled = &pod.Status.Conditions[i]
			}
		}
	}
	if ready && pod.Status.Phase == corev1.PodRunning {
		return nil
	}

	var out []string
	for _, cs := range pod.Status.InitContainerStatuses {
		if p := containerProblem("init container "+cs.Name, cs, true, readyReason); p != "" {
			out = append(out, p)
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if p := containerProblem("container "+cs.Name, cs, false, readyReason); p != "" {
			out = append(out, p)
		}
	}
	if len(out) > 0 {
		return out
	}
	switch {
	case scheduled != nil:
		return []string{"not scheduled: " + reasonMessage(scheduled.Reason, scheduled.Message)}
	case pod.Status.Phase == corev1.PodFailed:
		return []string{"failed: " + reasonMessage(pod.Status.Reason, pod.Status.Message)}
	case pod.Status.Phase == corev1.PodPending || pod.Status.Phase == "":
		return []string{"pending"}
	case readyReason != "":
		return []string{"not ready (" + readyReason + ")"}
	}
	return []string{"not ready"}
}

func containerProblem(name string, cs corev1.ContainerStatus, init bool, readyReason string) string {
	switch st := cs.State; {
	case st.Waiting != nil:
		p := name + ": waiting: " + reasonMessage(st.Waiting.Reason, st.Waiting.Message)
		if last := cs.LastTerminationState.Terminated; last != nil {
			p += fmt.Sprintf(" (last terminated: %s, exit code %d)", orDefault(last.Reason, "unknown"), last.ExitCode)
		}
		return p
	case st.Terminated != nil && st.Terminated.ExitCode != 0:
		p := fmt.Sprintf("%s: terminated: %s (exit code %d)", name, orDefault(st.Terminated.Reason, "unknown"), st.Terminated.ExitCode)
		if st.Terminated.Message != "" {
			p += ": " + clip(st.Terminated.Message)
		}
		return p
	case st.Running != nil && init:
		return name + ": running"
	case st.Running != nil && !cs.Ready:
		if readyReason != "" {
			return name + ": not ready (" + readyReason + ")"
		}
		return name + ": not ready"
	}
	return ""
}

func reasonMessage(reason, message string) string {
	switch {
	case reason == "" && message == "":
		return "no reason given"
	case message == "":
		return reason
	case reason == "":
		return clip(message)
	}
	return reason + ": " + clip(message)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// clip keeps one line of a message that could be a whole stack trace.
func clip(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// warningIndex holds a namespace's Warning events, newest first.
type warningIndex []corev1.Event

func (c *Client) warnings(ctx context.Context, ns string) warningIndex {
	list, err := c.typed.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "type=Warning", Limit: 500})
	if err != nil {
		return nil
	}
	events := list.Items
	slices.SortStableFunc(events, func(a, b corev1.Event) int { return eventTime(b).Compare(eventTime(a)) })
	return events
}

func (w warningIndex) about(kind, name string) []string {
	return w.match(func(ref corev1.ObjectReference) bool { return ref.Kind == kind && ref.Name == name })
}

func (w warningIndex) aboutPrefix(kind, prefix string) []string {
	return w.match(func(ref corev1.ObjectReference) bool {
		return ref.Kind == kind && strings.HasPrefix(ref.Name, prefix)
	})
}

// match returns up to maxEvents events about the matching objects, one per
// reason.
func (w warningIndex) match(f func(corev1.ObjectReference) bool) []string {
	var out []string
	reasons := map[string]bool{}
	for _, e := range w {
		if len(out) == maxEvents {
			break
		}
		if !f(e.InvolvedObject) || reasons[e.Reason] {
			continue
		}
		reasons[e.Reason] = true
		out = append(out, "event "+reasonMessage(e.Reason, e.Message))
	}
	return out
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}
