package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/statusreaders"
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/cli-utils/pkg/kstatus/watcher"
	"github.com/fluxcd/cli-utils/pkg/object"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// WaitOptions configures Wait.
type WaitOptions struct {
	// WaitForJobs waits for Jobs to complete. Without it a Job is ready
	// once it exists, as in Helm.
	WaitForJobs bool
	// Progress, if set, is told how many of the objects waited for are
	// ready, each time that number changes.
	Progress func(ready, total int)
	// Blockers, if set, is told which objects are not ready yet and why
	// (their pods' problems and Warning events, as a NotReadyError says),
	// once the wait has lasted BlockersAfter and then every BlockersAfter
	// while the list changes. Zero BlockersAfter: DefaultBlockersAfter.
	Blockers      func([]ObjectStatus)
	BlockersAfter time.Duration
	// Applied are the objects as the apply before the wait returned them
	// (kube.Result.Live). One that is ready in that response (a ConfigMap,
	// a Service, a Deployment whose spec the apply left as it was) is not
	// read again; the others are read, and watched while not ready.
	Applied []*unstructured.Unstructured
	// Unreachable, if set, is told when the API server stops answering
	// during the wait (the outage), and when it answers again (nil).
	Unreachable func(*Outage)
	// Health, if set, judges the objects of the kinds it has checks for
	// instead of kstatus (a release's health_check blocks).
	Health Health
}

// DefaultBlockersAfter is how long a wait runs before it names what it
// waits for.
const DefaultBlockersAfter = 3 * time.Second

// resyncPeriod re-lists what the watches may have missed; the watches do
// the real work.
const resyncPeriod = 3 * time.Minute

// Wait blocks until every object is ready by kstatus's rules (with
// LoadBalancer Services needing an ingress address, failed Pods and Jobs
// failing, paused Deployments skipped), or returns a *NotReadyError as soon as
// one fails or when ctx ends, listing each object not ready with its reason
// and the reasons of its failing pods. The deadline of ctx is the timeout.
func (c *Client) Wait(ctx context.Context, refs []Ref, opts WaitOptions) error {
	mode := modeReady
	if opts.WaitForJobs {
		mode = modeReadyAndJobs
	}
	var targets []Ref
	for _, ref := range uniqueRefs(refs) {
		if isJob(ref) && mode == modeReady {
			continue // ready once created, as in Helm
		}
		targets = append(targets, ref)
	}
	return c.waitReporting(ctx, targets, mode, opts.Progress, opts.blockerTicker(), opts.Applied, opts.Unreachable, opts.Health)
}

func (opts WaitOptions) blockerTicker() *blockerTicker {
	if opts.Blockers == nil {
		return nil
	}
	every := opts.BlockersAfter
	if every <= 0 {
		every = DefaultBlockersAfter
	}
	return &blockerTicker{every: every, report: opts.Blockers}
}

// blockerTicker reports, every so often, the objects a wait is blocked on.
type blockerTicker struct {
	every  time.Duration
	report func([]ObjectStatus)
	last   string
}

// WaitForCompletion waits as Helm does for hooks: Jobs until they complete
// and Pods until they succeed, failing as soon as one fails. Objects of other
// kinds are done once they exist and are not waited for.
func (c *Client) WaitForCompletion(ctx context.Context, refs []Ref) error {
	return c.WaitForCompletionWith(ctx, refs, WaitOptions{})
}

// WaitForCompletionWith is WaitForCompletion reporting progress and
// blockers as opts says (WaitForJobs does not apply).
func (c *Client) WaitForCompletionWith(ctx context.Context, refs []Ref, opts WaitOptions) error {
	var targets []Ref
	for _, ref := range uniqueRefs(refs) {
		if isJob(ref) || (ref.Group == "" && ref.Kind == "Pod") {
			targets = append(targets, ref)
		}
	}
	return c.waitReporting(ctx, targets, modeCompletion, opts.Progress, opts.blockerTicker(), nil, opts.Unreachable, nil)
}

func isJob(ref Ref) bool { return ref.Group == "batch" && ref.Kind == "Job" }

