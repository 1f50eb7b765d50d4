package run_test

// The stack lock against client-go's in-memory clientset: no cluster.
// lock_test.go proves the same behaviour against the devcluster's API
// server.

import (
	"context"
	"errors"
	"fmt"
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var leasesGVR = coordinationv1.SchemeGroupVersion.WithResource("leases")

// leaseServer is the fake clientset with what the lock relies on the API
// server for and the fake lacks: it gives every Lease it writes a UID and
// a new resourceVersion, and refuses with a Conflict an update or a delete
// whose UID or resourceVersion (precondition) no longer holds. The fake
// itself sets neither and checks no precondition: without this, a test of
// the lock's preconditions could not fail.
type leaseServer struct {
	*fake.Clientset
	mu sync.Mutex
	n  int
}

func newLeaseServer() *leaseServer {
	s := &leaseServer{Clientset: fake.NewClientset()}
	s.PrependReactor("create", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		l := a.(k8stesting.CreateAction).GetObject().(*coordinationv1.Lease).DeepCopy()
		l.UID = types.UID(fmt.Sprintf("uid-%d", s.next()))
		l.ResourceVersion = strconv.Itoa(s.next())
		if err := s.Tracker().Create(leasesGVR, l, a.GetNamespace()); err != nil {
			return true, nil, err
		}
		return true, l.DeepCopy(), nil
	})
	s.PrependReactor("update", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		l := a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease).DeepCopy()
		cur, err := s.lease(a.GetNamespace(), l.Name)
		if err != nil {
			return true, nil, err
		}
		if (l.ResourceVersion != "" && l.ResourceVersion != cur.ResourceVersion) || (l.UID != "" && l.UID != cur.UID) {
			return true, nil, conflict(l.Name)
		}
		l.UID, l.ResourceVersion = cur.UID, strconv.Itoa(s.next())
		if err := s.Tracker().Update(leasesGVR, l, a.GetNamespace()); err != nil {
			return true, nil, err
		}
		return true, l.DeepCopy(), nil
	})
	s.PrependReactor("delete", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		d := a.(k8stesting.DeleteAction)
		cur, err := s.lease(a.GetNamespace(), d.GetName())
		if err != nil {
			return true, nil, err
		}
		if p := d.GetDeleteOptions().Preconditions; p != nil {
			if (p.UID != nil && *p.UID != cur.UID) || (p.ResourceVersion != nil && *p.ResourceVersion != cur.ResourceVersion) {
				return true, nil, conflict(cur.Name)
			}
		}
		return false, nil, nil // the fake deletes it
	})
	return s
}

func (s *leaseServer) next() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return s.n
}

// lease reads a Lease from the store (reactors may not call the client).
func (s *leaseServer) lease(namespace, name string) (*coordinationv1.Lease, error) {
	obj, err := s.Tracker().Get(leasesGVR, namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*coordinationv1.Lease), nil
}

// renew bumps a Lease's renewTime as its holder's renewal does (from a
// reactor: through the store).
func (s *leaseServer) renew(name string) error {
	l, err := s.lease(stacklock.Namespace, name)
	if err != nil {
		return err
	}
	l = l.DeepCopy()
	now := metav1.NewMicroTime(time.Now())
	l.Spec.RenewTime, l.ResourceVersion = &now, strconv.Itoa(s.next())
	return s.Tracker().Update(leasesGVR, l, stacklock.Namespace)
}

func conflict(name string) error {
	return apierrors.NewConflict(leasesGVR.GroupResource(), name, errors.New("Precondition failed"))
}

