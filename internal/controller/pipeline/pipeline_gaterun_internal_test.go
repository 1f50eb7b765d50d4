package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A gate runs apart from the reconcile that asks for it: the asking
// returns at once (Pending, since when it runs), the run's end enqueues
// the Pipeline, and the verdict is taken by the next ask; a run no
// reconcile asks for any more is cancelled.
func TestGateRunsInTheBackground(t *testing.T) {
	g := newGateRunner()
	defer g.stop(time.Second)
	p := &v1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "shop", Generation: 2}}
	k := gateKey{pipeline: types.NamespacedName{Namespace: "apps", Name: "shop"}, generation: 2, stage: "staging", digest: "sha256:aa"}
	release := make(chan struct{})
	runs := 0
	eval := func(ctx context.Context) gateVerdict {
		runs++
		select {
		case <-release:
			return gateVerdict{Failed: true, Output: "app-test: failed"}
		case <-ctx.Done():
			return gateVerdict{Failed: true, Output: ctx.Err().Error()}
		}
	}
	start := time.Now()
	v := g.verdict(k, start, p, eval)
	if !v.Pending || v.Running.IsZero() {
		t.Fatalf("first ask: %+v, want Pending with its start", v)
	}
	if again := g.verdict(k, start, p, eval); !again.Pending || !again.Running.Equal(v.Running) {
		t.Fatalf("ask while it runs: %+v, want the same run", again)
	}
	close(release)
	select {
	case ev := <-g.enqueue:
		if ev.Object.GetName() != "shop" || ev.Object.GetNamespace() != "apps" {
			t.Fatalf("enqueued %s/%s", ev.Object.GetNamespace(), ev.Object.GetName())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run's end enqueued nothing")
	}
	if got := g.verdict(k, start, p, eval); got.Pending || !got.Failed || got.Output != "app-test: failed" {
		t.Fatalf("ask after the run: %+v", got)
	}
	if runs != 1 {
		t.Fatalf("%d runs, want 1", runs)
	}
	// A verdict older than asked for is not taken: the gate runs again,
	// until no reconcile asks for it.
	if got := g.verdict(k, time.Now().Add(time.Hour), p, eval); !got.Pending {
		t.Fatalf("ask for a newer verdict: %+v", got)
	}
	other := k
	other.digest = "sha256:bb"
	g.prune(k.pipeline, map[gateKey]bool{other: true})
	g.wg.Wait() // the cancelled run ended
	select {
	case <-g.enqueue:
		t.Fatal("a cancelled run enqueued its Pipeline")
	default:
	}
	g.mu.Lock()
	n := len(g.runs)
	g.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d runs left after the prune", n)
	}
}
