package stack_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runController runs a controller in-process for the test's namespace and
// returns the function that stops it (and waits for it to end).
func runController(t *testing.T, ns, cacheDir string) (stop func()) {
	t.Helper()
	o := controller.Options{MinInterval: testMinInterval,
		Kubeconfig: cluster.Kubeconfig(), Namespace: ns, CacheDir: cacheDir,
		MetricsAddress: "0", HealthAddress: "0", LeaderElectionNamespace: ns,
		Logger: logr.Discard(),
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- controller.Run(ctx, o) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("controller: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("the controller did not stop within 30s")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// A Stack with manual approval and notifications: the endpoint receives
// one ApprovalRequired event carrying the plan's digest, and no second one,
// neither while the plan keeps waiting nor after the controller restarts.
// A second notification, whose URL (a Secret) answers 500, never holds the
// Stack, and its failure is an Event that does not show the URL.
func TestNotificationApprovalRequiredOnce(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")

	h := &hook{}
	srv := httptest.NewServer(h)
	defer srv.Close()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer broken.Close()
	secretURL := broken.URL + "/services/T000/B000/hush-hush-token"
	create(t, c, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "chat", Namespace: ns},
		Data:       map[string][]byte{"webhook": []byte(secretURL)},
	})
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) {
		st.Spec.Approval = v1alpha1.ApprovalManual
		st.Spec.Notifications = []v1alpha1.Notification{
			{URL: srv.URL + "/convoy", Events: []v1alpha1.NotificationEvent{v1alpha1.EventApprovalRequired, v1alpha1.EventApplied}},
			{URLFrom: &v1alpha1.URLSource{SecretKeyRef: v1alpha1.SecretKeyRef{Name: "chat", Key: "webhook"}}, Format: v1alpha1.FormatSlack},
		}
	}))
	cacheDir := t.TempDir()
	stop := runController(t, ns, cacheDir)

	st := waitStack(t, c, ns, "shop", 60*time.Second, "ApprovalRequired", isCond("ApprovalRequired", metav1.ConditionTrue, "ApprovalRequired"))
	digest := st.Status.Plan.Digest
	devtest.Eventually(t, 30*time.Second, func() bool { return len(h.Received()) != 0 },
		func() string { return "no notification within 30s:" + describe(st) })
	doc := h.Received()[0]
	plan, _ := doc["plan"].(map[string]any)
	if doc["event"] != "ApprovalRequired" || doc["stack"] != "shop" || doc["namespace"] != ns || plan == nil || plan["digest"] != digest || plan["configMap"] != st.Status.Plan.ConfigMapRef.Name {
		t.Fatalf("notification %v, want ApprovalRequired of plan %s", doc, digest)
	}
	if msg, _ := doc["message"].(string); !strings.Contains(msg, "convoy approve shop") {
		t.Errorf("message %q does not say how to approve", msg)
	}

	// The plan keeps waiting (it is checked every 2s): nothing is sent
	// again, and the broken endpoint did not hold the Stack.
	waitReconciles(t, c, ns, 3, "shop")
	stop()
	st = getStack(t, c, ns, "shop")
	if !hasNotified(st, "ApprovalRequired", digest) {
		t.Fatalf("status.notified %+v does not record ApprovalRequired of %s", st.Status.Notified, digest)
	}
	runController(t, ns, cacheDir)
	waitReconciles(t, c, ns, 3, "shop")
	if got := h.Received(); len(got) != 1 {
		t.Fatalf("%d notifications, want 1: %v", len(got), got)
	}

	// The failing endpoint's failure is an Event naming the notification,
	// never its URL.
	var failed string
	devtest.Eventually(t, 60*time.Second, func() bool {
		evs, err := cluster.Client().EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs.Items {
			if strings.Contains(e.Note, "hush-hush") || strings.Contains(e.Note, broken.URL) {
				t.Fatalf("an Event shows the secret URL: %s", e.Note)
			}
			if e.Reason == "NotificationFailed" {
				failed = e.Note
			}
		}
		return failed != ""
	}, func() string { return "no NotificationFailed event within 60s" })
	if !strings.Contains(failed, "spec.notifications[1]") || !strings.Contains(failed, "500") {
		t.Errorf("NotificationFailed %q does not name the notification and the answer", failed)
	}

	// Approved and applied: the Applied event follows, once.
	if _, err := ctl.Approve(context.Background(), c, ns, "shop", digest); err != nil {
		t.Fatal(err)
	}
	waitStack(t, c, ns, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	devtest.Eventually(t, 30*time.Second, func() bool { return len(h.Received()) >= 2 },
		func() string { return fmt.Sprintf("no Applied notification within 30s: %v", h.Received()) })
	doc = h.Received()[1]
	revs, _ := doc["revisions"].(map[string]any)
	if doc["event"] != "Applied" || revs["release.api"] != float64(1) {
		t.Fatalf("second notification %v, want Applied with release.api at revision 1", doc)
	}
}

func hasNotified(st *v1alpha1.Stack, event, digest string) bool {
	for _, n := range st.Status.Notified {
		if string(n.Event) == event && n.Digest == digest {
			return true
		}
	}
	return false
}

// The API server refuses notifications it could never send.
func TestNotificationsSchema(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	for want, n := range map[string]v1alpha1.Notification{
		"give one of url and urlFrom":   {URL: "https://hooks.example/a", URLFrom: &v1alpha1.URLSource{SecretKeyRef: v1alpha1.SecretKeyRef{Name: "s", Key: "url"}}},
		"should match '^https?://":      {URL: "hooks.example/a"},
		`Unsupported value: "Deployed"`: {URL: "https://hooks.example/a", Events: []v1alpha1.NotificationEvent{"Deployed"}},
		`Unsupported value: "discord"`:  {URL: "https://hooks.example/a", Format: "discord"},
	} {
		st := newStack(ns, "bad", "oci://127.0.0.1:1/stacks/app:v1", func(st *v1alpha1.Stack) { st.Spec.Notifications = []v1alpha1.Notification{n} })
		err := c.Create(context.Background(), st)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("notification %+v: %v, want %q", n, err, want)
			_ = c.Delete(context.Background(), st)
		}
	}
}
