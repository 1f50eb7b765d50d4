package run

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/user"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/convoy-sh/convoy/internal/release"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Lock namespace, annotations and timing. The Lease lives in "default",
// which every cluster has, whatever namespaces the stack's releases use.
const (
	LockNamespace   = "default"
	annoLockHost    = "convoy.dev/host"
	annoLockCommand = "convoy.dev/command"
	annoLockPid     = "convoy.dev/pid"
	annoLockPidNS   = "convoy.dev/pid-namespace"
	annoLockRun     = "convoy.dev/run"
	annoLockEnv     = "convoy.dev/environment"
	// LockDuration is how long a holder that stopped renewing its Lease
	// keeps it: after that, the lock is expired and the next run takes it
	// over.
	LockDuration   = 30 * time.Second
	lockRenewEvery = 10 * time.Second
	// DefaultGrace is how long writing a release's final state and
	// releasing the lock may go on after the run's context ended.
	DefaultGrace = 30 * time.Second
)

// LockName is the Lease name of a stack's lock.
func LockName(stack string) string {
	name := "convoy-stack-" + strings.Trim(invalidName.ReplaceAllString(strings.ToLower(stack), "-"), "-")
	if len(name) > 63 || name == "convoy-stack-" {
		sum := sha256.Sum256([]byte(stack))
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

// LockOptions say who takes a stack's lock.
type LockOptions struct {
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
}

// LockedError says another run holds the stack.
type LockedError struct {
	Stack, Environment, Holder, Host, Command string
	// LockID is the holder's run id (the Lease's UID for locks taken by
	// convoy versions that did not record one).
	LockID           string
	Since, LastRenew time.Time
}

func (e *LockedError) Error() string {
	renewed := ""
	if !e.LastRenew.IsZero() {
		renewed = fmt.Sprintf("; last renewed %s ago (it expires %s after that)", time.Since(e.LastRenew).Round(time.Second), LockDuration)
	}
	env := ""
	if e.Environment != "" {
		env = fmt.Sprintf(" (environment %q)", e.Environment)
	}
	return fmt.Sprintf("stack %q%s is locked by %s (%s, run %s) since %s%s. If that run is gone: convoy force-unlock %s",
		e.Stack, env, e.Holder, e.Command, e.LockID, e.Since.Format(time.RFC3339), renewed, e.LockID)
}

// Lock is a held stack lock; Release it when done.
type Lock struct {
	client kubernetes.Interface
	name   string
	uid    types.UID // this acquisition's Lease; a re-created one is not ours
	runID  string
	// stop ends the renewals, cancelling one under way.
	stop context.CancelFunc
	done sync.WaitGroup
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
// *LockedError naming the holder. A holder that is gone is taken over, and
// opts.Announce says so: on this host, when its process no longer exists;
// on any host, when it has not renewed the Lease for LockDuration. While
// held, the lock is renewed in the background.
func Acquire(ctx context.Context, client kubernetes.Interface, stack string, opts LockOptions) (*Lock, error) {
	me := thisProcess()
	runID := opts.RunID
	if runID == "" {
		runID = NewRunID()
	}
	holder := fmt.Sprintf("%s@%s pid %d", me.user, me.host, me.pid)
	now := metav1.NewMicroTime(time.Now())
	secs := int32(LockDuration / time.Second)
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name:      LockName(stack),
			Namespace: LockNamespace,
			Labels:    map[string]string{"convoy.dev/stack-lock": "true"},
			Annotations: map[string]string{
				annoLockHost: me.host, annoLockCommand: opts.Command, "convoy.dev/stack": stack,
				annoLockPid: strconv.Itoa(me.pid), annoLockPidNS: me.pidNS, annoLockRun: runID,
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
	leases := client.CoordinationV1().Leases(LockNamespace)
	// A few rounds: a takeover can race with the holder's renewal or with
	// another run taking over too.
	for range 3 {
		created, err := leases.Create(ctx, lease, metav1.CreateOptions{})
		if err == nil {
			rctx, stop := context.WithCancel(context.Background())
			l := &Lock{client: client, name: lease.Name, uid: created.UID, runID: runID, stop: stop}
			l.done.Add(1)
			go l.renew(rctx)
			return l, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("coordination.k8s.io/v1 Lease %s/%s: %w", LockNamespace, lease.Name, err)
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
		if err == nil && opts.Announce != nil {
			opts.Announce(fmt.Sprintf("took over the lock of stack %q from %s (%s, run %s, since %s): %s",
				stack, le.Holder, le.Command, le.LockID, le.Since.Format(time.RFC3339), why))
		}
	}
	return nil, fmt.Errorf("stack %q: the lock changed hands while taking it; try again", stack)
}

// lockedError describes the holder of a Lease.
func lockedError(stack string, cur *coordinationv1.Lease) *LockedError {
	le := &LockedError{Stack: stack, Environment: cur.Annotations[annoLockEnv], Host: cur.Annotations[annoLockHost], Command: cur.Annotations[annoLockCommand], LockID: lockID(cur)}
	if cur.Spec.HolderIdentity != nil {
		le.Holder = *cur.Spec.HolderIdentity
	}
	if cur.Spec.AcquireTime != nil {
		le.Since = cur.Spec.AcquireTime.Time
	}
	if cur.Spec.RenewTime != nil {
		le.LastRenew = cur.Spec.RenewTime.Time
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

// processExists reports whether a process with this pid exists on this
// host (one owned by another user exists too).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// renew bumps the Lease's renewTime until Release (ctx ends). A failed
// renewal is retried on the next tick; a Lease that is no longer this
// acquisition's (taken over, force-unlocked) is left alone.
func (l *Lock) renew(ctx context.Context) {
	defer l.done.Done()
	t := time.NewTicker(lockRenewEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			leases := l.client.CoordinationV1().Leases(LockNamespace)
			if cur, err := leases.Get(ctx, l.name, metav1.GetOptions{}); err == nil && cur.UID == l.uid {
				now := metav1.NewMicroTime(time.Now())
				cur.Spec.RenewTime = &now
				_, _ = leases.Update(ctx, cur, metav1.UpdateOptions{})
			}
			cancel()
		}
	}
}

// Release gives the lock up (deleting the Lease, only if still ours). It
// retries with backoff, and may go on for grace after ctx ended (0:
// DefaultGrace).
func (l *Lock) Release(ctx context.Context, grace time.Duration) error {
	l.stop()
	l.done.Wait()
	leases := l.client.CoordinationV1().Leases(LockNamespace)
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

// ForceUnlockClient removes a stack's lock on one cluster whoever holds
// it, and says who did. With a lockID, it refuses a lock with another id.
func ForceUnlockClient(ctx context.Context, client kubernetes.Interface, stack, id string) (holder string, err error) {
	leases := client.CoordinationV1().Leases(LockNamespace)
	cur, err := leases.Get(ctx, LockName(stack), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	le := lockedError(stack, cur)
	if id != "" && id != le.LockID {
		return "", &LockIDMismatchError{Stack: stack, Want: id, Held: le}
	}
	err = leases.Delete(ctx, cur.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cur.UID}})
	if apierrors.IsNotFound(err) {
		err = nil
	}
	return le.Holder, err
}

// LockIDMismatchError is a force-unlock naming a lock that is not the one
// held: the run it meant is gone, and another holds the stack now.
type LockIDMismatchError struct {
	Stack, Want string
	Held        *LockedError
}

func (e *LockIDMismatchError) Error() string {
	return fmt.Sprintf("the lock of stack %q is %s, held by %s (%s) since %s, not %s: left alone",
		e.Stack, e.Held.LockID, e.Held.Holder, e.Held.Command, e.Held.Since.Format(time.RFC3339), e.Want)
}
