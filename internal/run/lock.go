package run

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/user"
	"regexp"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Lock namespace and annotations. The Lease lives in "default", which every
// cluster has, whatever namespaces the stack's releases use.
const (
	LockNamespace   = "default"
	annoLockHost    = "convoy.dev/host"
	annoLockCommand = "convoy.dev/command"
	annoLockEnv     = "convoy.dev/environment"
	lockDuration    = 30 * time.Second
	lockRenewEvery  = 10 * time.Second
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

// LockedError says another run holds the stack.
type LockedError struct {
	Stack, Environment, Holder, Host, Command string
	Since, LastRenew                          time.Time
}

func (e *LockedError) Error() string {
	stale := ""
	if !e.LastRenew.IsZero() && time.Since(e.LastRenew) > 2*lockDuration {
		stale = fmt.Sprintf("; it was last renewed %s ago, so its holder probably died: if so, run `convoy force-unlock`", time.Since(e.LastRenew).Round(time.Second))
	}
	env := ""
	if e.Environment != "" {
		env = fmt.Sprintf(" (environment %q)", e.Environment)
	}
	return fmt.Sprintf("stack %q%s is locked by %s on %s (%s) since %s%s",
		e.Stack, env, e.Holder, e.Host, e.Command, e.Since.Format(time.RFC3339), stale)
}

// Lock is a held stack lock; Release it when done.
type Lock struct {
	client kubernetes.Interface
	name   string
	uid    types.UID // this acquisition's Lease; a re-created one is not ours
	stop   chan struct{}
	done   sync.WaitGroup
}

// Acquire takes the stack's lock on one cluster, or fails with a
// *LockedError naming the holder. While held, it is renewed in the
// background so others can tell a live holder from a dead one.
func Acquire(ctx context.Context, client kubernetes.Interface, stack, command string) (*Lock, error) {
	return AcquireEnvironment(ctx, client, stack, "", command)
}

// AcquireEnvironment is Acquire for one environment of a stack: stack is
// the stack's ID (config.Stack.ID, which names the environment), and the
// Lease's annotations name the environment too.
func AcquireEnvironment(ctx context.Context, client kubernetes.Interface, stack, environment, command string) (*Lock, error) {
	host, _ := os.Hostname()
	who := "unknown"
	if u, err := user.Current(); err == nil {
		who = u.Username
	}
	holder := fmt.Sprintf("%s@%s pid %d", who, host, os.Getpid())
	now := metav1.NewMicroTime(time.Now())
	secs := int32(lockDuration / time.Second)
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name:        LockName(stack),
			Namespace:   LockNamespace,
			Labels:      map[string]string{"convoy.dev/stack-lock": "true"},
			Annotations: map[string]string{annoLockHost: host, annoLockCommand: command, "convoy.dev/stack": stack},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       &holder,
			AcquireTime:          &now,
			RenewTime:            &now,
			LeaseDurationSeconds: &secs,
		},
	}
	if environment != "" {
		lease.Annotations[annoLockEnv] = environment
	}
	leases := client.CoordinationV1().Leases(LockNamespace)
	created, err := leases.Create(ctx, lease, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		cur, gerr := leases.Get(ctx, lease.Name, metav1.GetOptions{})
		if gerr != nil {
			return nil, fmt.Errorf("stack %q is locked (and reading the lock failed: %v)", stack, gerr)
		}
		le := &LockedError{Stack: stack, Environment: cur.Annotations[annoLockEnv], Host: cur.Annotations[annoLockHost], Command: cur.Annotations[annoLockCommand]}
		if cur.Spec.HolderIdentity != nil {
			le.Holder = *cur.Spec.HolderIdentity
		}
		if cur.Spec.AcquireTime != nil {
			le.Since = cur.Spec.AcquireTime.Time
		}
		if cur.Spec.RenewTime != nil {
			le.LastRenew = cur.Spec.RenewTime.Time
		}
		return nil, le
	}
	if err != nil {
		return nil, fmt.Errorf("coordination.k8s.io/v1 Lease %s/%s: %w", LockNamespace, lease.Name, err)
	}
	l := &Lock{client: client, name: lease.Name, uid: created.UID, stop: make(chan struct{})}
	l.done.Add(1)
	go l.renew()
	return l, nil
}

// renew bumps the Lease's renewTime until Release. A failed renewal is
// retried on the next tick; the lock is never taken away from its holder.
func (l *Lock) renew() {
	defer l.done.Done()
	t := time.NewTicker(lockRenewEvery)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
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

// Release gives the lock up (deleting the Lease, only if still ours).
func (l *Lock) Release(ctx context.Context) error {
	close(l.stop)
	l.done.Wait()
	leases := l.client.CoordinationV1().Leases(LockNamespace)
	// The UID precondition keeps a lock that was force-unlocked and taken
	// by someone else meanwhile.
	err := leases.Delete(ctx, l.name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &l.uid}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// ForceUnlockClient removes a stack's lock on one cluster whoever holds it, and
// says who did.
func ForceUnlockClient(ctx context.Context, client kubernetes.Interface, stack string) (holder string, err error) {
	leases := client.CoordinationV1().Leases(LockNamespace)
	cur, err := leases.Get(ctx, LockName(stack), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if cur.Spec.HolderIdentity != nil {
		holder = *cur.Spec.HolderIdentity
	}
	err = leases.Delete(ctx, cur.Name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		err = nil
	}
	return holder, err
}