// get returns the stack's Lease (nil: none).
func (s *leaseServer) get(t *testing.T, stack string) *coordinationv1.Lease {
	t.Helper()
	l, err := s.CoordinationV1().Leases(stacklock.Namespace).Get(context.Background(), stacklock.Name(stack), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// acquire takes the stack's lock, released when the test ends.
func acquire(t *testing.T, s *leaseServer, stack string, opts stacklock.Options) *stacklock.Lock {
	t.Helper()
	l, err := stacklock.Acquire(context.Background(), s, stack, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Release(context.Background(), time.Second) })
	return l
}

// leftBehind leaves the Lease of a run that died holding the stack's lock:
// the Lease Acquire writes, edited, that nobody renews. It returns the dead
// run's lock id.
func leftBehind(t *testing.T, s *leaseServer, stack string, edit func(*coordinationv1.Lease)) string {
	t.Helper()
	ctx := context.Background()
	l, err := stacklock.Acquire(ctx, s, stack, stacklock.Options{Command: "convoy apply"})
	if err != nil {
		t.Fatal(err)
	}
	lease := s.get(t, stack)
	if err := l.Release(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	lease.UID, lease.ResourceVersion = "", ""
	edit(lease)
	if _, err := s.CoordinationV1().Leases(stacklock.Namespace).Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return l.ID()
}

// endedPid is the pid of a process that has ended.
func endedPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestFakeLockIsExclusiveAndNamesItsHolder(t *testing.T) {
	s := newLeaseServer()
	first := acquire(t, s, "shop", stacklock.Options{Command: "convoy apply", RunID: "0123456789ab"})
	if first.ID() != "0123456789ab" {
		t.Errorf("lock id %q, want the run id given", first.ID())
	}
	lease := s.get(t, "shop")
	host, _ := os.Hostname()
	for k, want := range map[string]string{
		"convoy.dev/stack": "shop", "convoy.dev/command": "convoy apply", "convoy.dev/run": "0123456789ab",
		"convoy.dev/host": host, "convoy.dev/pid": strconv.Itoa(os.Getpid()),
	} {
		if got := lease.Annotations[k]; got != want {
			t.Errorf("annotation %s = %q, want %q", k, got, want)
		}
	}
	if _, ok := lease.Annotations["convoy.dev/environment"]; ok || lease.Labels["convoy.dev/stack-lock"] != "true" || lease.Namespace != "default" {
		t.Errorf("lease %s/%s: labels %v, annotations %v", lease.Namespace, lease.Name, lease.Labels, lease.Annotations)
	}
	if d := lease.Spec.LeaseDurationSeconds; d == nil || time.Duration(*d)*time.Second != stacklock.Duration {
		t.Errorf("lease duration %v, want %s", d, stacklock.Duration)
	}

	_, err := stacklock.Acquire(context.Background(), s, "shop", stacklock.Options{Command: "convoy destroy"})
	var le *stacklock.HeldError
	if !errors.As(err, &le) {
		t.Fatalf("second acquire: %v", err)
	}
	holder := fmt.Sprintf("@%s pid %d", host, os.Getpid())
	if !strings.HasSuffix(le.Holder, holder) || le.Command != "convoy apply" || le.LockID != "0123456789ab" || le.Host != host || le.Since.IsZero() {
		t.Errorf("locked error %+v", le)
	}
	for _, want := range []string{`stack "shop" is locked by ` + le.Holder, "(convoy apply, run 0123456789ab)", "If that run is gone: convoy force-unlock 0123456789ab"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	// Another stack's lock is another Lease.
	acquire(t, s, "blog", stacklock.Options{Command: "convoy apply"})
}

func TestFakeLockReleasedIsTakenAgain(t *testing.T) {
	s := newLeaseServer()
	ctx := context.Background()
	l, err := stacklock.Acquire(ctx, s, "shop", stacklock.Options{Command: "convoy apply"})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if lease := s.get(t, "shop"); lease != nil {
		t.Fatalf("the Lease outlived its release: %v", lease.Annotations)
	}
	again := acquire(t, s, "shop", stacklock.Options{Command: "convoy destroy"})
	if again.ID() == l.ID() || s.get(t, "shop").Annotations["convoy.dev/command"] != "convoy destroy" {
		t.Fatalf("re-acquired as %s (was %s): %v", again.ID(), l.ID(), s.get(t, "shop").Annotations)
	}
	// Releasing twice is harmless.
	if err := l.Release(ctx, 0); err != nil {
		t.Fatalf("second release: %v", err)
	}
	if s.get(t, "shop") == nil {
		t.Fatal("a second release of the old lock deleted the new one")
	}
}

// TestFakeReleaseKeepsTheNextHoldersLock: a lock force-unlocked and taken
// by another run is not deleted by its first holder's Release (the UID
// precondition).
func TestFakeReleaseKeepsTheNextHoldersLock(t *testing.T) {
	s := newLeaseServer()
	ctx := context.Background()
	old, err := stacklock.Acquire(ctx, s, "shop", stacklock.Options{Command: "convoy apply"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stacklock.ForceUnlock(ctx, s, "shop", old.ID(), true); err != nil {
		t.Fatal(err)
	}
	next := acquire(t, s, "shop", stacklock.Options{Command: "convoy apply"})
	if err := old.Release(ctx, time.Second); err != nil {
		t.Fatalf("release of a lock no longer held: %v", err)
	}
	if l := s.get(t, "shop"); l == nil || l.Annotations["convoy.dev/run"] != next.ID() {
		t.Fatalf("the old holder's Release deleted the new holder's lock")
	}
}

func TestFakeLockTakeover(t *testing.T) {
	ago := func(d time.Duration) *metav1.MicroTime { at := metav1.NewMicroTime(time.Now().Add(-d)); return &at }
	// elsewhere is a holder on another host.
	elsewhere := func(l *coordinationv1.Lease) {
		l.Annotations["convoy.dev/host"] = "build-7"
		holder := "ci@build-7 pid 4242"
		l.Spec.HolderIdentity = &holder
		l.Annotations["convoy.dev/pid"] = "4242"
	}
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, l *coordinationv1.Lease)
		// taken: the announcement says why; "": the holder keeps it.
		taken string
	}{
		{
			name: "its process ended on this host",
			edit: func(t *testing.T, l *coordinationv1.Lease) {
				l.Annotations["convoy.dev/pid"] = strconv.Itoa(endedPid(t))
			},
			taken: "no longer exists on this host",
		},
		{
			name: "its process runs on this host",
			edit: func(t *testing.T, l *coordinationv1.Lease) {
				l.Annotations["convoy.dev/pid"] = strconv.Itoa(os.Getppid())
			},
		},
		{
			name: "an ended pid in another pid namespace (a container with this hostname)",
			edit: func(t *testing.T, l *coordinationv1.Lease) {
				l.Annotations["convoy.dev/pid"] = strconv.Itoa(endedPid(t))
				l.Annotations["convoy.dev/pid-namespace"] = "pid:[4026531836]x"
			},
		},
		{
			name: "elsewhere, renewed 12s ago",
			edit: func(t *testing.T, l *coordinationv1.Lease) { elsewhere(l); l.Spec.RenewTime = ago(12 * time.Second) },
		},
		{
			name: "elsewhere, with this host's ended pid, renewed 12s ago",
			edit: func(t *testing.T, l *coordinationv1.Lease) {
				elsewhere(l)
				l.Annotations["convoy.dev/pid"] = strconv.Itoa(endedPid(t))
				l.Spec.RenewTime = ago(12 * time.Second)
			},
		},
		{
			name: "elsewhere, not renewed for longer than the lock's duration",
			edit: func(t *testing.T, l *coordinationv1.Lease) {
				elsewhere(l)
				l.Spec.RenewTime = ago(stacklock.Duration + 15*time.Second)
			},
			taken: "it has not renewed the lock for 45s (it expires after 30s)",
		},
		{
			name:  "its process runs on this host but stopped renewing",
			edit:  func(t *testing.T, l *coordinationv1.Lease) { l.Spec.RenewTime = ago(time.Hour) },
			taken: "it has not renewed the lock for 1h0m0s",
		},
		{
			name: "never renewed, acquired 10s ago",
			edit: func(t *testing.T, l *coordinationv1.Lease) {
				elsewhere(l)
				l.Spec.RenewTime, l.Spec.AcquireTime = nil, ago(10*time.Second)
			},
		},
		{
			name: "never renewed, acquired long ago",
			edit: func(t *testing.T, l *coordinationv1.Lease) {
				elsewhere(l)
				l.Spec.RenewTime, l.Spec.AcquireTime = nil, ago(time.Hour)
			},
			taken: "it has not renewed the lock for 1h0m0s",
		},
		{
			name: "elsewhere, with no duration: it never expires",
			edit: func(t *testing.T, l *coordinationv1.Lease) {
				elsewhere(l)
				l.Spec.RenewTime, l.Spec.LeaseDurationSeconds = ago(time.Hour), nil
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newLeaseServer()
			var holder string
			old := leftBehind(t, s, "shop", func(l *coordinationv1.Lease) {
				tc.edit(t, l)
				holder = *l.Spec.HolderIdentity
			})
			var said []string
			l, err := stacklock.Acquire(context.Background(), s, "shop", stacklock.Options{Command: "convoy apply", Announce: func(m string) { said = append(said, m) }})
			if tc.taken == "" {
				var le *stacklock.HeldError
				if !errors.As(err, &le) || le.LockID != old || le.Holder != holder || len(said) != 0 {
					t.Fatalf("a live holder's lock: %v (announced %q)", err, said)
				}
				if got := s.get(t, "shop").Annotations["convoy.dev/run"]; got != old {
					t.Fatalf("the lock is run %s's now, want %s's", got, old)
				}
				return
			}
			if err != nil {
				t.Fatalf("not taken over: %v", err)
			}
			t.Cleanup(func() { _ = l.Release(context.Background(), time.Second) })
			if len(said) != 1 || !strings.Contains(said[0], tc.taken) || !strings.Contains(said[0], "run "+old) || !strings.Contains(said[0], "from "+holder) {
				t.Fatalf("announced %q, want one line naming %s, run %s and %q", said, holder, old, tc.taken)
			}
			if got := s.get(t, "shop").Annotations["convoy.dev/run"]; got != l.ID() {
				t.Fatalf("the Lease is run %s's, want the new holder's %s", got, l.ID())
			}
		})
	}
}

// TestFakeTakeoverLosesToARenewal: a holder that renews between the read
// and the takeover's delete keeps its lock (the resourceVersion
// precondition), and is reported as the holder.
func TestFakeTakeoverLosesToARenewal(t *testing.T) {
	s := newLeaseServer()
	old := leftBehind(t, s, "shop", func(l *coordinationv1.Lease) {
		at := metav1.NewMicroTime(time.Now().Add(-time.Hour))
		l.Spec.RenewTime = &at
		l.Annotations["convoy.dev/host"] = "build-7"
	})
	renewed := false
	s.PrependReactor("delete", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if !renewed {
			renewed = true
			if err := s.renew(stacklock.Name("shop")); err != nil {
				return true, nil, err
			}
		}
		return false, nil, nil
	})
	var said []string
	_, err := stacklock.Acquire(context.Background(), s, "shop", stacklock.Options{Command: "convoy apply", Announce: func(m string) { said = append(said, m) }})
	var le *stacklock.HeldError
	if !renewed || !errors.As(err, &le) || le.LockID != old || len(said) != 0 {
		t.Fatalf("renewed %v; acquire: %v (announced %q)", renewed, err, said)
	}
	if s.get(t, "shop") == nil {
		t.Fatal("the renewed lock was deleted")
	}
}

// TestFakeLockChangingHandsIsRetried: the Lease gone between Create and
// Get is taken on the next round; a takeover that keeps losing gives up.
func TestFakeLockChangingHandsIsRetried(t *testing.T) {
	t.Run("released meanwhile", func(t *testing.T) {
		s := newLeaseServer()
		first := true
		s.PrependReactor("create", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
			if first {
				first = false
				return true, nil, apierrors.NewAlreadyExists(leasesGVR.GroupResource(), stacklock.Name("shop"))
			}
			return false, nil, nil
		})
		acquire(t, s, "shop", stacklock.Options{Command: "convoy apply"})
		if s.get(t, "shop") == nil {
			t.Fatal("no Lease")
		}
	})
	t.Run("every takeover loses", func(t *testing.T) {
		s := newLeaseServer()
		leftBehind(t, s, "shop", func(l *coordinationv1.Lease) {
			l.Annotations["convoy.dev/pid"] = strconv.Itoa(endedPid(t))
		})
		deletes := 0
		s.PrependReactor("delete", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
			deletes++
			return true, nil, conflict(stacklock.Name("shop"))
		})
		var said []string
		_, err := stacklock.Acquire(context.Background(), s, "shop", stacklock.Options{Command: "convoy apply", Announce: func(m string) { said = append(said, m) }})
		if err == nil || !strings.Contains(err.Error(), `stack "shop": the lock changed hands while taking it; try again`) || deletes != 3 || len(said) != 0 {
			t.Fatalf("after %d deletes: %v (announced %q)", deletes, err, said)
		}
	})
}

