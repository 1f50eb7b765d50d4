package pipeline_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func rawPipeline(ns, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "convoy.dev/v1alpha1", "kind": "Pipeline",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
}

// The API server rejects Pipelines the controller could not use, naming
// the field.
func TestCRDRejectsInvalidPipelines(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	src := "oci://127.0.0.1:1/stacks/app"
	stage := func(name string, extra map[string]any) map[string]any {
		s := map[string]any{"name": name, "stacks": []any{name}}
		for k, v := range extra {
			s[k] = v
		}
		return s
	}
	spec := func(mod func(map[string]any)) map[string]any {
		s := map[string]any{"source": src, "follow": map[string]any{"semver": ">=1.0.0"}, "stages": []any{stage("staging", nil)}}
		mod(s)
		return s
	}
	for _, tc := range []struct {
		name string
		spec map[string]any
		want string
	}{
		{"source-with-tag", spec(func(s map[string]any) { s["source"] = src + ":v1" }), "spec.source"},
		{"follow-both", spec(func(s map[string]any) { s["follow"] = map[string]any{"semver": ">=1", "tag": "main"} }), "give exactly one of semver, tag and digest"},
		{"follow-none", spec(func(s map[string]any) { s["follow"] = map[string]any{} }), "give exactly one of semver, tag and digest"},
		{"no-stage", spec(func(s map[string]any) { s["stages"] = []any{} }), "spec.stages"},
		{"stage-twice", spec(func(s map[string]any) { s["stages"] = []any{stage("staging", nil), stage("staging", nil)} }), "spec.stages[1]"},
		{"stage-name", spec(func(s map[string]any) { s["stages"] = []any{stage("Staging!", nil)} }), "spec.stages[0].name"},
		{"bake", spec(func(s map[string]any) { s["stages"] = []any{stage("staging", map[string]any{"bake": "a while"})} }), "spec.stages[0].bake"},
		{"max-parallel", spec(func(s map[string]any) { s["stages"] = []any{stage("staging", map[string]any{"maxParallel": 0})} }), "spec.stages[0].maxParallel"},
		{"approval", spec(func(s map[string]any) { s["stages"] = []any{stage("staging", map[string]any{"approval": "later"})} }), "spec.stages[0].approval"},
		{"gate-two-kinds", spec(func(s map[string]any) {
			s["stages"] = []any{stage("staging", map[string]any{"gates": []any{map[string]any{"test": map[string]any{}, "cel": "true"}}})}
		}), "a gate is exactly one of test, cel and prometheus"},
		{"gate-none", spec(func(s map[string]any) {
			s["stages"] = []any{stage("staging", map[string]any{"gates": []any{map[string]any{}}})}
		}), "a gate is exactly one of test, cel and prometheus"},
		{"prometheus-address", spec(func(s map[string]any) {
			s["stages"] = []any{stage("staging", map[string]any{"gates": []any{map[string]any{"prometheus": map[string]any{"address": "prom:9090", "query": "up", "max": 1}}}})}
		}), "spec.stages[0].gates[0].prometheus.address"},
		{"approval-digest", spec(func(s map[string]any) { s["approvals"] = []any{map[string]any{"stage": "staging", "digest": "abc"}} }), "spec.approvals[0].digest"},
		// A stage's Stack is a name or {namespace, name}, nothing else.
		{"stack-name", spec(func(s map[string]any) {
			s["stages"] = []any{stage("staging", map[string]any{"stacks": []any{"Bad_Name"}})}
		}), "spec.stages[0].stacks[0]"},
		{"stack-object-name", spec(func(s map[string]any) {
			s["stages"] = []any{stage("staging", map[string]any{"stacks": []any{map[string]any{"name": "Bad_"}}})}
		}), "spec.stages[0].stacks[0].name"},
		{"stack-object-no-name", spec(func(s map[string]any) {
			s["stages"] = []any{stage("staging", map[string]any{"stacks": []any{map[string]any{"namespace": "other"}}})}
		}), "spec.stages[0].stacks[0].name"},
		{"stack-object-typo", spec(func(s map[string]any) {
			s["stages"] = []any{stage("staging", map[string]any{"stacks": []any{map[string]any{"name": "app", "namepsace": "other"}}})}
		}), "spec.stages[0].stacks[0]"},
		{"stack-object-namespace", spec(func(s map[string]any) {
			s["stages"] = []any{stage("staging", map[string]any{"stacks": []any{map[string]any{"name": "app", "namespace": "Other_NS"}}})}
		}), "spec.stages[0].stacks[0].namespace"},
		{"notification-event", spec(func(s map[string]any) {
			s["notifications"] = []any{map[string]any{"url": "http://x", "events": []any{"Applied"}}}
		}), "spec.notifications[0].events[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Create(context.Background(), rawPipeline(ns, tc.name, tc.spec))
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want Invalid naming %q, got %v", tc.want, err)
			}
		})
	}
	me, err := ctl.WhoAmI(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	ok := rawPipeline(ns, "valid", spec(func(s map[string]any) {
		s["interval"] = "30s"
		s["stages"] = []any{
			stage("staging", map[string]any{"bake": "5m", "gates": []any{
				map[string]any{"test": map[string]any{}},
				map[string]any{"cel": "objects.all(o, true)"},
				map[string]any{"prometheus": map[string]any{"address": "http://prom:9090", "query": "up", "max": 0.01}},
			}}),
			stage("production", map[string]any{"maxParallel": 1, "approval": "manual", "rollback": true,
				"stacks": []any{"production", map[string]any{"namespace": "team-a-prod", "name": "app"}, map[string]any{"name": "canary"}}}),
		}
		// A new approval names the user who writes it (the approval policy).
		s["approvals"] = []any{map[string]any{"stage": "production", "digest": "sha256:" + strings.Repeat("ab", 32), "approvedBy": me}}
	}))
	if err := c.Create(context.Background(), ok); err != nil {
		t.Errorf("a valid Pipeline: %v", err)
	}
	got := getPipeline(t, c, ns, "valid").Spec.Stages[1].Stacks
	var names []string
	for _, r := range got {
		names = append(names, r.String()+r.Invalid())
	}
	if want := "production team-a-prod/app canary"; strings.Join(names, " ") != want {
		t.Errorf("production's Stacks read back as %q, want %q", strings.Join(names, " "), want)
	}
}

