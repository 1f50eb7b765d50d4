package stack

import (
	"context"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// stacksReader lists its Stacks, refusing field selectors as an API
// server or CRD without status.identity as a selectable field does.
type stacksReader struct {
	client.Reader
	stacks   []v1alpha1.Stack
	selected int
}

func (s *stacksReader) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	if o.FieldSelector != nil && !o.FieldSelector.Empty() {
		s.selected++
		return apierrors.NewBadRequest(`Unable to find "convoy.dev/v1alpha1, Resource=stacks" that match label selector "", field selector "status.identity=x": field label not supported: status.identity`)
	}
	list.(*v1alpha1.StackList).Items = append([]v1alpha1.Stack(nil), s.stacks...)
	return nil
}

// Where the identity cannot be selected, every Stack is listed: the
// duplicate is still found.
func TestSameIdentityWithoutSelectableFields(t *testing.T) {
	stack := func(name, identity string) v1alpha1.Stack {
		return v1alpha1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Status: v1alpha1.StackStatus{Identity: identity}}
	}
	reader := &stacksReader{stacks: []v1alpha1.Stack{stack("a", "x"), stack("b", "y")}}
	r := &reconciler{reader: reader}
	st := stack("c", "x")
	got, err := r.sameIdentityUncached(context.Background(), &st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if reader.selected != 1 || len(got) != 2 {
		t.Fatalf("%d selected lists, %d Stacks listed; want the selector tried once, then every Stack", reader.selected, len(got))
	}
}

// A Stack whose identity is scoped to its namespace never waits for, nor
// names, a Stack of another namespace not reconciled yet (it cannot have
// its identity); a Stack acting as the controller still waits for an
// older one from the same repository, as before.
func TestScopedIdentityWaitsOnlyInItsNamespace(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	squat := &v1alpha1.Stack{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "squat", CreationTimestamp: metav1.NewTime(now.Add(-10 * time.Second))},
		Spec:       v1alpha1.StackSpec{Source: "oci://registry.example/stacks/billing:v1"},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(squat).Build()
	r := &reconciler{client: c, reader: c}
	mine := &v1alpha1.Stack{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "billing", UID: "b", CreationTimestamp: metav1.NewTime(now)},
		Spec:       v1alpha1.StackSpec{Source: "oci://registry.example/stacks/billing:v2"},
		Status:     v1alpha1.StackStatus{Identity: "team-b/billing@https://10.0.0.1:6443"},
	}
	first, waitFor, err := r.firstOf(context.Background(), mine, false)
	if err != nil {
		t.Fatal(err)
	}
	if first != nil || waitFor != nil {
		t.Errorf("team-b's scoped Stack: first %v, waits for %v; want neither", first, waitFor)
	}
	mine.Status.Identity = "billing@https://10.0.0.1:6443"
	if _, waitFor, err = r.firstOf(context.Background(), mine, false); err != nil || waitFor == nil || waitFor.Name != "squat" {
		t.Errorf("an unscoped Stack waits for %v (%v), want team-a/squat", waitFor, err)
	}
}

// A Stack pinned by a Pipeline's manual stage records who approved that
// stage for the digest it applies; an annotation naming a Pipeline whose
// stages do not name the Stack, or an approval of another digest, adds
// nothing.
func TestPromotionNoteNamesTheStagesApprover(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	const d = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	p := &v1alpha1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Namespace: "delivery", Name: "shop"},
		Spec: v1alpha1.PipelineSpec{
			Stages: []v1alpha1.Stage{
				{Name: "staging", Stacks: []v1alpha1.PipelineStackRef{{Namespace: "team-a", Name: "staging"}}},
				{Name: "production", Approval: v1alpha1.ApprovalManual, Stacks: []v1alpha1.PipelineStackRef{{Namespace: "team-a", Name: "prod"}}},
			},
			Approvals: []v1alpha1.StageApproval{{Stage: "production", Digest: d, ApprovedBy: "alice"}},
		},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(p).Build()
	r := &reconciler{client: c, reader: c}
	stackOf := func(name string) *v1alpha1.Stack {
		return &v1alpha1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name,
			Annotations: map[string]string{v1alpha1.PipelineAnnotation: v1alpha1.PipelineAnnotationValue("delivery", "shop", "team-a")}}}
	}
	ctx := context.Background()
	if got, want := r.promotionNote(ctx, stackOf("prod"), d), "approved by alice (Pipeline delivery/shop, stage production)"; got != want {
		t.Errorf("prod: %q, want %q", got, want)
	}
	if got := r.promotionNote(ctx, stackOf("prod"), "sha256:other"); got != "" {
		t.Errorf("another digest: %q", got)
	}
	if got := r.promotionNote(ctx, stackOf("staging"), d); got != "" {
		t.Errorf("a Stack of an auto stage: %q", got)
	}
	if got := r.promotionNote(ctx, stackOf("impostor"), d); got != "" {
		t.Errorf("a Stack the Pipeline does not name: %q", got)
	}
}