func TestFakeLockAPIErrorsNameTheLease(t *testing.T) {
	forbidden := apierrors.NewForbidden(leasesGVR.GroupResource(), "", errors.New("RBAC"))
	t.Run("create", func(t *testing.T) {
		s := newLeaseServer()
		s.PrependReactor("create", "leases", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, forbidden })
		_, err := stacklock.Acquire(context.Background(), s, "shop", stacklock.Options{})
		if !apierrors.IsForbidden(err) || !strings.HasPrefix(err.Error(), "coordination.k8s.io/v1 Lease default/convoy-stack-shop: ") {
			t.Fatalf("acquire: %v", err)
		}
	})
	t.Run("reading the holder", func(t *testing.T) {
		s := newLeaseServer()
		acquire(t, s, "shop", stacklock.Options{})
		s.PrependReactor("get", "leases", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, forbidden })
		_, err := stacklock.Acquire(context.Background(), s, "shop", stacklock.Options{})
		if err == nil || !strings.HasPrefix(err.Error(), `stack "shop" is locked (and reading the lock failed: `) {
			t.Fatalf("acquire: %v", err)
		}
	})
}

func TestFakeForceUnlock(t *testing.T) {
	for _, tc := range []struct {
		name string
		// lockID is the id force-unlock names; "held" stands for the held
		// lock's.
		lockID   string
		noRunID  bool // a Lease of a convoy that recorded no run id
		unlocked bool
	}{
		{name: "whoever holds it", lockID: "", unlocked: true},
		{name: "the id held", lockID: "held", unlocked: true},
		{name: "another id", lockID: "0123456789ab"},
		{name: "a lock without a run id, by its UID", lockID: "held", noRunID: true, unlocked: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newLeaseServer()
			held := leftBehind(t, s, "shop", func(l *coordinationv1.Lease) {
				if tc.noRunID {
					delete(l.Annotations, "convoy.dev/run")
				}
			})
			lease := s.get(t, "shop")
			if tc.noRunID {
				held = string(lease.UID)
			}
			id := tc.lockID
			if id == "held" {
				id = held
			}
			holder, err := stacklock.ForceUnlock(context.Background(), s, "shop", id, true)
			if tc.unlocked {
				if err != nil || holder != *lease.Spec.HolderIdentity || s.get(t, "shop") != nil {
					t.Fatalf("force-unlock: %q %v", holder, err)
				}
				return
			}
			var me *stacklock.IDMismatchError
			if !errors.As(err, &me) || me.Want != id || me.Held.LockID != held || holder != "" {
				t.Fatalf("force-unlock of another id: %q %v", holder, err)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf(`the lock of stack "shop" is %s, held by %s`, held, *lease.Spec.HolderIdentity)) || !strings.HasSuffix(err.Error(), "not "+id+": left alone") {
				t.Errorf("%q", err)
			}
			if s.get(t, "shop") == nil {
				t.Fatal("a lock of another id was removed")
			}
		})
	}
	t.Run("no lock", func(t *testing.T) {
		holder, err := stacklock.ForceUnlock(context.Background(), newLeaseServer(), "shop", "0123456789ab", true)
		if holder != "" || err != nil {
			t.Fatalf("force-unlock of no lock: %q %v", holder, err)
		}
	})
}

