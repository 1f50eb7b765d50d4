package stackset

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func regsOf(rs ...Registration) Registrations {
	return func(ns string) ([]Registration, error) {
		var out []Registration
		for _, r := range rs {
			if r.Namespace == ns {
				out = append(out, r)
			}
		}
		return out, nil
	}
}

var fleet = regsOf(
	Registration{Namespace: "fleet", Name: "eu-1", Labels: map[string]string{"env": "prod", "region": "eu"}},
	Registration{Namespace: "fleet", Name: "us-1", Labels: map[string]string{"env": "prod", "region": "us"}},
	Registration{Namespace: "fleet", Name: "dev-1", Labels: map[string]string{"env": "dev", "region": "eu"}},
	Registration{Namespace: "hub", Name: "shared", Labels: map[string]string{"env": "prod", "region": "ap"}, HasAllowed: true, Allowed: []string{"team-a"}},
	Registration{Namespace: "hub", Name: "closed", Labels: map[string]string{"env": "closed"}},
)

func sel(kv ...string) *metav1.LabelSelector {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &metav1.LabelSelector{MatchLabels: m}
}

func stackSetOf(ns string, gens ...v1alpha1.Generator) *v1alpha1.StackSet {
	return &v1alpha1.StackSet{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns},
		Spec: v1alpha1.StackSetSpec{Generators: gens, Template: v1alpha1.StackTemplate{Spec: v1alpha1.StackSpec{
			Source: "oci://r.example/shop:live", Environment: "{{cluster.labels.env}}",
			Vars: map[string]string{"region": "{{cluster.labels.region}}"},
		}}},
	}
}

