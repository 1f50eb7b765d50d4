package pipeline

import (
	"context"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// Gates run in the background, never inside a Pipeline's reconcile: a
// test gate waits for its test pods (minutes, up to the releases'
// timeout), and a reconcile that waited with it wrote no status and
// listed no tags meanwhile. A reconcile starts a gate's run, sees it
// running (the stage says since when) and takes its verdict once it
// ended; the run's end enqueues the Pipeline.

// gateKey names one run of a gate: which Pipeline (and which of its
// generations), stage, gate and digest. A run of another generation or
// digest is never taken for this one.
type gateKey struct {
	pipeline   types.NamespacedName
	generation int64
	stage      string
	gate       int
	digest     string
}

// gateRun is one gate's run in the background.
type gateRun struct {
	started, ended time.Time
	cancel         context.CancelFunc
	done           bool
	verdict        gateVerdict
}

// gateRunner holds the gates running and the verdicts not yet taken.
type gateRunner struct {
	mu   sync.Mutex
	runs map[gateKey]*gateRun
	// stopped: the controller stops (or lost its leadership); no run
	// starts any more.
	stopped bool
	wg      sync.WaitGroup
	enqueue chan event.GenericEvent
	// now is the clock the runs' start times are read from.
	now func() time.Time
}

func newGateRunner() *gateRunner {
	return &gateRunner{runs: map[gateKey]*gateRun{}, enqueue: make(chan event.GenericEvent, 64), now: time.Now}
}

// verdict is the gate's verdict as of since or later: that of a run
// under way (Pending, with its start), or of one that ended at since or
// later (kept until a reconcile no longer asks for it), or else of a run
// started now with eval (Pending).
func (g *gateRunner) verdict(k gateKey, since time.Time, p *v1alpha1.Pipeline, eval func(context.Context) gateVerdict) gateVerdict {
	g.mu.Lock()
	defer g.mu.Unlock()
	if run, ok := g.runs[k]; ok {
		switch {
		case !run.done:
			return gateVerdict{Pending: true, Running: run.started}
		case !run.ended.Before(since):
			return run.verdict
		}
		delete(g.runs, k)
	}
	if g.stopped {
		return gateVerdict{Pending: true}
	}
	// The run outlives the reconcile that starts it: it ends with its
	// verdict, or when cancelled (prune, stop).
	ctx, cancel := context.WithCancel(context.Background())
	run := &gateRun{started: g.now(), cancel: cancel}
	g.runs[k] = run
	obj := p.DeepCopy()
	g.wg.Go(func() {
		defer cancel()
		v := eval(ctx)
		g.mu.Lock()
		if g.runs[k] == run {
			if v.Pending {
				// Not run (the Stack's own reconcile holds its lock):
				// the Pipeline's requeue, seconds away, starts it again.
				delete(g.runs, k)
			} else {
				run.done, run.verdict, run.ended = true, v, g.now()
			}
		}
		g.mu.Unlock()
		if ctx.Err() == nil && !v.Pending {
			select {
			case g.enqueue <- event.GenericEvent{Object: obj}:
			default:
				// The queue is full: the Pipeline's requeue, a few
				// seconds away, finds the verdict.
			}
		}
	})
	return gateVerdict{Pending: true, Running: run.started}
}

// prune cancels and forgets the runs of a Pipeline that its last
// reconcile did not ask for (keep): a stage that moved to another
// digest, failed or was verified, a generation gone, a Pipeline deleted
// (keep nil).
func (g *gateRunner) prune(p types.NamespacedName, keep map[gateKey]bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k, run := range g.runs {
		if k.pipeline == p && !keep[k] {
			run.cancel()
			delete(g.runs, k)
		}
	}
}

// stop cancels every run, starts none any more, and waits for them to
// end, at most for wait.
func (g *gateRunner) stop(wait time.Duration) {
	g.mu.Lock()
	g.stopped = true
	for k, run := range g.runs {
		run.cancel()
		delete(g.runs, k)
	}
	g.mu.Unlock()
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(wait):
	}
}
