package controller

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/deploy"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The CRDs refuse intervals under 1m; installed with another minimum,
// the rule and its message say that one.
func TestCRDIntervalMinimum(t *testing.T) {
	for name, crd := range map[string][]byte{"stacks": deploy.CRD, "pipelines": deploy.PipelineCRD} {
		if !bytes.Contains(crd, []byte(minIntervalRule)) || !bytes.Contains(crd, []byte(minIntervalMessage)) {
			t.Errorf("%s: the CRD has no rule %q", name, minIntervalRule)
		}
		got := string(crdWithMinInterval(crd, 10*time.Second))
		if !strings.Contains(got, "duration(self) >= duration('10s')") || !strings.Contains(got, "the minimum of 10s") || strings.Contains(got, minIntervalRule) {
			t.Errorf("%s with --min-interval 10s: the rule is not lowered", name)
		}
		if got := crdWithMinInterval(crd, 0); !bytes.Equal(got, crd) {
			t.Errorf("%s: the default minimum changed the CRD", name)
		}
	}
}

// Whatever its spec, a Stack is planned at most every --min-interval,
// and says so when its interval is clamped; a Pipeline likewise.
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
	p := &v1alpha1.Pipeline{Spec: v1alpha1.PipelineSpec{Interval: &metav1.Duration{Duration: time.Millisecond}}}
	if got := (Options{}).pipelineInterval(p); got != DefaultMinInterval {
		t.Errorf("Pipeline interval 1ms: every %s", got)
	}
}
