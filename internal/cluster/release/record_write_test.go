package release

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// flaky is a Driver whose next writes fail with a transport error, after
// (lost answer) or before (unreachable server) reaching the records.
type flaky struct {
	*Memory
	// lostAnswers: the next writes take effect, but the caller hears an
	// error. unreachable: the next writes fail without effect.
	lostAnswers, unreachable int
	writes                   int
}

var errTransport = errors.New("net/http: TLS handshake timeout")

func (f *flaky) write(do func() error) error {
	f.writes++
	switch {
	case f.unreachable > 0:
		f.unreachable--
		return errTransport
	case f.lostAnswers > 0:
		f.lostAnswers--
		if err := do(); err != nil {
			return err
		}
		return errTransport
	}
	return do()
}

func (f *flaky) Create(ctx context.Context, key string, r *Release) error {
	return f.write(func() error { return f.Memory.Create(ctx, key, r) })
}

func (f *flaky) Update(ctx context.Context, key string, r *Release) error {
	return f.write(func() error { return f.Memory.Update(ctx, key, r) })
}

func pending(name string, version int, run string) *Release {
	r := rec(name, version, StatusPendingUpgrade)
	r.Labels = map[string]string{RunLabel: run, StackLabel: "shop"}
	return r
}

func TestCreateRecordWhoseAnswerWasLostIsOurs(t *testing.T) {
	d := &flaky{Memory: NewMemory(), lostAnswers: 1}
	e := &Engine{grace: time.Second}
	if err := e.createRecord(context.Background(), &Storage{Driver: d}, pending("api", 2, "run-a")); err != nil {
		t.Fatalf("a record created by a lost attempt was not recognised: %v", err)
	}
	if d.writes != 2 {
		t.Fatalf("%d writes, want 2", d.writes)
	}
}

func TestCreateRecordOfAnotherOperationIsRefused(t *testing.T) {
	d := &flaky{Memory: NewMemory()}
	store := &Storage{Driver: d}
	if err := store.Create(context.Background(), pending("api", 2, "run-other")); err != nil {
		t.Fatal(err)
	}
	e := &Engine{grace: time.Second}
	// First attempt: the revision exists. Another operation made it.
	if err := e.createRecord(context.Background(), store, pending("api", 2, "run-a")); !errors.Is(err, ErrReleaseExists) {
		t.Fatalf("got %v, want ErrReleaseExists", err)
	}
	// A retried attempt that finds another run's record refuses too.
	d.unreachable = 1
	if err := e.createRecord(context.Background(), store, pending("api", 2, "run-a")); !errors.Is(err, ErrReleaseExists) {
		t.Fatalf("after a failed attempt: got %v, want ErrReleaseExists", err)
	}
}

func TestCreateRecordWithoutAnswerSaysItMayExist(t *testing.T) {
	d := &flaky{Memory: NewMemory(), unreachable: 1 << 20}
	e := &Engine{grace: 300 * time.Millisecond}
	err := e.createRecord(context.Background(), &Storage{Driver: d}, pending("api", 2, "run-a"))
	var re *RecordError
	if !errors.As(err, &re) || !re.Unknown || !strings.Contains(err.Error(), "may have been recorded as pending-upgrade") ||
		!strings.Contains(err.Error(), "interrupted run run-a") || !errors.Is(err, errTransport) {
		t.Fatalf("got %v", err)
	}
}

