package devtest

import (
	"testing"
	"time"
)

// Eventually calls cond until it returns true, and fails t (Fatal) with
// what failure returns if it has not within timeout. It polls at 10 ms,
// then less often, up to every 250 ms: the API server and the other
// tests share the machine. cond runs on the test's goroutine, so it may
// call t.Fatal itself; failure is called once, when time is up, so it can
// describe the last state cond saw.
//
//	devtest.Eventually(t, 30*time.Second, func() bool {
//		got = names(t, in)
//		return slices.Equal(got, want)
//	}, func() string { return fmt.Sprintf("names = %v, want %v", got, want) })
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, failure func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	poll := 10 * time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(failure())
		}
		time.Sleep(poll)
		poll = min(2*poll, 250*time.Millisecond)
	}
}
