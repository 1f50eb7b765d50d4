package stack

import (
	"fmt"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
)

// minInterval is the controller's --min-interval.
func (o Options) minInterval() time.Duration {
	if o.MinInterval > 0 {
		return o.MinInterval
	}
	return DefaultMinInterval
}

// clampInterval is the interval a spec asks for, never less than min.
// clamped says the spec asked for less.
func clampInterval(spec, min time.Duration) (d time.Duration, clamped bool) {
	if spec < min {
		return min, true
	}
	return spec, false
}

// interval is how often the Stack is planned: its spec's interval, at
// least --min-interval, whatever the spec says (a Stack stored before the
// CRD had a minimum, or a CRD installed with a lower one).
func (r *reconciler) interval(st *v1alpha1.Stack) time.Duration {
	d, _ := clampInterval(st.Spec.IntervalOrDefault().Duration, r.opts.minInterval())
	return d
}

// intervalWarning says so when the Stack's interval is clamped ("": it is
// not).
func (r *reconciler) intervalWarning(st *v1alpha1.Stack) string {
	spec := st.Spec.IntervalOrDefault().Duration
	d, clamped := clampInterval(spec, r.opts.minInterval())
	if !clamped {
		return ""
	}
	return fmt.Sprintf("spec.interval %s is shorter than the controller's --min-interval: planned every %s", spec, d)
}

// DefaultMinInterval is ctl.DefaultMinInterval: the controller's
// --min-interval unless set.
const DefaultMinInterval = ctl.DefaultMinInterval
