package stacklock

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/user"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Lock namespace, annotations and timing. The Lease lives in "default",
// which every cluster has, whatever namespaces the stack's releases use.
const (
	Namespace       = "default"
	annoLockHost    = "convoy.dev/host"
	annoLockCommand = "convoy.dev/command"
	annoLockPid     = "convoy.dev/pid"
	annoLockPidNS   = "convoy.dev/pid-namespace"
	annoLockRun     = "convoy.dev/run"
	annoLockEnv     = "convoy.dev/environment"
	// annoTookOver names the run whose lock this one took over; a lock
	// that took over another is left, when released, as a record of who
	// held it (annoReleased, annoHolder), so that the run it was taken
	// from can name its successor once it goes on.
	annoTookOver = "convoy.dev/took-over"
	annoReleased = "convoy.dev/released"
	annoHolder   = "convoy.dev/holder"
	// Duration is how long a holder that stopped renewing its Lease
	// keeps it: after that, the lock is expired and the next run takes it
	// over.
	Duration       = 30 * time.Second
	lockRenewEvery = 10 * time.Second
	// DefaultGrace is how long writing a release's final state and
	// releasing the lock may go on after the run's context ended.
	DefaultGrace = 30 * time.Second
)

// Name is the Lease name of a stack's lock, given its identity's Key: a
// stack ID keeps the name it always had; a key scoped to a namespace
// (NAMESPACE/ID) always ends in a hash of the key, so that team-a/x-y and
// team-a-x/y, written alike, are two locks.
func Name(key string) string {
	name := "convoy-stack-" + strings.Trim(invalidName.ReplaceAllString(strings.ToLower(key), "-"), "-")
	if len(name) > 63 || name == "convoy-stack-" || strings.Contains(key, "/") {
		sum := sha256.Sum256([]byte(key))
		name = name[:min(len(name), 50)] + "-" + hex.EncodeToString(sum[:])[:10]
	}
	return name
}

var invalidName = regexp.MustCompile(`[^a-z0-9-]+`)

// NewRunID returns a fresh run identity: the id of the run's lock and the
// release.RunLabel of the records it writes.
func NewRunID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Options say who takes a stack's lock.
type Options struct {
	// Command names the operation ("convoy apply").
	Command string
	// RunID is the run's identity (NewRunID): the lock's id, which
	// `convoy force-unlock LOCK_ID` names.
	RunID string
	// Announce is told when the lock of a holder that is gone is taken
	// over (nil: nobody is).
	Announce func(string)
	// Environment is the stack's environment ("" when it declares none):
	// the stack passed to Acquire is then its ID (config.Stack.ID), and the
	// Lease's annotations name the environment.
	Environment string
	// Timing is how long the Lease lasts unrenewed and how often it is
	// renewed (zero: Duration, renewed every third of it).
	Timing Timing
}

// Timing is a lock's timing. Tests shorten the duration, and stretch
// the renewals to stand for a process that stopped renewing (SIGSTOP).
type Timing struct {
	// Duration is how long the Lease is the holder's after its last
	// renewal (whole seconds, at least one; 0: Duration).
	Duration time.Duration
	// RenewEvery is how often the Lease is renewed in the background
	// (0: a third of Duration).
	RenewEvery time.Duration
}

func (t Timing) duration() time.Duration {
	if t.Duration <= 0 {
		return Duration
	}
	return max(t.Duration.Round(time.Second), time.Second)
}

func (t Timing) renewEvery() time.Duration {
	if t.RenewEvery <= 0 {
		return t.duration() / 3
	}
	return t.RenewEvery
}

// HeldError says another run holds the stack.
type HeldError struct {
	Stack, Environment, Holder, Host, Command string
	// LockID is the holder's run id (the Lease's UID for locks taken by
	// convoy versions that did not record one).
	LockID           string
	Since, LastRenew time.Time
	// Released is when the holder released the lock (zero: it holds
	// it): a lock taken over from another run is left as a record of
	// who took it.
	Released time.Time
	// Duration is how long the Lease lasts unrenewed.
	Duration time.Duration
}

