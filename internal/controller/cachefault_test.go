package controller_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// readOnly makes dir refuse new entries, for root too, and returns the
// function that restores it. As root (whom permission bits do not stop)
// dir is bind-mounted read-only onto itself: a new entry fails with
// EROFS, as on a read-only volume. Otherwise its mode is 0555 (EACCES).
// The test is skipped when neither works here.
func readOnly(t *testing.T, dir string) (restore func()) {
	t.Helper()
	var once sync.Once
	if os.Geteuid() == 0 {
		if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
			t.Skipf("a read-only cache needs a bind mount as root: %v", err)
		}
		restore = func() {
			once.Do(func() {
				if err := syscall.Unmount(dir, 0); err != nil {
					t.Errorf("unmount %s: %v", dir, err)
				}
			})
		}
		t.Cleanup(restore)
		if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
			t.Skipf("a read-only cache needs a read-only bind mount as root: %v", err)
		}
	} else {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		restore = func() {
			once.Do(func() {
				if err := os.Chmod(dir, 0o700); err != nil {
					t.Error(err)
				}
			})
		}
		t.Cleanup(restore)
	}
	if err := os.Mkdir(filepath.Join(dir, "probe"), 0o700); err == nil {
		restore()
		t.Skipf("%s is still writable", dir)
	}
	return restore
}

// A Stack whose source cannot be unpacked, the controller's cache being
// read-only, fails with another temporary directory in its error at each
// attempt (…/stacks/.pull-3315430801): that is one Failed notification,
// and one entry of status.notified, however many attempts. Once the cache
// is writable again the Stack is applied within the cache fault's backoff
// (at most 15s), not at its interval (1h here), however long it failed.
func TestReadOnlyCacheNotifiesOnceAndRecovers(t *testing.T) {
	if testing.Short() {
		t.Skip("lets the error backoff grow for about a minute")
	}
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	h := &hook{}
	srv := httptest.NewServer(h)
	defer srv.Close()

	cacheDir := t.TempDir()
	for _, d := range []string{"stacks", "charts", "tmp"} {
		if err := os.Mkdir(filepath.Join(cacheDir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	restore := readOnly(t, cacheDir)

	metrics := freeAddr(t)
	startController(t, ns, func(o *controller.Options) { o.CacheDir, o.MetricsAddress = cacheDir, metrics })
	failures := func() int {
		_, body := get(t, "http://"+metrics+"/metrics")
		m := errorReconciles.FindStringSubmatch(body)
		if m == nil {
			return 0
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}

	// 15 attempts: controller-runtime's backoff (5ms, doubling) would
	// now wait 82s before the next, the interval capping it only at 1h.
	// The metrics are the process's: earlier tests' controllers counted
	// theirs, so this one counts from the Stack's creation on.
	const attempts = 15
	before := failures()
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) {
		st.Spec.Interval = &metav1.Duration{Duration: time.Hour}
		st.Spec.Notifications = []v1alpha1.Notification{{URL: srv.URL + "/convoy"}}
	}))
	start := time.Now()
	for n := failures() - before; n < attempts; n = failures() - before {
		if time.Since(start) > 3*time.Minute {
			t.Fatalf("%d failed reconciles in 3m, want %d:%s", n, attempts, describe(getStack(t, c, ns, "shop")))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("%d failed reconciles in %s", attempts, time.Since(start).Round(time.Second))
	st := getStack(t, c, ns, "shop")
	ready := cond(st, "Ready")
	if ready == nil || ready.Reason != "SourceFailed" || !strings.Contains(ready.Message, "/stacks/.pull-") {
		t.Fatalf("Ready does not say the pull failed in the cache:%s", describe(st))
	}
	var failedNotified int
	for _, n := range st.Status.Notified {
		if n.Event == v1alpha1.EventFailed {
			failedNotified++
		}
	}
	if failedNotified != 1 {
		t.Fatalf("status.notified records %d Failed notices after %d attempts, want 1: %+v", failedNotified, attempts, st.Status.Notified)
	}
	devtest.Eventually(t, 30*time.Second, func() bool { return len(h.Received()) != 0 },
		func() string { return "no Failed notification within 30s" })

	restore()
	restored := time.Now()
	waitStack(t, c, ns, "shop", 60*time.Second, "Ready once the cache is restored", isCond("Ready", metav1.ConditionTrue, "Applied"))
	t.Logf("applied %s after the cache was restored", time.Since(restored).Round(time.Second))
	devtest.Eventually(t, 30*time.Second, func() bool {
		var failed, applied int
		for _, doc := range h.Received() {
			switch doc["event"] {
			case "Failed":
				failed++
			case "Applied":
				applied++
			}
		}
		if failed != 1 {
			t.Fatalf("%d Failed notifications, want 1: %v", failed, h.Received())
		}
		return applied == 1
	}, func() string { return fmt.Sprintf("no Applied notification within 30s: %v", h.Received()) })
	if msg, _ := h.Received()[0]["message"].(string); !strings.Contains(msg, "read-only file system") && !strings.Contains(msg, "permission denied") {
		t.Errorf("the Failed notification %q does not say why", msg)
	}
}