func TestGenerateClustersListAndMatrix(t *testing.T) {
	tests := []struct {
		name   string
		gens   []v1alpha1.Generator
		stacks []string
		check  func(t *testing.T, gen []generated)
	}{{
		name:   "clusters by label, in name order",
		gens:   []v1alpha1.Generator{{Clusters: &v1alpha1.ClustersGenerator{Selector: sel("env", "prod")}}},
		stacks: []string{"shop-eu-1", "shop-us-1"},
		check: func(t *testing.T, gen []generated) {
			st := gen[0].stack
			if st.Spec.Environment != "prod" || st.Spec.Vars["region"] != "eu" {
				t.Fatalf("parameters: %+v", st.Spec)
			}
			if c := st.Spec.Clusters; len(c) != 1 || c[0].Name != "target" || c[0].SecretRef.Name != "eu-1" || c[0].SecretRef.Key != "kubeconfig" {
				t.Fatalf("clusters: %+v", c)
			}
			if st.Labels[v1alpha1.StackSetLabel] != "shop" || st.Annotations[v1alpha1.ElementAnnotation] != "eu-1" || st.Spec.Approval != v1alpha1.ApprovalAuto {
				t.Fatalf("metadata: %+v %+v", st.ObjectMeta, st.Spec.Approval)
			}
		},
	}, {
		name: "a matrix of clusters and a list",
		gens: []v1alpha1.Generator{{Matrix: &v1alpha1.MatrixGenerator{Generators: []v1alpha1.LeafGenerator{
			{Clusters: &v1alpha1.ClustersGenerator{Selector: sel("region", "eu")}},
			{List: []v1alpha1.ListElement{{Name: "blue"}, {Name: "green"}}},
		}}}},
		stacks: []string{"shop-dev-1-blue", "shop-dev-1-green", "shop-eu-1-blue", "shop-eu-1-green"},
	}, {
		name:   "another namespace's registration that allows this one; its kubeconfig copied",
		gens:   []v1alpha1.Generator{{Clusters: &v1alpha1.ClustersGenerator{Namespace: "hub", Selector: sel("env", "prod"), Block: "prod"}}},
		stacks: []string{"shop-shared"},
		check: func(t *testing.T, gen []generated) {
			c := gen[0].stack.Spec.Clusters[0]
			if c.Name != "prod" || c.SecretRef.Name != "shop-cluster-hub-shared" || c.SecretRef.Namespace != "" {
				t.Fatalf("cluster ref %+v", c)
			}
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ss := stackSetOf("team-a", tc.gens...)
			if tc.gens[0].Clusters != nil && tc.gens[0].Clusters.Namespace == "" {
				ss.Namespace = "fleet"
			}
			if tc.gens[0].Matrix != nil {
				ss.Namespace = "fleet"
				ss.Spec.Template.Spec.Environment = "{{list.name}}"
			}
			els, err := elements(ss.Namespace, ss.Spec.Generators, fleet, true)
			if err != nil {
				t.Fatal(err)
			}
			gen, err := render(ss, els)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, g := range gen {
				names = append(names, g.stack.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, tc.stacks) {
				t.Fatalf("Stacks %v, want %v", names, tc.stacks)
			}
			if tc.check != nil {
				tc.check(t, gen)
			}
		})
	}
}

func TestGenerateRefusesBadInput(t *testing.T) {
	tests := []struct {
		name   string
		ns     string
		gens   []v1alpha1.Generator
		tmpl   func(*v1alpha1.StackTemplate)
		strict bool
		reason string
		want   []string
	}{{
		name: "an unknown parameter names the element and what there is",
		ns:   "fleet", gens: []v1alpha1.Generator{{Clusters: &v1alpha1.ClustersGenerator{Selector: sel("env", "prod")}}},
		tmpl:   func(t *v1alpha1.StackTemplate) { t.Spec.Vars["x"] = "{{cluster.labels.tier}}" },
		reason: v1alpha1.ReasonTemplateInvalid,
		want:   []string{`element "eu-1"`, "spec.template.spec.vars.x", "no parameter {{cluster.labels.tier}}", "{{cluster.labels.region}}"},
	}, {
		name: "a name that is no Stack name",
		ns:   "fleet", gens: []v1alpha1.Generator{{List: []v1alpha1.ListElement{{Name: "a", Vars: map[string]string{"n": "Not_OK"}}}}},
		tmpl:   func(t *v1alpha1.StackTemplate) { t.Name = "{{list.vars.n}}"; t.Spec.Environment, t.Spec.Vars = "", nil },
		reason: v1alpha1.ReasonTemplateInvalid,
		want:   []string{`element "a"`, "spec.template.name", `"Not_OK" is no Stack name`},
	}, {
		name: "two elements, one Stack name",
		ns:   "fleet", gens: []v1alpha1.Generator{{List: []v1alpha1.ListElement{{Name: "a"}, {Name: "b"}}}},
		tmpl:   func(t *v1alpha1.StackTemplate) { t.Name = "one"; t.Spec.Environment, t.Spec.Vars = "", nil },
		reason: v1alpha1.ReasonTemplateInvalid,
		want:   []string{`element "b"`, `"one" is the name of element "a"'s Stack too`},
	}, {
		name: "an element twice",
		ns:   "fleet", gens: []v1alpha1.Generator{{List: []v1alpha1.ListElement{{Name: "eu-1"}}}, {Clusters: &v1alpha1.ClustersGenerator{Selector: sel("region", "eu")}}},
		reason: v1alpha1.ReasonTemplateInvalid,
		want:   []string{`element "eu-1" of spec.generators[1].clusters is an element of spec.generators[0].list[0] already`},
	}, {
		name: "a registration that does not allow the namespace",
		ns:   "team-b", gens: []v1alpha1.Generator{{Clusters: &v1alpha1.ClustersGenerator{Namespace: "hub", Selector: sel("env", "prod")}}},
		reason: v1alpha1.ReasonForbidden,
		want:   []string{"v1 Secret hub/shared", "does not allow namespace team-b (convoy.dev/allowed-namespaces: team-a)"},
	}, {
		name: "strict: a registration without the annotation",
		ns:   "team-a", gens: []v1alpha1.Generator{{Clusters: &v1alpha1.ClustersGenerator{Namespace: "hub", Selector: sel("env", "closed")}}},
		strict: true, reason: v1alpha1.ReasonForbidden,
		want: []string{"v1 Secret hub/closed", "allows no other namespace than its own"},
	}, {
		name: "a matrix of two clusters generators",
		ns:   "fleet", gens: []v1alpha1.Generator{{Matrix: &v1alpha1.MatrixGenerator{Generators: []v1alpha1.LeafGenerator{
			{Clusters: &v1alpha1.ClustersGenerator{}}, {Clusters: &v1alpha1.ClustersGenerator{}},
		}}}},
		reason: v1alpha1.ReasonInvalid,
		want:   []string{"a matrix of two clusters generators"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ss := stackSetOf(tc.ns, tc.gens...)
			if tc.tmpl != nil {
				tc.tmpl(&ss.Spec.Template)
			}
			els, err := elements(ss.Namespace, ss.Spec.Generators, fleet, tc.strict)
			if err == nil {
				_, err = render(ss, els)
			}
			var ge *GenerateError
			if !errors.As(err, &ge) || ge.Reason != tc.reason {
				t.Fatalf("got %v, want a %s error", err, tc.reason)
			}
			for _, w := range tc.want {
				if !strings.Contains(ge.Msg, w) {
					t.Errorf("%q does not say %q", ge.Msg, w)
				}
			}
		})
	}
	// Not strict: a registration without the annotation is selectable.
	if els, err := elements("team-a", []v1alpha1.Generator{{Clusters: &v1alpha1.ClustersGenerator{Namespace: "hub", Selector: sel("env", "closed")}}}, fleet, false); err != nil || len(els) != 1 {
		t.Fatalf("not strict: %v %v", els, err)
	}
}

func TestAssignSteps(t *testing.T) {
	ss := stackSetOf("fleet", v1alpha1.Generator{Clusters: &v1alpha1.ClustersGenerator{}})
	els, err := elements("fleet", ss.Spec.Generators, fleet, false)
	if err != nil {
		t.Fatal(err)
	}
	gen, err := render(ss, els)
	if err != nil {
		t.Fatal(err)
	}
	pct := int32(34)
	steps := []v1alpha1.RolloutStep{
		{Name: "dev", Selector: sel("env", "dev")},
		{Percent: &pct}, // of 3 Stacks: 2, in name order of those left
		{Name: "never", Selector: sel("env", "none")},
		{Name: "last"},
	}
	got, err := assignSteps(steps, gen)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"shop-dev-1": "dev", "shop-eu-1": "step-2", "shop-us-1": "step-2"}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("steps %v, want %v", got, want)
		}
	}
	p, err := rolloutPipeline(ss, steps, gen, got, nil)
	if err != nil {
		t.Fatal(err)
	}
	var stages []string
	for _, s := range p.Spec.Stages {
		stages = append(stages, s.Name)
	}
	if !slices.Equal(stages, []string{"dev", "step-2"}) || p.Spec.Source != "oci://r.example/shop" || p.Spec.Follow.Tag != "live" {
		t.Fatalf("pipeline %+v", p.Spec)
	}
	// A digest (a Pipeline stage pinned the StackSet): followed as is.
	d := "sha256:" + strings.Repeat("a", 64)
	ss.Spec.Template.Spec.Source = "oci://r.example/shop@" + d
	if p, err := rolloutPipeline(ss, steps, gen, got, nil); err != nil || p.Spec.Follow != (v1alpha1.Follow{Digest: d}) || p.Spec.Source != "oci://r.example/shop" {
		t.Fatalf("a digest source: %v %+v", err, p)
	}
	// No source yet: no Pipeline, the Stacks wait for a pin.
	ss.Spec.Template.Spec.Source = ""
	if p, err := rolloutPipeline(ss, steps, gen, got, nil); err != nil || p != nil {
		t.Fatalf("no source: %v %+v", err, p)
	}
	ss.Spec.Template.Spec.Source = "oci://r.example/shop:live@" + d
	if _, err := rolloutPipeline(ss, steps, gen, got, nil); err == nil || !strings.Contains(err.Error(), "follows a tag") {
		t.Fatalf("a tag and a digest: %v", err)
	}
}