func (e *HeldError) Error() string {
	renewed := ""
	if !e.LastRenew.IsZero() {
		renewed = fmt.Sprintf("; last renewed %s ago (it expires %s after that)", time.Since(e.LastRenew).Round(time.Second), cmp.Or(e.Duration, Duration))
	}
	env := ""
	if e.Environment != "" {
		env = fmt.Sprintf(" (environment %q)", e.Environment)
	}
	return fmt.Sprintf("stack %q%s is locked by %s (%s, run %s) since %s%s. If that run is gone: convoy force-unlock %s",
		e.Stack, env, e.Holder, e.Command, e.LockID, e.Since.Format(time.RFC3339), renewed, e.LockID)
}

// Lock is a held stack lock; Release it when done. While held, it is
// renewed in the background; Held says whether it still is, and Lost is
// closed once it is not (taken over after it expired, force-unlocked).
type Lock struct {
	client kubernetes.Interface
	stack  string
	name   string
	uid    types.UID // this acquisition's Lease; a re-created one is not ours
	runID  string
	holder string
	timing Timing
	// tookOver: this lock was taken over from another run, which may go
	// on and ask who took it (Release leaves a record).
	tookOver bool
	// stop ends the renewals, cancelling one under way.
	stop context.CancelFunc
	done sync.WaitGroup

	// confirming serialises confirmations (the renewals' and Held's).
	confirming sync.Mutex
	mu         sync.Mutex
	// confirmed is when the last confirmation that the Lease is ours was
	// sent (monotonic: the time a stopped process slept counts).
	confirmed time.Time
	// lostErr is set, and lost closed, once the Lease is not ours.
	lostErr *LostError
	lost    chan struct{}
}

// ID is the lock's id: the run id that force-unlock names.
func (l *Lock) ID() string { return l.runID }

// holderIdentity is who this process is, as a Lease records it.
type holderIdentity struct {
	user, host, pidNS string
	pid               int
}

func thisProcess() holderIdentity {
	id := holderIdentity{user: "unknown", pid: os.Getpid()}
	id.host, _ = os.Hostname()
	if u, err := user.Current(); err == nil {
		id.user = u.Username
	}
	// Two processes with one hostname and one pid are the same only in
	// the same pid namespace (containers may share a hostname).
	id.pidNS, _ = os.Readlink("/proc/self/ns/pid")
	return id
}

// Acquire takes the stack's lock on one cluster, or fails with a
// *HeldError naming the holder. A holder that is gone is taken over, and
// opts.Announce says so: on this host, when its process no longer exists;
// on any host, when it has not renewed the Lease for Duration. While
// held, the lock is renewed in the background.
func Acquire(ctx context.Context, client kubernetes.Interface, stack string, opts Options) (*Lock, error) {
	me := thisProcess()
	runID := opts.RunID
	if runID == "" {
		runID = NewRunID()
	}
	holder := fmt.Sprintf("%s@%s pid %d", me.user, me.host, me.pid)
	start := time.Now()
	now := metav1.NewMicroTime(start)
	secs := int32(opts.Timing.duration() / time.Second)
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name:      Name(stack),
			Namespace: Namespace,
			Labels:    map[string]string{"convoy.dev/stack-lock": "true"},
			Annotations: map[string]string{
				annoLockHost: me.host, annoLockCommand: opts.Command, "convoy.dev/stack": stack,
				annoLockPid: strconv.Itoa(me.pid), annoLockPidNS: me.pidNS, annoLockRun: runID, annoHolder: holder,
			},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       &holder,
			AcquireTime:          &now,
			RenewTime:            &now,
			LeaseDurationSeconds: &secs,
		},
	}
	if opts.Environment != "" {
		lease.Annotations[annoLockEnv] = opts.Environment
	}
	leases := client.CoordinationV1().Leases(Namespace)
	// A few rounds: a takeover can race with the holder's renewal or with
	// another run taking over too.
	for range 3 {
		created, err := leases.Create(ctx, lease, metav1.CreateOptions{})
		if err == nil {
			rctx, stop := context.WithCancel(context.Background())
			l := &Lock{client: client, stack: stack, name: lease.Name, uid: created.UID, runID: runID, holder: holder, timing: opts.Timing,
				stop: stop, confirmed: start, lost: make(chan struct{}), tookOver: lease.Annotations[annoTookOver] != ""}
			l.done.Add(1)
			go l.renew(rctx)
			return l, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("coordination.k8s.io/v1 Lease %s/%s: %w", Namespace, lease.Name, err)
		}
		cur, err := leases.Get(ctx, lease.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue // released meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("stack %q is locked (and reading the lock failed: %v)", stack, err)
		}
		le := lockedError(stack, cur)
		why := gone(cur, me, time.Now(), processExists)
		if why == "" {
			return nil, le
		}
		err = leases.Delete(ctx, cur.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cur.UID, ResourceVersion: &cur.ResourceVersion}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return nil, fmt.Errorf("take over the lock of stack %q from %s: %w", stack, le.Holder, err)
		}
		if released(cur) {
			continue // the record a finished run left: no holder to take over from
		}
		if err == nil {
			lease.Annotations[annoTookOver] = le.LockID
		}
		if err == nil && opts.Announce != nil {
			opts.Announce(fmt.Sprintf("took over the lock of stack %q from %s (%s, run %s, since %s): %s",
				stack, le.Holder, le.Command, le.LockID, le.Since.Format(time.RFC3339), why))
		}
	}
	return nil, fmt.Errorf("stack %q: the lock changed hands while taking it; try again", stack)
}