func pipelineCond(p *v1alpha1.Pipeline, typ string) *metav1.Condition {
	return meta.FindStatusCondition(p.Status.Conditions, typ)
}

func stalledWith(reason string, parts ...string) func(*v1alpha1.Pipeline) bool {
	return func(p *v1alpha1.Pipeline) bool {
		c := pipelineCond(p, "Stalled")
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason || c.ObservedGeneration != p.Generation {
			return false
		}
		for _, s := range parts {
			if !strings.Contains(c.Message, s) {
				return false
			}
		}
		return true
	}
}

// Bad input is a clear condition on the Pipeline, and nothing is
// promoted: a missing Stack, a Stack in two Pipelines, a Stack with a
// source of its own, a semver constraint or a CEL gate that does not
// compile, a repository that does not answer.
func TestPipelineBadInputPromotesNothing(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, ns, "v1", ""), "1.0.0")
	src := "oci://" + reg.Host + "/stacks/app"
	for _, name := range []string{"a", "b", "shared", "c", "d", "e"} {
		create(t, c, newStack(ns, name, "", nil))
	}
	create(t, c, newStack(ns, "own", src+":1.0.0", func(st *v1alpha1.Stack) { st.Spec.Suspend = true }))
	pipeline := func(name string, stacks []string, mod func(*v1alpha1.PipelineSpec)) {
		p := &v1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.PipelineSpec{
			Source: src, Follow: v1alpha1.Follow{Semver: ">=1.0.0"}, Interval: &metav1.Duration{Duration: 2 * time.Second},
			Stages: []v1alpha1.Stage{{Name: "only", Stacks: v1alpha1.StackRefs(stacks...)}},
		}}
		if mod != nil {
			mod(&p.Spec)
		}
		create(t, c, p)
	}
	pipeline("missing", []string{"a", "nope"}, nil)
	pipeline("first", []string{"shared"}, nil)
	// Created later, or in the same second (creation times are seconds):
	// then the larger name is the later one.
	pipeline("second", []string{"b", "shared"}, nil)
	pipeline("foreign", []string{"own"}, nil)
	pipeline("semver", []string{"c"}, func(s *v1alpha1.PipelineSpec) { s.Follow.Semver = ">=1.x.y!" })
	pipeline("cel", []string{"d"}, func(s *v1alpha1.PipelineSpec) {
		s.Stages[0].Gates = []v1alpha1.Gate{{Test: &v1alpha1.TestGate{}}, {CEL: "objects.all(o, o.kind ==)"}}
	})
	pipeline("unreachable", []string{"e"}, func(s *v1alpha1.PipelineSpec) { s.Source = "oci://127.0.0.1:1/stacks/app" })
	// A Stack of another namespace, and no service account to reach it as.
	pipeline("elsewhere", nil, func(s *v1alpha1.PipelineSpec) {
		s.Stages[0].Stacks = []v1alpha1.PipelineStackRef{{Namespace: "team-a-prod", Name: "app"}}
	})
	// The CRD cannot type an entry "string or object": a number passes
	// the API server, and the controller refuses it.
	create(t, c, rawPipeline(ns, "number", map[string]any{"source": src, "follow": map[string]any{"semver": ">=1.0.0"},
		"stages": []any{map[string]any{"name": "only", "stacks": []any{"a", 3}}}}))
	startController(t, ns, nil)

	waitPipeline(t, c, ns, "missing", 60*time.Second, "stalled naming the missing Stack",
		stalledWith("StackNotFound", "convoy.dev/v1alpha1 Stack "+ns+"/nope (spec.stages[0].stacks[1])", "nothing is promoted"))
	waitPipeline(t, c, ns, "second", 60*time.Second, "stalled naming the other Pipeline",
		stalledWith("StackConflict", "Stack shared is in Pipeline "+ns+"/first, created earlier"))
	waitPipeline(t, c, ns, "foreign", 60*time.Second, "stalled naming the Stack with its own source",
		stalledWith("ForeignSource", "Stack own has a spec.source of its own ("+src+":1.0.0)"))
	waitPipeline(t, c, ns, "semver", 60*time.Second, "stalled naming spec.follow.semver",
		stalledWith("Invalid", `spec.follow.semver ">=1.x.y!"`))
	waitPipeline(t, c, ns, "cel", 60*time.Second, "stalled naming the CEL gate",
		stalledWith("Invalid", "spec.stages[0].gates[1].cel: "))
	waitPipeline(t, c, ns, "elsewhere", 60*time.Second, "stalled naming the Stack of another namespace",
		stalledWith("Invalid", "spec.stages[0].stacks[0]: Stack team-a-prod/app is of another namespace: a Pipeline reaches other namespaces only as a service account of its own"))
	waitPipeline(t, c, ns, "number", 60*time.Second, "stalled naming the entry that is not a Stack",
		stalledWith("Invalid", "spec.stages[0].stacks[1]: 3 is neither a Stack name nor {namespace, name}"))
	p := waitPipeline(t, c, ns, "unreachable", 60*time.Second, "not Ready with the registry's error", func(p *v1alpha1.Pipeline) bool {
		r, rc := pipelineCond(p, "Ready"), pipelineCond(p, "Reconciling")
		return r != nil && r.Reason == "SourceFailed" && strings.Contains(r.Message, "oci://127.0.0.1:1/stacks/app: list the tags") &&
			rc != nil && rc.Status == metav1.ConditionTrue && pipelineCond(p, "Stalled") == nil
	})
	if p.Status.Latest != nil && p.Status.Latest.Digest != "" {
		t.Fatalf("latest %+v", p.Status.Latest)
	}
	// The first Pipeline owns "shared", and promotes it.
	first := waitPipeline(t, c, ns, "first", 90*time.Second, "verified", func(p *v1alpha1.Pipeline) bool {
		c := pipelineCond(p, "Ready")
		return c != nil && c.Status == metav1.ConditionTrue
	})
	d := first.Status.Latest.Digest
	if st := getStack(t, c, ns, "shared"); st.Spec.Source != src+"@"+d || st.Annotations[v1alpha1.PipelineAnnotation] != "first" {
		t.Fatalf("shared: source %q annotations %v", st.Spec.Source, st.Annotations)
	}
	// Nothing else was pinned; a Stack without a source waits, not stalled.
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		st := waitStack(t, c, ns, name, 30*time.Second, "waiting for a source", isCond("Ready", metav1.ConditionFalse, "NoSource"))
		if st.Spec.Source != "" || cond(st, "Stalled") != nil {
			t.Fatalf("Stack %s: source %q%s", name, st.Spec.Source, describe(st))
		}
	}
	if st := getStack(t, c, ns, "own"); st.Spec.Source != src+":1.0.0" {
		t.Fatalf("own: source %q", st.Spec.Source)
	}
}
