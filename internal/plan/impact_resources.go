package plan

import (
	"k8s.io/apimachinery/pkg/api/resource"
)

// podResources are one pod's CPU and memory requests and limits.
type podResources struct {
	reqCPU, reqMem, limCPU, limMem resource.Quantity
}

// totals sums requests and limits over the release's long-running
// workloads (Deployments, StatefulSets, DaemonSets, ReplicaSets, Pods,
// custom workloads; not Jobs and CronJobs, whose pods come and go), before
// and after apply. Nil when the release has no such workload.
func (in *impactInput) totals() (requests, limits *Resources) {
	var before, after podResources
	found := false
	for _, w := range in.workloads {
		o := w.change
		if o.Ref.Kind == "Job" || o.Ref.Kind == "CronJob" {
			continue
		}
		found = true
		if o.Before != nil {
			n := in.replicasOf(o, o.Before)
			before.add(w.pod(o.Before), n)
		}
		if o.After != nil && o.Action != ObjectDelete {
			n := in.replicasOf(o, o.After)
			after.add(w.pod(o.After), n)
		}
	}
	if !found {
		return nil, nil
	}
	requests = &Resources{CPU: Quantities{Before: canonical(before.reqCPU), After: canonical(after.reqCPU)},
		Memory: Quantities{Before: canonical(before.reqMem), After: canonical(after.reqMem)}}
	limits = &Resources{CPU: Quantities{Before: canonical(before.limCPU), After: canonical(after.limCPU)},
		Memory: Quantities{Before: canonical(before.limMem), After: canonical(after.limMem)}}
	return requests, limits
}

// replicasOf is how many pods o runs as obj says; an autoscaled
// workload's are the live count on both sides, a DaemonSet's the nodes it
// runs on now.
func (in *impactInput) replicasOf(o *ObjectChange, obj map[string]any) int {
	switch o.Ref.Kind {
	case "DaemonSet":
		n, _ := intField(o.Before, "status", "desiredNumberScheduled")
		return n
	case "Pod":
		return 1
	}
	if in.scaled[o.Ref.Kind+"/"+o.Ref.Name] && o.Before != nil {
		obj = o.Before
	}
	if n, ok := intField(obj, "spec", "replicas"); ok {
		return n
	}
	return 1
}

func (p *podResources) add(q podResources, n int) {
	for _, f := range []struct{ to, from *resource.Quantity }{{&p.reqCPU, &q.reqCPU}, {&p.reqMem, &q.reqMem}, {&p.limCPU, &q.limCPU}, {&p.limMem, &q.limMem}} {
		v := f.from.DeepCopy()
		v.Mul(int64(n))
		f.to.Add(v)
	}
}

// pod is the effective requests and limits of w's pod in obj as the
// scheduler counts them: the larger of the app containers with the
// sidecars (init containers that keep running, restartPolicy Always) and
// of each init container with the sidecars started before it.
func (w workload) pod(obj map[string]any) podResources {
	spec := w.podSpec(obj)
	var apps, sidecars, initPeak podResources
	for _, c := range objectsIn(spec["initContainers"]) {
		r := containerResources(c)
		if c["restartPolicy"] == "Always" {
			sidecars.add(r, 1)
			initPeak.max(sidecars)
			continue
		}
		withSidecars := sidecars.copy()
		withSidecars.add(r, 1)
		initPeak.max(withSidecars)
	}
	for _, c := range objectsIn(spec["containers"]) {
		apps.add(containerResources(c), 1)
	}
	apps.add(sidecars, 1)
	apps.max(initPeak)
	return apps
}

func (p podResources) copy() podResources {
	return podResources{p.reqCPU.DeepCopy(), p.reqMem.DeepCopy(), p.limCPU.DeepCopy(), p.limMem.DeepCopy()}
}

func (p *podResources) max(q podResources) {
	for _, f := range []struct{ to, from *resource.Quantity }{{&p.reqCPU, &q.reqCPU}, {&p.reqMem, &q.reqMem}, {&p.limCPU, &q.limCPU}, {&p.limMem, &q.limMem}} {
		if f.from.Cmp(*f.to) > 0 {
			*f.to = f.from.DeepCopy()
		}
	}
}

// containerResources are a container's requests and limits; a limit
// without a request is the request too, as the API server defaults it.
func containerResources(c map[string]any) podResources {
	q := func(kind, name string) resource.Quantity {
		v, ok := field(c, "resources", kind, name).(string)
		if !ok {
			if f, isNum := field(c, "resources", kind, name).(float64); isNum {
				return *resource.NewMilliQuantity(int64(f*1000), resource.DecimalSI)
			}
			return resource.Quantity{}
		}
		got, err := resource.ParseQuantity(v)
		if err != nil {
			return resource.Quantity{}
		}
		return got
	}
	r := podResources{reqCPU: q("requests", "cpu"), reqMem: q("requests", "memory"), limCPU: q("limits", "cpu"), limMem: q("limits", "memory")}
	if field(c, "resources", "requests", "cpu") == nil {
		r.reqCPU = r.limCPU.DeepCopy()
	}
	if field(c, "resources", "requests", "memory") == nil {
		r.reqMem = r.limMem.DeepCopy()
	}
	return r
}

// canonical is a quantity's canonical text ("0" for none).
func canonical(q resource.Quantity) string {
	if q.IsZero() {
		return "0"
	}
	return q.String()
}

// Delta is after - before with its sign ("+600m", "-128Mi"), "" when
// equal or unparseable.
func (q Quantities) Delta() string {
	b, errB := resource.ParseQuantity(q.Before)
	a, errA := resource.ParseQuantity(q.After)
	if errA != nil || errB != nil || a.Cmp(b) == 0 {
		return ""
	}
	if a.Cmp(b) > 0 {
		a.Sub(b)
		return "+" + a.String()
	}
	b.Sub(a)
	return "-" + b.String()
}