// lockedError describes the holder of a Lease.
// Holder is the run that holds the lock the Lease l records, as a
// *HeldError, or nil when that run is gone (the Lease expired, or its
// process on this host has exited): a lock the next run takes over.
func Holder(stack string, l *coordinationv1.Lease) *HeldError {
	if released(l) || gone(l, thisProcess(), time.Now(), processExists) != "" {
		return nil
	}
	return lockedError(stack, l)
}

func lockedError(stack string, cur *coordinationv1.Lease) *HeldError {
	le := &HeldError{Stack: stack, Environment: cur.Annotations[annoLockEnv], Host: cur.Annotations[annoLockHost], Command: cur.Annotations[annoLockCommand], LockID: lockID(cur)}
	le.Holder = cur.Annotations[annoHolder]
	if cur.Spec.HolderIdentity != nil {
		le.Holder = *cur.Spec.HolderIdentity
	}
	if at, err := time.Parse(time.RFC3339, cur.Annotations[annoReleased]); err == nil {
		le.Released = at
	}
	if cur.Spec.AcquireTime != nil {
		le.Since = cur.Spec.AcquireTime.Time
	}
	if cur.Spec.RenewTime != nil {
		le.LastRenew = cur.Spec.RenewTime.Time
	}
	if cur.Spec.LeaseDurationSeconds != nil {
		le.Duration = time.Duration(*cur.Spec.LeaseDurationSeconds) * time.Second
	}
	return le
}

// lockID is the run id a Lease records, or its UID when it records none.
func lockID(l *coordinationv1.Lease) string {
	if id := l.Annotations[annoLockRun]; id != "" {
		return id
	}
	return string(l.UID)
}

// gone says why a Lease's holder is gone ("" when it may be alive): its
// process no longer exists on this host, or it has not renewed the Lease
// within the Lease's duration.
func gone(l *coordinationv1.Lease, me holderIdentity, now time.Time, exists func(pid int) bool) string {
	if released(l) {
		return "its run has finished"
	}
	a := l.Annotations
	if pid, err := strconv.Atoi(a[annoLockPid]); err == nil && pid > 0 && a[annoLockHost] == me.host && a[annoLockPidNS] == me.pidNS && !exists(pid) {
		return fmt.Sprintf("its process (pid %d) no longer exists on this host", pid)
	}
	last := l.Spec.RenewTime
	if last == nil {
		last = l.Spec.AcquireTime
	}
	if last == nil || l.Spec.LeaseDurationSeconds == nil {
		return ""
	}
	d := time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	if age := now.Sub(last.Time); age > d {
		return fmt.Sprintf("it has not renewed the lock for %s (it expires after %s)", age.Round(time.Second), d)
	}
	return ""
}

// released reports whether a Lease is the record a finished run left of
// a lock it had taken over (Release): nobody holds it.
func released(l *coordinationv1.Lease) bool { return l.Annotations[annoReleased] != "" }

// liveHere is the pid of a Lease's holder when that process is running on
// this host, in this pid namespace (0: it is not, or cannot be told).
func liveHere(l *coordinationv1.Lease, me holderIdentity, exists func(pid int) bool) int {
	a := l.Annotations
	pid, err := strconv.Atoi(a[annoLockPid])
	if err != nil || pid <= 0 || a[annoLockHost] != me.host || a[annoLockPidNS] != me.pidNS || !exists(pid) {
		return 0
	}
	return pid
}

