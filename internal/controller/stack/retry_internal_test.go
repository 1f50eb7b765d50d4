package stack

import (
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestRetryPolicyAndDelay(t *testing.T) {
	zero, five := int32(0), int32(5)
	for _, tc := range []struct {
		name     string
		retry    *v1alpha1.RetrySpec
		attempts int
		backoff  time.Duration
	}{
		{"defaults", nil, 3, 30 * time.Second},
		{"never", &v1alpha1.RetrySpec{Attempts: &zero}, 0, 30 * time.Second},
		{"set", &v1alpha1.RetrySpec{Attempts: &five, Backoff: &metav1.Duration{Duration: time.Second}}, 5, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := retryPolicy(&v1alpha1.StackSpec{Retry: tc.retry})
			if a != tc.attempts || b != tc.backoff {
				t.Errorf("got %d attempts, backoff %s", a, b)
			}
		})
	}
	// 30s doubling, capped at the interval.
	var got []time.Duration
	for n := 1; n <= 5; n++ {
		got = append(got, retryDelay(30*time.Second, 5*time.Minute, n))
	}
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 5 * time.Minute}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delays %v, want %v", got, want)
		}
	}
}

// A Stack's failures back off no longer than its interval: a missing tag
// pushed later is seen within an interval.
func TestErrorBackoffCappedAtTheInterval(t *testing.T) {
	b := newIntervalBackoff()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "shop"}}
	other := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "other"}}
	b.capAt(req, time.Minute)
	var last, lastOther time.Duration
	for range 30 {
		last, lastOther = b.When(req), b.When(other)
	}
	if last != time.Minute {
		t.Errorf("after 30 failures the wait is %s, want the interval", last)
	}
	if lastOther <= time.Minute {
		t.Errorf("a Stack without a cap waits %s: the test shows nothing", lastOther)
	}
	b.forget(req)
	if d := b.When(req); d >= time.Second {
		t.Errorf("forgotten, the first wait is %s", d)
	}
}

func TestSourceRepository(t *testing.T) {
	for src, want := range map[string]string{
		"oci://r.example/stacks/shop:v1":                          "oci://r.example/stacks/shop",
		"oci://127.0.0.1:5000/stacks/shop:v1":                     "oci://127.0.0.1:5000/stacks/shop",
		"oci://127.0.0.1:5000/stacks/shop":                        "oci://127.0.0.1:5000/stacks/shop",
		"oci://r.example/stacks/shop:v1@sha256:" + "ab":           "oci://r.example/stacks/shop",
		"oci://127.0.0.1:5000/stacks/shop@sha256:" + "0123456789": "oci://127.0.0.1:5000/stacks/shop",
	} {
		if got := sourceRepository(src); got != want {
			t.Errorf("%s: %s, want %s", src, got, want)
		}
	}
}
