package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ComputeImpact computes the impact of a release's changes from its
// objects: their live state (Before), the server's dry-run results
// (After), their typed actions and field-level diffs; never from the
// rendered manifests' text. facts are what the planner read from the
// cluster besides. It returns nil for releases that do not change or are
// rendered only at apply.
func ComputeImpact(rc *ReleaseChange, facts ImpactFacts) *Impact {
	if rc.Action == ActionNoOp || rc.KnownAfterApply || len(rc.Objects) == 0 {
		return nil
	}
	in := newImpactInput(rc.Objects)
	imp := &Impact{}
	rolling := map[ObjectRef]bool{}
	for _, w := range in.workloads {
		if r, ok := in.rollout(w); ok {
			imp.Rollouts = append(imp.Rollouts, r)
			rolling[w.change.Ref] = true
		}
	}
	imp.StaleConfig = in.staleConfig(rolling)
	imp.DataLoss = in.dataLoss(facts)
	imp.Replacements = in.replacements(facts)
	imp.Requests, imp.Limits = in.totals()
	imp.Unknown = in.unknown()
	imp.ScaledToZero = in.scaledToZero()
	return imp
}

// scaledToZero are the workloads an update takes from some replicas to
// none (an autoscaler's are its own to scale), with the release's
// Services that select their pods.
func (in *impactInput) scaledToZero() []ScaleToZero {
	var out []ScaleToZero
	for _, w := range in.workloads {
		o := w.change
		switch o.Ref.Group + "/" + o.Ref.Kind {
		case "apps/Deployment", "apps/StatefulSet", "apps/ReplicaSet", "/ReplicationController":
		default:
			continue
		}
		if o.Action != ObjectUpdate || in.scaled[o.Ref.Kind+"/"+o.Ref.Name] {
			continue
		}
		from := 1
		if n, ok := intField(o.Before, "spec", "replicas"); ok {
			from = n
		}
		to, ok := intField(o.After, "spec", "replicas")
		if !ok || to != 0 || from == 0 {
			continue
		}
		s := ScaleToZero{Ref: o.Ref, From: from}
		labels, _ := field(o.After, append(slices.Clone(w.template), "metadata", "labels")...).(map[string]any)
		for _, svc := range in.objects {
			if svc.Ref.Group != "" || svc.Ref.Kind != "Service" || svc.Ref.Namespace != o.Ref.Namespace || svc.Action == ObjectDelete {
				continue
			}
			sel, _ := field(current(svc), "spec", "selector").(map[string]any)
			if len(sel) > 0 && selects(map[string]any{"matchLabels": sel}, labels) {
				s.Services = append(s.Services, svc.Ref)
			}
		}
		out = append(out, s)
	}
	return out
}

// workload is an object with a pod template.
type workload struct {
	change *ObjectChange
	// template is the path of its pod template (`spec.template`, a
	// CronJob's `spec.jobTemplate.spec.template`; "" for a Pod, whose spec
	// is the pod's).
	template []string
}

type impactInput struct {
	objects   []*ObjectChange
	workloads []workload
	// scaled are the workloads an autoscaler in the release scales, by
	// kind and name.
	scaled map[string]bool
}

func newImpactInput(objs []*ObjectChange) *impactInput {
	in := &impactInput{objects: objs, scaled: map[string]bool{}}
	for _, o := range objs {
		if t, ok := podTemplatePath(o); ok {
			in.workloads = append(in.workloads, workload{change: o, template: t})
		}
		if o.Ref.Kind == "HorizontalPodAutoscaler" && o.Action != ObjectDelete {
			if target, ok := field(current(o), "spec", "scaleTargetRef").(map[string]any); ok {
				in.scaled[fmt.Sprint(target["kind"])+"/"+fmt.Sprint(target["name"])] = true
			}
		}
	}
	return in
}

// podTemplatePath is where o's pod template is: the built-in workloads',
// and `spec.template` for custom workloads whose template has containers.
func podTemplatePath(o *ObjectChange) ([]string, bool) {
	switch o.Ref.Group + "/" + o.Ref.Kind {
	case "apps/Deployment", "apps/StatefulSet", "apps/DaemonSet", "apps/ReplicaSet", "batch/Job", "/ReplicationController":
		return []string{"spec", "template"}, true
	case "batch/CronJob":
		return []string{"spec", "jobTemplate", "spec", "template"}, true
	case "/Pod":
		return nil, true
	}
	if knownKind(o.Ref) {
		return nil, false
	}
	if _, ok := field(current(o), "spec", "template", "spec", "containers").([]any); ok {
		return []string{"spec", "template"}, true
	}
	return nil, false
}

// current is the object as it will be, or as it is when it goes.
func current(o *ObjectChange) map[string]any {
	if o.After != nil {
		return o.After
	}
	return o.Before
}

// podSpec is a workload's pod spec in obj.
func (w workload) podSpec(obj map[string]any) map[string]any {
	spec, _ := field(obj, append(slices.Clone(w.template), "spec")...).(map[string]any)
	return spec
}

func (w workload) templatePath() string { return strings.Join(w.template, ".") }

