package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/controller/ctl"
	"github.com/convoy-sh/convoy/internal/controller/pipeline"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func both(a, b func(*v1alpha1.Pipeline) bool) func(*v1alpha1.Pipeline) bool {
	return func(p *v1alpha1.Pipeline) bool { return a(p) && b(p) }
}

// settlePipeline waits until the Pipeline has listed the tags n more
// times (status.latest.checkedAt moves at each, interval apart): what it
// would do with what it observed, it has done.
func settlePipeline(t *testing.T, c client.Client, ns, name string, n int) {
	t.Helper()
	last := getPipeline(t, c, ns, name).Status.Latest.CheckedAt.Time
	moves := 0
	waitPipeline(t, c, ns, name, 60*time.Second, fmt.Sprintf("polled %d more times", n), func(p *v1alpha1.Pipeline) bool {
		if at := p.Status.Latest.CheckedAt.Time; at.After(last) {
			last, moves = at, moves+1
		}
		return moves >= n
	})
}

// stackLog records, from a watch of the namespace's Stacks, each Stack's
// pinned digest and readiness in the order the API server changed them.
type stackLog struct {
	mu     sync.Mutex
	events []stackState
}

type stackState struct {
	name, pinned string
	ready        bool
}

func watchStacks(t *testing.T, ns string) *stackLog {
	t.Helper()
	s, err := ctl.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	wc, err := client.NewWithWatch(cluster.RESTConfig(), client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(context.Background(), &v1alpha1.StackList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	l := &stackLog{}
	go func() {
		for ev := range w.ResultChan() {
			st, ok := ev.Object.(*v1alpha1.Stack)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			pinned := ""
			if ref, err := artifact.ParseRef(st.Spec.Source); err == nil {
				pinned = ref.Digest
			}
			rc := meta.FindStatusCondition(st.Status.Conditions, "Ready")
			ready := pinned != "" && rc != nil && rc.Status == metav1.ConditionTrue && rc.ObservedGeneration == st.Generation &&
				st.Status.ObservedGeneration == st.Generation && st.Status.Source != nil && st.Status.Source.Digest == pinned
			l.mu.Lock()
			l.events = append(l.events, stackState{st.Name, pinned, ready})
			l.mu.Unlock()
		}
	}()
	return l
}

// maxInProgress is the most Stacks of names that were at once pinned to
// digest and not yet Ready on it, replaying the watch in order.
func (l *stackLog) maxInProgress(digest string, names ...string) (int, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	state := map[string]stackState{}
	most, at := 0, ""
	for _, ev := range l.events {
		state[ev.name] = ev
		n := 0
		var busy []string
		for _, name := range names {
			if s := state[name]; s.pinned == digest && !s.ready {
				n++
				busy = append(busy, name)
			}
		}
		if n > most {
			most, at = n, strings.Join(busy, ", ")
		}
	}
	return most, at
}

func stackDigest(t *testing.T, c client.Client, ns, name string) string {
	t.Helper()
	st := getStack(t, c, ns, name)
	if st.Status.Source == nil {
		return ""
	}
	return st.Status.Source.Digest
}

// The acceptance: three Stacks without a source of their own in a
// Pipeline of two stages following semver ">=1.0.0". 1.0.0 reaches all
// three, staging first; 1.1.0, whose test hook fails, stops at staging
// with the test gate named; 1.2.0 with production's approval manual waits
// for convoy promote, then reaches prod-a and prod-b one at a time.
func TestPipelinePromotesThroughStages(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	for _, env := range []string{"staging", "prod-a", "prod-b"} {
		create(t, c, newStack(ns, env, "", func(st *v1alpha1.Stack) { st.Spec.Environment = env }))
		t.Cleanup(func() {
			_ = cluster.Client().CoreV1().Namespaces().Delete(context.Background(), ns+"-"+env, metav1.DeleteOptions{})
		})
	}
	one := int32(1)
	hook := &hookLog{}
	srv := httptest.NewServer(hook)
	t.Cleanup(srv.Close)
	create(t, c, &v1alpha1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns},
		Spec: v1alpha1.PipelineSpec{
			Source:        "oci://" + reg.Host + "/stacks/app",
			Follow:        v1alpha1.Follow{Semver: ">=1.0.0"},
			Interval:      &metav1.Duration{Duration: 2 * time.Second},
			Notifications: []v1alpha1.Notification{{URL: srv.URL}},
			Stages: []v1alpha1.Stage{
				{Name: "staging", Stacks: v1alpha1.StackRefs("staging"), Gates: []v1alpha1.Gate{{Test: &v1alpha1.TestGate{}}}},
				{Name: "production", Stacks: v1alpha1.StackRefs("prod-a", "prod-b"), MaxParallel: &one},
			},
		},
	})
	log := watchStacks(t, ns)
	startController(t, ns, nil)

	// Without a source, a Stack waits; nothing matches yet.
	st := waitStack(t, c, ns, "staging", 60*time.Second, "waiting for a source", isCond("Ready", metav1.ConditionFalse, v1alpha1.ReasonNoSource))
	if s := cond(st, "Stalled"); s != nil {
		t.Fatalf("a Stack without a source stalls:%s", describe(st))
	}
	waitPipeline(t, c, ns, "shop", 60*time.Second, "without a matching tag", func(p *v1alpha1.Pipeline) bool {
		c := meta.FindStatusCondition(p.Status.Conditions, "Ready")
		return c != nil && c.Reason == pipeline.ReasonNoMatchingTag
	})

	// 1.0.0: every Stack on it, staging first.
	push(t, reg, promotedStack(t, ns, "1.0.0", false), "not-semver")
	d1 := push(t, reg, promotedStack(t, ns, "1.0.0", false), "1.0.0")
	p := waitPipeline(t, c, ns, "shop", 3*time.Minute, "verified on 1.0.0",
		both(stageIs("staging", v1alpha1.PhaseVerified, d1), stageIs("production", v1alpha1.PhaseVerified, d1)))
	if p.Status.Latest.Tag != "1.0.0" {
		t.Fatalf("latest %+v", p.Status.Latest)
	}
	// Staging's test gate ran the chart's bare test Pod (helm create's
	// shape) to its end, beside its Job (issue 55, item 12: such a pod ran
	// forever and the gate with it).
	if pod, err := cluster.Client().CoreV1().Pods(ns+"-staging").Get(context.Background(), "app-test-pod", metav1.GetOptions{}); err != nil || pod.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("staging's bare test pod: %v, %v", err, pod)
	}
	at := map[string]v1alpha1.PipelineStack{}
	for _, s := range p.Status.Stacks {
		at[s.Name] = s
		if s.Digest != d1 || !s.Ready || s.PinnedAt == nil || s.ReadyAt == nil {
			t.Fatalf("Stack %s: %+v", s.Name, s)
		}
		if got := stackDigest(t, c, ns, s.Name); got != d1 {
			t.Fatalf("Stack %s runs %s, not %s", s.Name, got, d1)
		}
	}
	if at["prod-a"].PinnedAt.Before(at["staging"].ReadyAt) || at["prod-b"].PinnedAt.Before(at["staging"].ReadyAt) {
		t.Fatalf("production pinned before staging was Ready:%s", describePipeline(p))
	}
	if n, busy := log.maxInProgress(d1, "prod-a", "prod-b"); n != 1 {
		t.Fatalf("maxParallel 1: %d production Stacks in progress at once (%s)", n, busy)
	}
	if st := getStack(t, c, ns, "prod-a"); st.Annotations[v1alpha1.PipelineAnnotation] != "shop" {
		t.Fatalf("prod-a's annotations %v", st.Annotations)
	}

	// 1.1.0 fails its test hook: staging runs it, the stage fails naming
	// the test gate, production stays on 1.0.0.
	d2 := push(t, reg, promotedStack(t, ns, "1.1.0", true), "1.1.0")
	p = waitPipeline(t, c, ns, "shop", 3*time.Minute, "failed on 1.1.0 at staging", stageIs("staging", v1alpha1.PhaseFailed, d2))
	g := p.Status.Stages[0].FailedGate
	if g == nil || g.Gate != "spec.stages[0].gates[0] (test)" || !strings.Contains(g.Output, "app-test-fail") || !strings.Contains(g.Output, "Stack staging") {
		t.Fatalf("failed gate:%s", describePipeline(p))
	}
	if got := stackDigest(t, c, ns, "staging"); got != d2 {
		t.Fatalf("staging runs %s, not 1.1.0's %s", got, d2)
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, "Ready"); c == nil || c.Reason != pipeline.ReasonStageFailed {
		t.Fatalf("conditions:%s", describePipeline(p))
	}
	settlePipeline(t, c, ns, "shop", 3)
	p = getPipeline(t, c, ns, "shop")
	if !stageIs("production", v1alpha1.PhaseVerified, d1)(p) || !stageIs("staging", v1alpha1.PhaseFailed, d2)(p) {
		t.Fatalf("after the failure settled:%s", describePipeline(p))
	}
	for _, name := range []string{"prod-a", "prod-b"} {
		if st := getStack(t, c, ns, name); !strings.HasSuffix(st.Spec.Source, "@"+d1) || stackDigest(t, c, ns, name) != d1 {
			t.Fatalf("Stack %s left 1.0.0: %s%s", name, st.Spec.Source, describe(st))
		}
	}

	// 1.2.0 with production's approval manual: it waits for convoy
	// promote, then reaches prod-a and prod-b one at a time.
	for range 10 {
		p := getPipeline(t, c, ns, "shop")
		p.Spec.Stages[1].Approval = v1alpha1.ApprovalManual
		if err := c.Update(context.Background(), p); err == nil {
			break
		} else if !strings.Contains(err.Error(), "modified") {
			t.Fatal(err)
		}
	}
	d3 := push(t, reg, promotedStack(t, ns, "1.2.0", false), "1.2.0")
	waitPipeline(t, c, ns, "shop", 3*time.Minute, "awaiting approval of 1.2.0",
		both(stageIs("staging", v1alpha1.PhaseVerified, d3), stageIs("production", v1alpha1.PhaseAwaitingApproval, d3)))
	settlePipeline(t, c, ns, "shop", 3)
	for _, name := range []string{"prod-a", "prod-b"} {
		if got := stackDigest(t, c, ns, name); got != d1 {
			t.Fatalf("Stack %s runs %s before approval, not 1.0.0", name, got)
		}
	}
	ctx := context.Background()
	var pe *ctl.PromoteError
	if _, err := ctl.Promote(ctx, c, ns, "shop", "production", d2); !errors.As(err, &pe) || !strings.Contains(err.Error(), "awaits approval for "+d3+", not "+d2) {
		t.Fatalf("promote of another digest: %v", err)
	}
	if _, err := ctl.Promote(ctx, c, ns, "shop", "staging", ""); !errors.As(err, &pe) || !strings.Contains(err.Error(), "approval auto") {
		t.Fatalf("promote of an auto stage: %v", err)
	}
	if d, err := ctl.Promote(ctx, c, ns, "shop", "production", ""); err != nil || d != d3 {
		t.Fatalf("promote: %s, %v", d, err)
	}
	waitPipeline(t, c, ns, "shop", 3*time.Minute, "verified on 1.2.0", stageIs("production", v1alpha1.PhaseVerified, d3))
	for _, name := range []string{"staging", "prod-a", "prod-b"} {
		if got := stackDigest(t, c, ns, name); got != d3 {
			t.Fatalf("Stack %s runs %s, not 1.2.0", name, got)
		}
	}
	// The records production's Stacks wrote say who approved the stage.
	approver, err := ctl.WhoAmI(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{"prod-a", "prod-b"} {
		revs, err := run.RecordHistory(ctx, cluster.Client(), release.DriverSecret, ns+"-"+env, "app")
		if err != nil || len(revs) == 0 {
			t.Fatalf("the history of app in %s-%s: %v", ns, env, err)
		}
		want := "approved by " + approver + " (Pipeline " + ns + "/shop, stage production)"
		if d := revs[len(revs)-1].Description; !strings.Contains(d, want) {
			t.Errorf("%s: the newest record says %q, not %q", env, d, want)
		}
	}
	if n, busy := log.maxInProgress(d3, "prod-a", "prod-b"); n != 1 {
		t.Fatalf("maxParallel 1: %d production Stacks in progress at once (%s)", n, busy)
	}
	if _, err := ctl.Promote(ctx, c, ns, "shop", "production", ""); !errors.As(err, &pe) || !strings.Contains(err.Error(), "not awaiting approval (Verified") {
		t.Fatalf("promote of a verified stage: %v", err)
	}

	// Each stage event was told once, for its digest (the notifier's
	// workers send a reconcile's notices in any order).
	want := []string{
		"StageVerified staging " + d1, "StageVerified production " + d1,
		"StageFailed staging " + d2,
		"StageVerified staging " + d3, "ApprovalRequired production " + d3, "StageVerified production " + d3,
	}
	slices.Sort(want)
	var got []string
	devtest.Eventually(t, 30*time.Second, func() bool {
		got = hook.events()
		slices.Sort(got)
		return slices.Equal(got, want)
	}, func() string {
		return fmt.Sprintf("notifications:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	})
	if g := hook.gate("StageFailed staging " + d2); g != "spec.stages[0].gates[0] (test)" {
		t.Errorf("the StageFailed notification names gate %q", g)
	}
}

// hookLog is a webhook that records the Pipeline notifications it
// receives, in order.
type hookLog struct {
	mu     sync.Mutex
	bodies []map[string]any
}

func (h *hookLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.bodies = append(h.bodies, body)
	h.mu.Unlock()
}

func (h *hookLog) events() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, b := range h.bodies {
		out = append(out, fmt.Sprintf("%v %v %v", b["event"], b["stage"], b["digest"]))
	}
	return out
}

func (h *hookLog) gate(event string) any {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, b := range h.bodies {
		if fmt.Sprintf("%v %v %v", b["event"], b["stage"], b["digest"]) == event {
			return b["gate"]
		}
	}
	return nil
}