func TestFakeLockNamesTheEnvironment(t *testing.T) {
	s := newLeaseServer()
	acquire(t, s, "shop.prod", stacklock.Options{Command: "convoy apply", Environment: "prod"})
	if got := s.get(t, "shop.prod").Annotations["convoy.dev/environment"]; got != "prod" {
		t.Errorf("environment annotation %q", got)
	}
	_, err := stacklock.Acquire(context.Background(), s, "shop.prod", stacklock.Options{Command: "convoy apply", Environment: "prod"})
	var le *stacklock.HeldError
	if !errors.As(err, &le) || le.Environment != "prod" || !strings.Contains(err.Error(), `stack "shop.prod" (environment "prod") is locked`) {
		t.Fatalf("second acquire: %v", err)
	}
	// Each environment has its own lock.
	acquire(t, s, "shop.staging", stacklock.Options{Command: "convoy apply", Environment: "staging"})
}

func TestLockNameIsAValidLeaseName(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, tc := range []struct {
		name, stack, want string // want "": hashed
	}{
		{name: "plain", stack: "shop", want: "convoy-stack-shop"},
		{name: "an environment", stack: "shop.prod", want: "convoy-stack-shop-prod"},
		{name: "capitals, spaces, underscores", stack: "My Shop_2", want: "convoy-stack-my-shop-2"},
		{name: "dashes at the ends", stack: "--edge--", want: "convoy-stack-edge"},
		{name: "200 characters", stack: long},
		{name: "201 characters", stack: long + "y"},
		{name: "nothing a name can hold", stack: "!!!"},
		{name: "nothing a name can hold, other", stack: "???"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := stacklock.Name(tc.stack)
			if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
				t.Fatalf("LockName(%q) = %q: %v", tc.stack, n, errs)
			}
			if tc.want != "" && n != tc.want {
				t.Fatalf("LockName(%q) = %q, want %q", tc.stack, n, tc.want)
			}
			if tc.want == "" && !strings.HasPrefix(n, "convoy-stack-") {
				t.Fatalf("LockName(%q) = %q", tc.stack, n)
			}
		})
	}
	// Names cut to fit keep a hash of the whole: stacks that differ only
	// past the cut, or only in characters a name cannot hold, do not share
	// a lock.
	if stacklock.Name(long) == stacklock.Name(long+"y") || stacklock.Name("!!!") == stacklock.Name("???") {
		t.Fatalf("distinct stacks share a lock: %s, %s", stacklock.Name(long), stacklock.Name("!!!"))
	}
}