func TestWriteFinalRetriesAndOutlivesTheContext(t *testing.T) {
	d := &flaky{Memory: NewMemory()}
	store := &Storage{Driver: d}
	r := pending("api", 2, "run-a")
	if err := store.Create(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Ctrl-C: the final state is written all the same
	d.unreachable = 2
	e := &Engine{grace: 5 * time.Second}
	if err := e.writeFinal(ctx, store, r, StatusFailed, "Upgrade failed: interrupted"); err != nil {
		t.Fatal(err)
	}
	got, _ := store.Get(context.Background(), "api", 2)
	if got.Info.Status != StatusFailed || d.writes != 4 {
		t.Fatalf("record %s after %d writes", got.Info.Status, d.writes)
	}
}

func TestWriteFinalThatFailsLeavesTheReleaseAsRecorded(t *testing.T) {
	d := &flaky{Memory: NewMemory()}
	store := &Storage{Driver: d}
	r := pending("api", 2, "run-a")
	if err := store.Create(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	d.unreachable = 1 << 20
	e := &Engine{grace: 300 * time.Millisecond}
	start := time.Now()
	err := e.writeFinal(context.Background(), store, r, StatusDeployed, "Upgrade complete")
	var re *RecordError
	if !errors.As(err, &re) || re.Left != StatusPendingUpgrade || re.Want != StatusDeployed {
		t.Fatalf("got %v", err)
	}
	// What the caller reports is what the record says.
	if r.Info.Status != StatusPendingUpgrade {
		t.Fatalf("in memory %s, recorded pending-upgrade", r.Info.Status)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the grace period of 300ms took %s", d)
	}
	for _, want := range []string{"could not be recorded as deployed", "its record says pending-upgrade", "convoy apply", "convoy recover api", "TLS handshake timeout"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

func TestRetryStopsAtAFinalAnswer(t *testing.T) {
	n := 0
	err := Retry(context.Background(), time.Second, func(context.Context) error { n++; return ErrReleaseNotFound })
	if !errors.Is(err, ErrReleaseNotFound) || n != 1 {
		t.Fatalf("%v after %d attempts", err, n)
	}
	n = 0
	err = Retry(context.Background(), time.Second, func(context.Context) error {
		if n++; n < 3 {
			return syscall.ECONNREFUSED
		}
		return nil
	})
	if err != nil || n != 3 {
		t.Fatalf("%v after %d attempts", err, n)
	}
}

func TestWriteFinalNeverOverwritesAnotherOperationsRecord(t *testing.T) {
	d := &flaky{Memory: NewMemory()}
	store := &Storage{Driver: d}
	mine := pending("web-00", 14, "run-a")
	if err := store.Create(context.Background(), mine); err != nil {
		t.Fatal(err)
	}
	theirs, _ := store.Get(context.Background(), "web-00", 14)
	e := &Engine{grace: 5 * time.Second}
	if err := e.writeFinal(context.Background(), store, theirs, StatusFailed, "Interrupted run run-a: marked failed by run run-b"); err != nil {
		t.Fatal(err)
	}
	d.writes = 0
	err := e.writeFinal(context.Background(), store, mine, StatusDeployed, "Upgrade complete")
	var re *RecordError
	if !errors.As(err, &re) || !errors.Is(err, ErrRecordChanged) || !strings.Contains(err.Error(), "another operation wrote its record") {
		t.Fatalf("got %v", err)
	}
	if d.writes != 1 {
		t.Fatalf("a conflict was retried: %d writes", d.writes)
	}
	if got, _ := store.Get(context.Background(), "web-00", 14); got.Info.Status != StatusFailed {
		t.Fatalf("the record says %s, want failed (the other run's)", got.Info.Status)
	}
}

func TestWriteFinalWhoseAnswerWasLostIsOurs(t *testing.T) {
	d := &flaky{Memory: NewMemory()}
	store := &Storage{Driver: d}
	r := pending("api", 2, "run-a")
	if err := store.Create(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	// The write lands but its answer is lost: the retry is refused as a
	// conflict, with this operation's own write.
	d.lostAnswers = 1
	e := &Engine{grace: 5 * time.Second}
	if err := e.writeFinal(context.Background(), store, r, StatusDeployed, "Upgrade complete"); err != nil {
		t.Fatalf("a write that landed unanswered was not recognised: %v", err)
	}
	// And r is the record as written: the next update is conditional on it.
	if err := e.writeFinal(context.Background(), store, r, StatusSuperseded, "Upgrade complete"); err != nil {
		t.Fatal(err)
	}
}

func TestFenceStopsEveryRecordWrite(t *testing.T) {
	store := &Storage{Driver: NewMemory()}
	r := pending("api", 2, "run-a")
	if err := store.Create(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	lost := fmt.Errorf("the lock of stack %q was taken over: %w", "shop", ErrNotHeld)
	ctx := WithFence(context.Background(), func(context.Context) error { return lost })
	e := &Engine{grace: 5 * time.Second}
	start := time.Now()
	err := e.writeFinal(ctx, store, r, StatusDeployed, "Upgrade complete")
	if !errors.Is(err, ErrNotHeld) || !strings.Contains(err.Error(), `the lock of stack "shop" was taken over`) || time.Since(start) > time.Second {
		t.Fatalf("got %v after %s", err, time.Since(start))
	}
	if err := store.Create(ctx, pending("api", 3, "run-a")); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("create: %v", err)
	}
	if err := store.Delete(ctx, "api", 2); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("delete: %v", err)
	}
	if got, _ := store.Get(context.Background(), "api", 2); got.Info.Status != StatusPendingUpgrade {
		t.Fatalf("record %s", got.Info.Status)
	}
}

// payloads is a flaky Driver that notes the payload each attempt writes.
type payloads struct {
	*flaky
	seen []string
}

func (p *payloads) Create(ctx context.Context, key string, r *Release) error {
	b, _ := r.encoded()
	p.seen = append(p.seen, b)
	return p.flaky.Create(ctx, key, r)
}

func (p *payloads) Update(ctx context.Context, key string, r *Release) error {
	b, _ := r.encoded()
	p.seen = append(p.seen, b)
	return p.flaky.Update(ctx, key, r)
}

// A write's attempts send the record encoded once (a large record took an
// attempt's few seconds to encode again on a busy machine), the payload
// the release encodes to; the release does not keep it after the write.
func TestRecordWriteAttemptsEncodeOnce(t *testing.T) {
	d := &payloads{flaky: &flaky{Memory: NewMemory(), unreachable: 2}}
	store := &Storage{Driver: d}
	e := &Engine{grace: 5 * time.Second}
	r := pending("api", 2, "run-a")
	if err := e.createRecord(context.Background(), store, r); err != nil {
		t.Fatal(err)
	}
	d.unreachable = 2
	if err := e.writeFinal(context.Background(), store, r, StatusDeployed, "Upgrade complete"); err != nil {
		t.Fatal(err)
	}
	if len(d.seen) != 6 {
		t.Fatalf("%d attempts, want 6", len(d.seen))
	}
	for i, write := range [][]string{d.seen[:3], d.seen[3:]} {
		for _, p := range write {
			if unsafe.StringData(p) != unsafe.StringData(write[0]) {
				t.Fatalf("write %d: its attempts encoded the record again", i+1)
			}
		}
	}
	want, err := encode(r)
	if err != nil {
		t.Fatal(err)
	}
	if d.seen[5] != want {
		t.Fatal("the final write's payload is not the release's encoding")
	}
	if r.payload != "" {
		t.Fatal("the release kept its payload after the write")
	}
}