func (c *Client) wait(ctx context.Context, targets []Ref, mode waitMode, progress func(ready, total int)) error {
	return c.waitReporting(ctx, targets, mode, progress, nil, nil, nil, nil)
}

// waitReporting waits for targets, reporting progress, blockers and
// outages; the objects of applied (WaitOptions.Applied) found ready there
// are taken as ready without reading them. It stops with an
// *UnreachableError naming the objects not seen ready once the API server
// has been unreachable for longer than the client's Reach bound.
func (c *Client) waitReporting(ctx context.Context, targets []Ref, mode waitMode, progress func(ready, total int), tick *blockerTicker, applied []*unstructured.Unstructured, unreachable func(*Outage), checks Health) error {
	if len(targets) == 0 {
		return nil
	}
	// An unknown kind would only show as "not found" at the timeout.
	for i, ref := range targets {
		_, scoped, err := c.resourceFor(ref)
		if err != nil {
			return err
		}
		targets[i] = scoped
	}
	// An object ready already needs no informer: a list and a watch of
	// its kind in its namespace, and for a Deployment a list of its
	// ReplicaSets at each event. Those the apply's response shows ready
	// are not read; one GET each of the others first; only those still
	// not ready are watched.
	all := len(targets)
	targets = notReadyIn(targets, applied, mode, checks)
	targets = c.notReadyNow(ctx, targets, mode, checks)
	if len(targets) == 0 {
		if progress != nil {
			progress(all, all)
		}
		return nil
	}
	if ready := all - len(targets); ready > 0 && progress != nil {
		inner := progress
		progress = func(n, _ int) { inner(ready+n, all) }
	}
	sw := watcher.NewDefaultStatusWatcher(c.dynamic, c.mapper)
	sw.ResyncPeriod = resyncPeriod
	// status.Compute of each object alone: kstatus's readers of
	// Deployments, StatefulSets and ReplicaSets compute the same status
	// but also list their ReplicaSets and Pods at every event, for
	// generated resources convoy never reads (28 of the 75 requests of a
	// first install of five Deployments).
	sw.StatusReader = statusReader{inner: statusreaders.NewGenericStatusReader(c.mapper, status.Compute), mode: mode, health: checks}

	var onTick func(map[object.ObjMetadata]*event.ResourceStatus)
	var every time.Duration
	if tick != nil {
		every = tick.every
		onTick = func(seen map[object.ObjMetadata]*event.ResourceStatus) {
			objs := blockers(targets, seen)
			c.explain(ctx, objs, seen)
			var key strings.Builder
			for _, o := range objs {
				key.WriteString(o.String() + "\n")
			}
			if key.String() != tick.last {
				tick.last = key.String()
				tick.report(objs)
			}
		}
	}
	health := &watchHealth{reach: c.reach, probe: c.probe, report: unreachable}
	seen, err := watchStatus(ctx, sw, targets, progress, every, onTick, health)
	var ue *UnreachableError
	if errors.As(err, &ue) {
		for _, o := range blockers(targets, seen) {
			ue.Stopped = append(ue.Stopped, o.Ref)
		}
		return ue
	}
	if err != nil {
		return err
	}

	var failed, notReady []ObjectStatus
	for _, ref := range targets {
		rs := seen[objMeta(ref)]
		switch {
		case rs == nil || rs.Status == status.NotFoundStatus:
			notReady = append(notReady, ObjectStatus{Ref: ref, State: StateNotFound})
		case rs.Status == status.FailedStatus:
			failed = append(failed, ObjectStatus{Ref: ref, State: StateFailed, Message: summary(rs)})
		case rs.Status != status.CurrentStatus:
			notReady = append(notReady, ObjectStatus{Ref: ref, State: StateNotReady, Message: summary(rs)})
		}
	}
	// Failing fast leaves the others unfinished, not broken: name only the
	// failures then.
	objs, cause := failed, error(nil)
	if len(failed) == 0 {
		objs, cause = notReady, ctx.Err()
	}
	if len(objs) == 0 {
		return nil
	}
	c.explain(ctx, objs, seen)
	return &NotReadyError{Objects: objs, Cause: cause}
}