func TestGroupPlans(t *testing.T) {
	st := func(name, summary string, changes []string, applied bool, reason string) *v1alpha1.Stack {
		s := &v1alpha1.Stack{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1}}
		s.Status.ObservedGeneration = 1
		status := metav1.ConditionFalse
		if reason == "" {
			reason, status = v1alpha1.ReasonApplied, metav1.ConditionTrue
		}
		s.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: status, Reason: reason, Message: "forbidden: cannot list secrets"}}
		s.Status.Plan = &v1alpha1.PlanStatus{Digest: "sha256:" + name, Summary: summary, Changes: changes, HasChanges: summary != ""}
		if applied {
			s.Status.LastAppliedPlan = s.Status.Plan.Digest
		}
		return s
	}
	up := []string{"upgrade release.api"}
	stacks := []*v1alpha1.Stack{
		st("c", "0 to install, 1 to upgrade", up, false, v1alpha1.ReasonApprovalRequired),
		st("a", "0 to install, 1 to upgrade", up, false, v1alpha1.ReasonApprovalRequired),
		st("b", "0 to install, 1 to upgrade", up, true, ""),
		st("d", "", nil, false, v1alpha1.ReasonPlanFailed),
		st("e", "0 to install, 1 to upgrade", up, false, v1alpha1.ReasonApprovalRequired),
	}
	got := planSummary(groupPlans(stacks))
	want := "3 Stacks: 0 to install, 1 to upgrade (upgrade release.api); 1 Stack: PlanFailed: forbidden: cannot list secrets; 1 Stack: no changes"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if g := groupPlans(stacks)[0].Stacks; !slices.Equal(g, []string{"a", "c", "e"}) {
		t.Fatalf("group %v", g)
	}
	if s := countSummary(stacks); s != "5 Stacks: 3 ApprovalRequired, 1 PlanFailed, 1 Ready" {
		t.Fatal(s)
	}
}
