package stack

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/run/apply"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReasonProgressing: a reconcile is under way (Reconciling=True, and
// Ready=Unknown while it applies).
const ReasonProgressing = "Progressing"

// progressInterval is how often a running reconcile writes its phase at
// most. A reconcile shorter than that writes none, but for the start of
// an apply, which is written before the cluster changes.
const progressInterval = time.Second

// progress writes a running reconcile's phase into the Stack's status:
// Reconciling=True with "pulling …", "planning", "applying 1/3: …"; while
// it applies, Ready=Unknown, so that no Stack says Ready for the previous
// plan while the cluster changes, nor after the controller died in the
// middle. Writes are throttled. Safe for concurrent use (apply steps run
// in parallel).
type progress struct {
	c client.Client

	mu      sync.Mutex
	base    *v1alpha1.Stack // the status the API server has, as last written
	phase   string
	applied bool // the phase is an apply: Ready is Unknown
	written string

	stopped, done chan struct{}
}

type progressKey struct{}

// withProgress starts the progress of the reconcile of st (as read); stop
// ends it.
func withProgress(ctx context.Context, c client.Client, st *v1alpha1.Stack) (context.Context, *progress) {
	p := &progress{c: c, base: st.DeepCopy(), stopped: make(chan struct{}), done: make(chan struct{})}
	ctx = context.WithValue(ctx, progressKey{}, p)
	go func() {
		defer close(p.done)
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		for {
			select {
			case <-p.stopped:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				p.flush(ctx)
			}
		}
	}()
	return ctx, p
}

// stop ends the writes; the caller writes the final status next.
func (p *progress) stop() {
	close(p.stopped)
	<-p.done
}

// progressOf is the reconcile's progress (nil outside one: reporting does
// nothing).
func progressOf(ctx context.Context) *progress {
	p, _ := ctx.Value(progressKey{}).(*progress)
	return p
}

// report records the phase, written within progressInterval; now writes
// it at once.
func (p *progress) report(ctx context.Context, phase string, applying, now bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.phase, p.applied = phase, applying
	if now {
		p.writeLocked(ctx)
	}
}

// flush writes the last phase reported unless it is written already.
func (p *progress) flush(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.phase != "" && p.phase != p.written {
		p.writeLocked(ctx)
	}
}

func (p *progress) writeLocked(ctx context.Context) {
	next := p.base.DeepCopy()
	setCond(next, v1alpha1.CondReconciling, metav1.ConditionTrue, ReasonProgressing, p.phase)
	if r := findCond(next, v1alpha1.CondReady); p.applied || r == nil {
		setCond(next, v1alpha1.CondReady, metav1.ConditionUnknown, ReasonProgressing, p.phase)
	}
	removeCond(next, v1alpha1.CondStalled)
	next.Status.ObservedGeneration = next.Generation
	if err := p.c.Status().Patch(ctx, next, client.MergeFrom(p.base)); err != nil {
		return // the final status is written anyway
	}
	// The final patch is computed from base: its metadata stays the
	// object's as read, so that the patch carries no resourceVersion.
	next.ObjectMeta = p.base.ObjectMeta
	p.base, p.written = next, p.phase
}

// Base is the status as last written: the reconcile's final patch is
// computed from it, so that it replaces what progress wrote.
func (p *progress) Base() *v1alpha1.Stack {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.base
}

// pulling, planning and applying report the reconcile's phases.
func pulling(ctx context.Context, source string) {
	progressOf(ctx).report(ctx, "pulling "+source, false, false)
}

func planning(ctx context.Context, ref string) {
	progressOf(ctx).report(ctx, "planning "+ref, false, false)
}

// applying is written at once: before the cluster changes, the Stack
// stops saying Ready.
func applying(ctx context.Context, digest string) {
	progressOf(ctx).report(ctx, "applying plan "+digest, true, true)
}

// applyProgress is an apply's view that reports "applying N/M".
func applyProgress(ctx context.Context, digest string) func([]apply.Row) apply.Progress {
	return func(rows []apply.Row) apply.Progress {
		return &applyView{ctx: ctx, digest: digest, total: len(rows), running: map[string]bool{}}
	}
}

// applyView counts the apply's finished steps. It holds the reconcile's
// context: apply.Progress has none, and the view lives no longer than
// the apply.
type applyView struct {
	ctx     context.Context
	digest  string
	total   int
	mu      sync.Mutex
	done    int
	running map[string]bool
}

func (v *applyView) Event(release.Event) {}

func (v *applyView) Started(id string) {
	v.mu.Lock()
	v.running[id] = true
	v.mu.Unlock()
	v.report()
}

func (v *applyView) Finished(id string, _ apply.Outcome) { v.end(id) }
func (v *applyView) Skipped(id, _ string)                { v.end(id) }
func (v *applyView) Close()                              {}

func (v *applyView) end(id string) {
	v.mu.Lock()
	delete(v.running, id)
	v.done++
	v.mu.Unlock()
	v.report()
}

func (v *applyView) report() {
	v.mu.Lock()
	msg := fmt.Sprintf("applying plan %s: %d/%d releases done", v.digest, v.done, v.total)
	if len(v.running) > 0 {
		ids := make([]string, 0, len(v.running))
		for id := range v.running {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		msg += "; running " + strings.Join(ids, ", ")
	}
	v.mu.Unlock()
	progressOf(v.ctx).report(v.ctx, msg, true, false)
}

// appliedSummary says what an applied plan did, for status.plan.summary
// (the PLAN column): what is true now, no longer what was to do.
func appliedSummary(p *plan.Plan) string {
	if p == nil {
		return "applied"
	}
	s := p.Summary()
	var parts []string
	for _, c := range []struct {
		n    int
		verb string
	}{{s.Install, "installed"}, {s.Upgrade, "upgraded"}, {s.Uninstall, "uninstalled"}, {s.Forget, "forgotten"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.verb))
		}
	}
	if len(parts) == 0 {
		return "applied: no changes"
	}
	return "applied: " + strings.Join(parts, ", ")
}

// applyErrored records an apply of the plan of digest that failed before
// any release was touched: it stays in lastError until an apply succeeds
// (an apply that ran and failed is applyFailed, which retries it).
func (r *reconciler) applyErrored(sr *stackRun, p *plan.Plan, digest string, err error) outcome {
	sr.st.Status.LastFailedPlan = digest
	return r.failed(sr, p, v1alpha1.ReasonApplyFailed, err)
}

// clearError clears lastError when a reconcile went well, but for the
// failure of the last apply: that stays visible until an apply succeeds.
func clearError(st *v1alpha1.Stack) {
	if st.Status.LastFailedPlan == "" {
		st.Status.LastError = ""
	}
}