// renew renews the Lease until Release (ctx ends) or until it is no
// longer this acquisition's. A renewal that fails is retried on the next
// tick.
func (l *Lock) renew(ctx context.Context) {
	defer l.done.Done()
	t := time.NewTicker(l.timing.renewEvery())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.lost:
			return
		case <-t.C:
			actx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_ = l.confirm(actx)
			cancel()
		}
	}
}

// confirm reads the Lease and renews it if it is still this acquisition's:
// the same object (UID), holder and run. One that is not, or is gone,
// marks the lock lost. The renewal is conditional on the resourceVersion
// read, so a takeover between the read and the write is seen by the next
// confirmation, never overwritten. Other errors (the API server
// unreachable) leave the lock as it was.
func (l *Lock) confirm(ctx context.Context) error {
	l.confirming.Lock()
	defer l.confirming.Unlock()
	if err := l.LostErr(); err != nil {
		return err
	}
	leases := l.client.CoordinationV1().Leases(Namespace)
	sent := time.Now()
	cur, err := leases.Get(ctx, l.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return l.lose(nil)
	}
	if err != nil {
		return fmt.Errorf("coordination.k8s.io/v1 Lease %s/%s: %w", Namespace, l.name, err)
	}
	if !l.ours(cur) {
		return l.lose(cur)
	}
	now := metav1.NewMicroTime(time.Now())
	cur.Spec.RenewTime = &now
	if _, err := leases.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("coordination.k8s.io/v1 Lease %s/%s: %w", Namespace, l.name, err)
	}
	l.mu.Lock()
	l.confirmed = sent
	l.mu.Unlock()
	return nil
}

// ours reports whether a Lease is this acquisition's.
func (l *Lock) ours(cur *coordinationv1.Lease) bool {
	return cur.UID == l.uid && cur.Spec.HolderIdentity != nil && *cur.Spec.HolderIdentity == l.holder && cur.Annotations[annoLockRun] == l.runID
}

// lose marks the lock lost to the holder of cur (nil: the Lease is gone).
func (l *Lock) lose(cur *coordinationv1.Lease) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lostErr == nil {
		l.lostErr = &LostError{Stack: l.stack, RunID: l.runID}
		if cur != nil {
			l.lostErr.By = lockedError(l.stack, cur)
		}
		close(l.lost)
	}
	return l.lostErr
}

// LostErr is why the lock was lost (a *LostError), nil while it is held.
func (l *Lock) LostErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lostErr == nil {
		return nil // not a nil *LostError in an error
	}
	return l.lostErr
}

// Lost is closed once the lock is known lost (Held then says to whom).
func (l *Lock) Lost() <-chan struct{} { return l.lost }

// Held is nil while the lock is this run's, and a *LostError once it
// is not. A lock confirmed within the last half of its duration is taken
// as held (nobody may take it over before it expires); an older
// confirmation (this process was stopped, or the API server did not
// answer the renewals) is checked again now, renewing the Lease if it
// is still ours. An error that is not a *LostError says the lock
// could not be confirmed.
func (l *Lock) Held(ctx context.Context) error {
	if err := l.LostErr(); err != nil {
		return err
	}
	if !l.stale() {
		return nil
	}
	err := l.confirm(ctx)
	if err == nil || !l.stale() { // confirmed, here or by a concurrent call
		return l.LostErr()
	}
	if lost := l.LostErr(); lost != nil {
		return lost
	}
	return fmt.Errorf("the lock of stack %q (run %s) could not be confirmed: %w", l.stack, l.runID, err)
}

// stale reports whether the last confirmation is older than half the
// lock's duration.
func (l *Lock) stale() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return time.Since(l.confirmed) >= l.timing.duration()/2
}

// LostError says a run's stack lock is no longer its own: its Lease
// expired and another run took it over, or it was removed. The run stops
// before its next write; what the new holder wrote stands.
type LostError struct {
	Stack string
	// RunID is the run that lost the lock.
	RunID string
	// By is the new holder (nil: the Lease is gone).
	By *HeldError
}