// rollout is w's rollout, if applying replaces its pods.
func (in *impactInput) rollout(w workload) (Rollout, bool) {
	o := w.change
	var causes []string
	switch o.Action {
	case ObjectUpdate:
		if w.template == nil {
			return Rollout{}, false // a Pod's mutable fields change in place
		}
		for _, c := range changes(o) {
			if HasPrefix(c.Path, w.templatePath()) {
				causes = append(causes, c.Path)
			}
		}
	case ObjectReplace:
		for _, c := range changes(o) {
			if o.Ref.Kind == "StatefulSet" && StatefulSetAdoptsPods(o.Before, o.After) && !HasPrefix(c.Path, w.templatePath()) {
				continue // replaced with its pods orphaned: they roll only for the template
			}
			causes = append(causes, c.Path)
		}
	}
	if len(causes) == 0 {
		return Rollout{}, false
	}
	r := Rollout{Ref: o.Ref, Causes: causes, Replicas: in.replicas(o), Strategy: strategyOf(o)}
	if w.template != nil {
		labels, _ := field(o.After, append(slices.Clone(w.template), "metadata", "labels")...).(map[string]any)
		r.Budgets = in.budgets(o.Ref.Namespace, labels)
	}
	return r, true
}

// replicas is how many pods o runs after apply (a CronJob: none now).
func (in *impactInput) replicas(o *ObjectChange) int {
	switch o.Ref.Kind {
	case "CronJob":
		return 0
	case "Job":
		if n, ok := intField(current(o), "spec", "parallelism"); ok {
			return n
		}
		return 1
	}
	return in.replicasOf(o, current(o))
}

func strategyOf(o *ObjectChange) Strategy {
	obj := current(o)
	if o.Action == ObjectReplace && (o.Ref.Kind != "StatefulSet" || !StatefulSetAdoptsPods(o.Before, o.After)) {
		return Strategy{Type: "Replace"} // a StatefulSet's pods deleted: its new one cannot adopt them
	}
	switch o.Ref.Kind {
	case "Deployment":
		s := Strategy{Type: stringOr(field(obj, "spec", "strategy", "type"), "RollingUpdate")}
		if s.Type == "RollingUpdate" {
			s.MaxUnavailable = stringOr(field(obj, "spec", "strategy", "rollingUpdate", "maxUnavailable"), "25%")
			s.MaxSurge = stringOr(field(obj, "spec", "strategy", "rollingUpdate", "maxSurge"), "25%")
		}
		return s
	case "StatefulSet":
		s := Strategy{Type: stringOr(field(obj, "spec", "updateStrategy", "type"), "RollingUpdate")}
		if s.Type == "RollingUpdate" {
			if p, ok := intField(obj, "spec", "updateStrategy", "rollingUpdate", "partition"); ok && p > 0 {
				s.Partition = &p
			}
			s.MaxUnavailable = stringOr(field(obj, "spec", "updateStrategy", "rollingUpdate", "maxUnavailable"), "1")
		}
		return s
	case "DaemonSet":
		s := Strategy{Type: stringOr(field(obj, "spec", "updateStrategy", "type"), "RollingUpdate")}
		if s.Type == "RollingUpdate" {
			s.MaxUnavailable = stringOr(field(obj, "spec", "updateStrategy", "rollingUpdate", "maxUnavailable"), "1")
			s.MaxSurge = stringOr(field(obj, "spec", "updateStrategy", "rollingUpdate", "maxSurge"), "0")
		}
		return s
	case "Job":
		return Strategy{Type: "Job"}
	case "CronJob":
		return Strategy{Type: "NextRun"}
	}
	return Strategy{Type: "Replace"}
}

// budgets are the release's PodDisruptionBudgets in namespace selecting
// pods with labels.
func (in *impactInput) budgets(namespace string, labels map[string]any) []Budget {
	var out []Budget
	for _, o := range in.objects {
		if o.Ref.Kind != "PodDisruptionBudget" || o.Ref.Namespace != namespace || o.Action == ObjectDelete {
			continue
		}
		sel, _ := field(current(o), "spec", "selector").(map[string]any)
		if !selects(sel, labels) {
			continue
		}
		b := Budget{Ref: o.Ref}
		if n, ok := intField(o.Before, "status", "disruptionsAllowed"); ok {
			b.DisruptionsAllowed = &n
		}
		out = append(out, b)
	}
	return out
}

// selects reports whether a label selector (matchLabels, matchExpressions)
// selects labels. A nil or empty selector selects nothing, as a PDB's.
func selects(sel, labels map[string]any) bool {
	if len(sel) == 0 {
		return false
	}
	ml, _ := sel["matchLabels"].(map[string]any)
	for k, v := range ml {
		if lv, ok := labels[k]; !ok || fmt.Sprint(lv) != fmt.Sprint(v) {
			return false
		}
	}
	exprs, _ := sel["matchExpressions"].([]any)
	for _, e := range exprs {
		m, _ := e.(map[string]any)
		key, op := fmt.Sprint(m["key"]), fmt.Sprint(m["operator"])
		lv, has := labels[key]
		var values []string
		vs, _ := m["values"].([]any)
		for _, v := range vs {
			values = append(values, fmt.Sprint(v))
		}
		in := has && slices.Contains(values, fmt.Sprint(lv))
		switch op {
		case "In":
			if !in {
				return false
			}
		case "NotIn":
			if in {
				return false
			}
		case "Exists":
			if !has {
				return false
			}
		case "DoesNotExist":
			if has {
				return false
			}
		default:
			return false
		}
	}
	return len(ml) > 0 || len(exprs) > 0
}

func changes(o *ObjectChange) []*Change {
	if o.Diff == nil {
		return nil
	}
	return o.Diff.Changes
}

// field is the value at path in obj (nil when absent).
func field(obj map[string]any, path ...string) any {
	var v any = obj
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func intField(obj map[string]any, path ...string) (int, bool) {
	switch n := field(obj, path...).(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		return int(n), true
	case string:
		i, err := strconv.Atoi(n)
		return i, err == nil
	}
	return 0, false
}

// stringOr is v printed (an int-or-string field), or def when absent.
func stringOr(v any, def string) string {
	switch v := v.(type) {
	case nil:
		return def
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}