// notReadyNow are the targets not ready by one GET each (in parallel):
// status.Compute with convoy's rules, as the watcher's status readers
// compute it (their generated resources are only shown). An object that
// cannot be read now (absent, say) is left to the watch.
func (c *Client) notReadyNow(ctx context.Context, targets []Ref, mode waitMode, health Health) []Ref {
	ready := make([]bool, len(targets))
	sem := make(chan struct{}, readyChecks)
	var wg sync.WaitGroup
	for i, ref := range targets {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			u, err := c.Get(ctx, ref)
			if err != nil {
				return
			}
			ready[i] = readyAlone(u, mode, health)
		})
	}
	wg.Wait()
	var out []Ref
	for i, ref := range targets {
		if !ready[i] {
			out = append(out, ref)
		}
	}
	return out
}

// notReadyIn are the targets that applied (objects as an apply returned
// them) does not show ready: absent from it, or not Current there.
func notReadyIn(targets []Ref, applied []*unstructured.Unstructured, mode waitMode, health Health) []Ref {
	if len(applied) == 0 {
		return targets
	}
	ready := make(map[object.ObjMetadata]bool, len(applied))
	for _, u := range applied {
		if u != nil && readyAlone(u, mode, health) {
			ready[objMeta(RefOf(u))] = true
		}
	}
	var out []Ref
	for _, ref := range targets {
		if !ready[objMeta(ref)] {
			out = append(out, ref)
		}
	}
	return out
}

// readyAlone tells whether u is ready by its own status (status.Compute
// with convoy's rules), as the watcher's status readers compute it.
func readyAlone(u *unstructured.Unstructured, mode waitMode, health Health) bool {
	if u == nil || u.GetDeletionTimestamp() != nil {
		return false
	}
	if r := healthStatus(health, u); r != nil {
		return r.Status == status.CurrentStatus
	}
	res, err := status.Compute(u)
	if err != nil {
		return false
	}
	st := res.Status
	if r := refineStatus(u, st, mode); r != nil {
		st = r.Status
	}
	return st == status.CurrentStatus
}

// readyChecks is how many GETs notReadyNow has in flight at once.
const readyChecks = 8

// watchStatus follows the status of refs until all are Current, one is
// Failed, or ctx ends, and returns the last status seen of each (absent:
// never seen).
// Every interval (when onTick is set) onTick is shown what was seen so far.
// Every healthEvery health checks whether the API server still answers:
// the watch's informers retry in silence; it stops the watch with an
// *UnreachableError (and what was seen) once the server has been
// unreachable for longer than its bound.
func watchStatus(ctx context.Context, sw *watcher.DefaultStatusWatcher, refs []Ref, progress func(ready, total int), interval time.Duration, onTick func(map[object.ObjMetadata]*event.ResourceStatus), health *watchHealth) (map[object.ObjMetadata]*event.ResourceStatus, error) {
	ids := make(object.ObjMetadataSet, len(refs))
	for i, ref := range refs {
		ids[i] = objMeta(ref)
	}
	watchCtx, stop := context.WithCancel(ctx)
	defer stop()
	events := sw.Watch(watchCtx, ids, watcher.Options{RESTScopeStrategy: watcher.RESTScopeNamespace})
	defer func() {
		stop()
		for range events { // let the informers shut down
		}
	}()

	seen := make(map[object.ObjMetadata]*event.ResourceStatus, len(ids))
	reported := -1
	var ticks <-chan time.Time
	if onTick != nil && interval > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		ticks = t.C
	}
	// The health checks run on their own: onTick's explanations (requests
	// of their own, a few seconds each against a server that does not
	// answer) must not hold them.
	unhealthy := make(chan error, 1)
	checking, stopChecks := context.WithCancel(ctx)
	defer stopChecks()
	go func() {
		checks := time.NewTicker(healthEvery)
		defer checks.Stop()
		for {
			select {
			case <-checking.Done():
				return
			case <-checks.C:
				if err := health.check(checking); err != nil {
					unhealthy <- err
					return
				}
			}
		}
	}()
	for {
		var e event.Event
		select {
		case <-ticks:
			onTick(seen)
			continue
		case err := <-unhealthy:
			return seen, err
		case ev, ok := <-events:
			if !ok {
				return seen, nil
			}
			e = ev
		}
		switch e.Type {
		case event.ErrorEvent:
			if ctx.Err() != nil {
				return seen, nil
			}
			return nil, fmt.Errorf("watching status: %w", e.Error)
		case event.ResourceUpdateEvent:
			if e.Resource != nil {
				seen[e.Resource.Identifier] = e.Resource
				if progress != nil {
					if n := countCurrent(seen); n != reported {
						reported = n
						progress(n, len(ids))
					}
				}
			}
		}
		if settled(ids, seen) {
			return seen, nil
		}
	}
}

