package stack

import (
	"context"
	"testing"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