// A lock scoped to a Stack's namespace has a name of its own, distinct
// from the unscoped stack's (the CLI's lock of the same stack keeps its
// name) and from another namespace's, even one written alike.
func TestScopedLockNames(t *testing.T) {
	key := func(ns, stack string) string { return stacklock.Identity{Namespace: ns, Stack: stack}.Key() }
	names := map[string]string{}
	for _, k := range []string{"billing", key("team-a", "billing"), key("team-b", "billing"), key("team-a", "x-billing"), key("team-a-x", "billing")} {
		n := stacklock.Name(k)
		if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
			t.Fatalf("Name(%q) = %q: %v", k, n, errs)
		}
		if other, ok := names[n]; ok {
			t.Errorf("%q and %q share the lock %s", other, k, n)
		}
		names[n] = k
	}
	if n := stacklock.Name("billing"); n != "convoy-stack-billing" {
		t.Errorf("the unscoped lock is %s, was convoy-stack-billing", n)
	}
	if n := stacklock.Name(key("team-a", "billing")); !strings.HasPrefix(n, "convoy-stack-team-a-billing-") {
		t.Errorf("the scoped lock %s does not say whose it is", n)
	}
}

// takeOver does what Acquire does to an expired lock: deletes its Lease
// (with preconditions) and creates its own, as another holder.
func takeOver(t *testing.T, s *leaseServer, stack string) *coordinationv1.Lease {
	t.Helper()
	ctx := context.Background()
	cur := s.get(t, stack)
	leases := s.CoordinationV1().Leases(stacklock.Namespace)
	if err := leases.Delete(ctx, cur.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cur.UID, ResourceVersion: &cur.ResourceVersion}}); err != nil {
		t.Fatal(err)
	}
	next := cur.DeepCopy()
	next.UID, next.ResourceVersion = "", ""
	holder := "ci@build-7 pid 4242"
	next.Spec.HolderIdentity = &holder
	next.Annotations["convoy.dev/host"], next.Annotations["convoy.dev/run"] = "build-7", "run-b"
	got, err := leases.Create(ctx, next, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestFakeLockLostToATakeoverIsKnownAndLeftAlone(t *testing.T) {
	s := newLeaseServer()
	l := acquire(t, s, "shop", stacklock.Options{Command: "convoy apply", Timing: stacklock.Timing{RenewEvery: 10 * time.Millisecond}})
	if err := l.Held(context.Background()); err != nil {
		t.Fatalf("a fresh lock: %v", err)
	}
	theirs := takeOver(t, s, "shop")
	waitLost(t, l) // a renewal finds the Lease is another's
	err := l.Held(context.Background())
	var lost *stacklock.LostError
	if !errors.As(err, &lost) || lost.By == nil || lost.By.LockID != "run-b" || !errors.Is(err, release.ErrNotHeld) {
		t.Fatalf("Held: %v", err)
	}
	for _, want := range []string{`the lock of stack "shop" was taken over from run ` + l.ID(), "ci@build-7 pid 4242", "run run-b", "stopped before its next write"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	// Neither the renewals nor the release touch the new holder's Lease.
	if err := l.Release(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	if now := s.get(t, "shop"); now == nil || now.UID != theirs.UID || now.ResourceVersion != theirs.ResourceVersion {
		t.Fatalf("the new holder's Lease was changed: %+v", now)
	}
}

func TestFakeLockRemovedIsLost(t *testing.T) {
	s := newLeaseServer()
	l := acquire(t, s, "shop", stacklock.Options{Command: "convoy apply", Timing: stacklock.Timing{RenewEvery: 10 * time.Millisecond}})
	if _, err := stacklock.ForceUnlock(context.Background(), s, "shop", "", true); err != nil {
		t.Fatal(err)
	}
	waitLost(t, l)
	var lost *stacklock.LostError
	if err := l.Held(context.Background()); !errors.As(err, &lost) || lost.By != nil || !strings.Contains(err.Error(), "was removed") {
		t.Fatalf("Held: %v", err)
	}
}

// waitLost waits until the lock knows it is lost.
func waitLost(t *testing.T, l *stacklock.Lock) {
	t.Helper()
	select {
	case <-l.Lost():
	case <-time.After(time.Minute):
		t.Fatal("the renewals did not find the lock lost in a minute")
	}
}

// Held trusts a recent confirmation (no request), and confirms an old one
// itself: a run whose renewals stopped (a stopped process) finds its loss
// before its next write, without its renewals.
func TestFakeHeldConfirmsAnOldConfirmation(t *testing.T) {
	s := newLeaseServer()
	l := acquire(t, s, "shop", stacklock.Options{Command: "convoy apply", Timing: stacklock.Timing{Duration: time.Second, RenewEvery: time.Hour}})
	before := len(s.Actions())
	if err := l.Held(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Actions()) - before; n != 0 {
		t.Fatalf("Held of a fresh lock made %d requests", n)
	}
	takeOver(t, s, "shop")
	var err error
	poll := func(ctx context.Context) (bool, error) { err = l.Held(ctx); return err != nil, nil }
	if werr := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, time.Minute, true, poll); werr != nil {
		t.Fatal("Held never found the lock lost")
	}
	var lost *stacklock.LostError
	if !errors.As(err, &lost) || lost.By == nil || lost.By.LockID != "run-b" {
		t.Fatalf("Held: %v", err)
	}
	waitLost(t, l)
}