// blockers are the objects of targets not ready yet, with their own
// status; explain adds their pods' problems.
func blockers(targets []Ref, seen map[object.ObjMetadata]*event.ResourceStatus) []ObjectStatus {
	var out []ObjectStatus
	for _, ref := range targets {
		rs := seen[objMeta(ref)]
		switch {
		case rs == nil || rs.Status == status.NotFoundStatus:
			out = append(out, ObjectStatus{Ref: ref, State: StateNotFound})
		case rs.Status == status.FailedStatus:
			out = append(out, ObjectStatus{Ref: ref, State: StateFailed, Message: summary(rs)})
		case rs.Status != status.CurrentStatus:
			out = append(out, ObjectStatus{Ref: ref, State: StateNotReady, Message: summary(rs)})
		}
	}
	return out
}

// settled: every object is Current, or one has Failed.
func settled(ids object.ObjMetadataSet, seen map[object.ObjMetadata]*event.ResourceStatus) bool {
	all := true
	for _, id := range ids {
		rs := seen[id]
		switch {
		case rs == nil:
			all = false
		case rs.Status == status.FailedStatus:
			return true
		case rs.Status != status.CurrentStatus:
			all = false
		}
	}
	return all
}

func objMeta(ref Ref) object.ObjMetadata {
	return object.ObjMetadata{
		GroupKind: schema.GroupKind{Group: ref.Group, Kind: ref.Kind},
		Namespace: ref.Namespace,
		Name:      ref.Name,
	}
}

func uniqueRefs(refs []Ref) []Ref {
	seen := make(map[Ref]bool, len(refs))
	out := make([]Ref, 0, len(refs))
	for _, r := range refs {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// summary is the object's own not-ready reason. For workloads a replica
// count says more than kstatus's condition reasons.
func summary(rs *event.ResourceStatus) string {
	if rs.Status == status.FailedStatus || rs.Resource == nil || rs.Resource.GetDeletionTimestamp() != nil {
		return statusMessage(rs)
	}
	obj := rs.Resource.UnstructuredContent()
	count := func(path string, def int) int { return status.GetIntField(obj, path, def) }
	var have, want int
	var what string
	switch rs.Resource.GroupVersionKind().GroupKind() {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}, schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}:
		have, want, what = count(".status.availableReplicas", 0), count(".spec.replicas", 1), "replicas available"
	case schema.GroupKind{Group: "apps", Kind: "StatefulSet"}:
		have, want, what = count(".status.readyReplicas", 0), count(".spec.replicas", 1), "replicas ready"
	case schema.GroupKind{Group: "apps", Kind: "DaemonSet"}:
		have, want, what = count(".status.numberAvailable", 0), count(".status.desiredNumberScheduled", 0), "pods available"
	default:
		return statusMessage(rs)
	}
	if have >= want || !observed(rs.Resource) {
		return statusMessage(rs) // rollout or controller lag: kstatus says which
	}
	return fmt.Sprintf("%d/%d %s", have, want, what)
}

func observed(u *unstructured.Unstructured) bool {
	gen := u.GetGeneration()
	og, found, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	return !found || og >= gen
}

func statusMessage(rs *event.ResourceStatus) string {
	switch {
	case rs.Error != nil:
		return rs.Error.Error()
	case rs.Message != "":
		return rs.Message
	}
	return rs.Status.String()
}

func countCurrent(seen map[object.ObjMetadata]*event.ResourceStatus) int {
	n := 0
	for _, rs := range seen {
		if rs.Status == status.CurrentStatus {
			n++
		}
	}
	return n
}
