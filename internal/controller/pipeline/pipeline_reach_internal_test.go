package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func crossNamespacePipeline(sa string) *v1alpha1.Pipeline {
	return &v1alpha1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Namespace: "delivery", Name: "app"},
		Spec: v1alpha1.PipelineSpec{
			Source: "oci://r/stacks/app", Follow: v1alpha1.Follow{Semver: ">=1.0.0"}, ServiceAccountName: sa,
			Stages: []v1alpha1.Stage{
				{Name: "staging", Stacks: []v1alpha1.PipelineStackRef{{Namespace: "team-a-staging", Name: "app"}}},
				{Name: "production", Stacks: []v1alpha1.PipelineStackRef{{Namespace: "team-a-prod", Name: "app"}, {Name: "local"}}},
			},
		},
	}
}

// A Stack of another namespace is reached only as a service account of
// the Pipeline's own, and never under --no-cross-namespace-refs (on in
// --tenancy strict); its own namespace's Stacks are the controller's to
// pin unless strict makes every object act as its own identity.
func TestPipelineReach(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      Options
		sa        string
		problems  []string
		reachesAs map[string]bool
	}{
		{name: "no identity", problems: []string{
			"spec.stages[0].stacks[0]: Stack team-a-staging/app is of another namespace: a Pipeline reaches other namespaces only as a service account of its own",
			"spec.stages[1].stacks[0]: Stack team-a-prod/app is of another namespace",
		}, reachesAs: map[string]bool{"team-a-prod": false, "delivery": false}},
		{name: "its own", sa: "promoter", reachesAs: map[string]bool{"team-a-prod": true, "delivery": false}},
		{name: "the default", opts: Options{DefaultServiceAccount: "deployer"}, reachesAs: map[string]bool{"team-a-prod": true, "delivery": false}},
		{name: "no cross-namespace refs", opts: Options{NoCrossNamespaceRefs: true}, sa: "promoter", problems: []string{
			"spec.stages[0].stacks[0].namespace: team-a-staging: the controller refuses references to namespaces other than the Pipeline's own (delivery; --no-cross-namespace-refs)",
			"spec.stages[1].stacks[0].namespace: team-a-prod: ",
		}, reachesAs: map[string]bool{"delivery": false}},
		{name: "strict", opts: Options{Strict: true, NoCrossNamespaceRefs: true, DefaultServiceAccount: "deployer"}, problems: []string{
			"spec.stages[0].stacks[0].namespace: team-a-staging: the controller refuses",
		}, reachesAs: map[string]bool{"delivery": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reconciler{opts: tc.opts}
			p := crossNamespacePipeline(tc.sa)
			got := r.reachProblems(p)
			if len(tc.problems) == 0 && len(got) > 0 {
				t.Fatalf("problems %q", got)
			}
			for i, want := range tc.problems {
				if i >= len(got) || !strings.HasPrefix(got[i], want) {
					t.Fatalf("problems %q, want %q", got, tc.problems)
				}
			}
			for ns, want := range tc.reachesAs {
				if r.reachesAs(p, ns) != want {
					t.Errorf("reaches namespace %s as its service account: %t, want %t", ns, !want, want)
				}
			}
		})
	}
	o := Options{DefaultServiceAccount: "deployer"}
	if u := o.pipelineUser(crossNamespacePipeline("promoter")); u != "system:serviceaccount:delivery:promoter" {
		t.Errorf("user %q", u)
	}
	if u := o.pipelineUser(crossNamespacePipeline("")); u != "system:serviceaccount:delivery:deployer" {
		t.Errorf("default user %q", u)
	}
}

// A stage's Stack that is not a reference, and one Stack named twice (a
// plain name and its own namespace spelled out), are named by field.
func TestValidatePipelineStackRefs(t *testing.T) {
	p := crossNamespacePipeline("promoter")
	if got := validatePipeline(p.Namespace, &p.Spec); len(got) > 0 {
		t.Fatalf("problems %q", got)
	}
	p.Spec.Stages[0].Stacks = append(p.Spec.Stages[0].Stacks, v1alpha1.PipelineStackRef{Namespace: "delivery", Name: "local"})
	var bad v1alpha1.PipelineStackRef
	if err := bad.UnmarshalJSON([]byte(`42`)); err != nil {
		t.Fatal(err)
	}
	p.Spec.Stages[1].Stacks = append(p.Spec.Stages[1].Stacks, bad)
	got := strings.Join(validatePipeline(p.Namespace, &p.Spec), "; ")
	for _, want := range []string{
		"spec.stages[1].stacks[1]: Stack local is spec.stages[0].stacks[1] already",
		"spec.stages[1].stacks[2]: 42 is neither a Stack name nor {namespace, name}",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q, want %q", got, want)
		}
	}
}

// The stage machine keys a Stack of another namespace by namespace/name
// and names it so; status.stacks says which Stack is which.
func TestStageMachineAcrossNamespaces(t *testing.T) {
	p := crossNamespacePipeline("promoter")
	now := time.Unix(1_700_000_000, 0)
	views := map[string]stackView{
		"team-a-staging/app": {Pinned: d1, Ready: true},
		"team-a-prod/app":    {NotReady: "NoSource"},
		"local":              {NotReady: "NoSource"},
	}
	out := stepStages(machineInput{Namespace: p.Namespace, Now: now, Latest: d1, Spec: &p.Spec, Stacks: views})
	if out.Stages[0].Phase != v1alpha1.PhaseVerified || out.Stages[1].Phase != v1alpha1.PhasePromoting {
		t.Fatalf("stages %+v", out.Stages)
	}
	if len(out.Pins) != 2 || out.Pins["team-a-prod/app"] != d1 || out.Pins["local"] != d1 {
		t.Fatalf("pins %v", out.Pins)
	}
	st := stacksStatus(p, views, out.Pins, now)
	var got []string
	for _, s := range st {
		got = append(got, s.Stage+" "+s.Namespace+"/"+s.Name)
	}
	if want := "staging team-a-staging/app, production team-a-prod/app, production delivery/local"; strings.Join(got, ", ") != want {
		t.Fatalf("status.stacks %q, want %q", strings.Join(got, ", "), want)
	}
	// A failure names the Stack as namespace/name: in the stage's message
	// and the StageFailed notice (events, notifications).
	views["team-a-prod/app"] = stackView{Pinned: d1, Failed: "ApplyFailed: boom"}
	views["local"] = stackView{Pinned: d1}
	out = stepStages(machineInput{Namespace: p.Namespace, Now: now, Latest: d1, Spec: &p.Spec, Stages: out.Stages, Stacks: views})
	want := "Stack team-a-prod/app failed on " + d1 + ": ApplyFailed: boom"
	if s := out.Stages[1]; s.Phase != v1alpha1.PhaseFailed || s.Message != want {
		t.Fatalf("stage production %s: %q, want %q", s.Phase, s.Message, want)
	}
	if n := out.Notices; len(n) != 1 || n[0].Event != v1alpha1.EventStageFailed || n[0].Message != want {
		t.Fatalf("notices %+v", n)
	}
}