func (e *LostError) Error() string {
	if e.By == nil {
		return fmt.Sprintf("the lock of stack %q was removed while run %s held it (force-unlocked, or taken over by a run whose own record of it is gone): this run stopped before its next write", e.Stack, e.RunID)
	}
	finished := ""
	if !e.By.Released.IsZero() {
		finished = fmt.Sprintf(", and finished at %s", e.By.Released.Format(time.RFC3339))
	}
	return fmt.Sprintf("the lock of stack %q was taken over from run %s by %s (%s, run %s) at %s%s: this run stopped before its next write",
		e.Stack, e.RunID, e.By.Holder, e.By.Command, e.By.LockID, e.By.Since.Format(time.RFC3339), finished)
}

// Unwrap makes the error final for the release engine: it is never
// retried.
func (e *LostError) Unwrap() error { return release.ErrNotHeld }

// Release gives the lock up (deleting the Lease, only if still ours). It
// retries with backoff, and may go on for grace after ctx ended (0:
// DefaultGrace).
func (l *Lock) Release(ctx context.Context, grace time.Duration) error {
	l.stop()
	l.done.Wait()
	leases := l.client.CoordinationV1().Leases(Namespace)
	if l.tookOver {
		return release.Retry(ctx, grace, l.leaveRecord)
	}
	// The UID precondition keeps a lock that was force-unlocked and taken
	// by someone else meanwhile.
	return release.Retry(ctx, grace, func(ctx context.Context) error {
		err := leases.Delete(ctx, l.name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &l.uid}})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	})
}

// leaveRecord releases a lock taken over from another run by leaving
// its Lease without a holder, naming who held it and when it was
// released: the run it was taken from, should it go on, names its
// successor (LostError), and the next run takes the Lease as free.
func (l *Lock) leaveRecord(ctx context.Context) error {
	leases := l.client.CoordinationV1().Leases(Namespace)
	cur, err := leases.Get(ctx, l.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !l.ours(cur) {
		return nil // force-unlocked, and maybe taken since
	}
	cur.Spec.HolderIdentity, cur.Spec.RenewTime = nil, nil
	cur.Annotations[annoReleased] = time.Now().UTC().Format(time.RFC3339)
	_, err = leases.Update(ctx, cur, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// ForceUnlock removes a stack's lock on one cluster whoever holds
// it, and says who did. With a lockID, it refuses a lock with another id.
// Unless forced, it refuses a lock whose holder's process is running on
// this host (a *LiveHolderError).
func ForceUnlock(ctx context.Context, client kubernetes.Interface, stack, id string, force bool) (holder string, err error) {
	leases := client.CoordinationV1().Leases(Namespace)
	cur, err := leases.Get(ctx, Name(stack), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	le := lockedError(stack, cur)
	if released(cur) {
		le.Holder = "" // nobody holds it: the record of a finished run
	} else if id != "" && id != le.LockID {
		return "", &IDMismatchError{Stack: stack, Want: id, Held: le}
	} else if pid := liveHere(cur, thisProcess(), processExists); pid != 0 && !force {
		return "", &LiveHolderError{Held: le, Pid: pid}
	}
	err = leases.Delete(ctx, cur.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cur.UID}})
	if apierrors.IsNotFound(err) {
		err = nil
	}
	return le.Holder, err
}

// LiveHolderError is a force-unlock of a lock whose holder's process is
// running on this host: it may be an apply under way (or stopped), which
// would go on writing with no lock.
type LiveHolderError struct {
	Held *HeldError
	Pid  int
}

func (e *LiveHolderError) Error() string {
	return fmt.Sprintf("the lock of stack %q is held by %s (%s, run %s), whose process (pid %d) is running on this host: end it (or let it end), or pass --force to release the lock anyway",
		e.Held.Stack, e.Held.Holder, e.Held.Command, e.Held.LockID, e.Pid)
}

// IDMismatchError is a force-unlock naming a lock that is not the one
// held: the run it meant is gone, and another holds the stack now.
type IDMismatchError struct {
	Stack, Want string
	Held        *HeldError
}

func (e *IDMismatchError) Error() string {
	return fmt.Sprintf("the lock of stack %q is %s, held by %s (%s) since %s, not %s: left alone",
		e.Stack, e.Held.LockID, e.Held.Holder, e.Held.Command, e.Held.Since.Format(time.RFC3339), e.Want)
}
