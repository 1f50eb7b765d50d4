package stack

import (
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Whatever its spec, a Stack is planned at most every --min-interval,
// and says so when its interval is clamped (a Pipeline likewise:
// controller.TestPipelineOptions).
func TestIntervalClamped(t *testing.T) {
	r := &reconciler{opts: Options{}}
	st := &v1alpha1.Stack{Spec: v1alpha1.StackSpec{Interval: &metav1.Duration{Duration: time.Millisecond}}}
	if got := r.interval(st); got != DefaultMinInterval {
		t.Errorf("interval 1ms: planned every %s, want %s", got, DefaultMinInterval)
	}
	if w := r.intervalWarning(st); w != "spec.interval 1ms is shorter than the controller's --min-interval: planned every 1m0s" {
		t.Errorf("warning %q", w)
	}
	st.Spec.Interval.Duration = 10 * time.Minute
	if got, w := r.interval(st), r.intervalWarning(st); got != 10*time.Minute || w != "" {
		t.Errorf("interval 10m: every %s, warning %q", got, w)
	}
	st.Spec.Interval = nil
	if got := r.interval(st); got != v1alpha1.DefaultInterval {
		t.Errorf("no interval: every %s", got)
	}
	r.opts.MinInterval = time.Second
	st.Spec.Interval = &metav1.Duration{Duration: 2 * time.Second}
	if got := r.interval(st); got != 2*time.Second {
		t.Errorf("--min-interval 1s, interval 2s: every %s", got)
	}
}
