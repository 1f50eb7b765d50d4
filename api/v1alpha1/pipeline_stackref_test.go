package v1alpha1_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A stage's Stacks are plain names (the Pipeline's namespace), as every
// Pipeline written so far has them, or {namespace, name}; each is written
// back as it was read.
func TestPipelineStackRefJSON(t *testing.T) {
	in := `["staging",{"namespace":"team-a-prod","name":"app"},{"name":"local"}]`
	var refs []v1alpha1.PipelineStackRef
	if err := json.Unmarshal([]byte(in), &refs); err != nil {
		t.Fatal(err)
	}
	want := []types.NamespacedName{{Namespace: "delivery", Name: "staging"}, {Namespace: "team-a-prod", Name: "app"}, {Namespace: "delivery", Name: "local"}}
	for i, r := range refs {
		if r.Invalid() != "" || r.In("delivery") != want[i] {
			t.Errorf("item %d: %+v (%s), want %s", i, r, r.Invalid(), want[i])
		}
	}
	out, err := json.Marshal(refs)
	if err != nil {
		t.Fatal(err)
	}
	// {"name": "local"} is the plain name "local": the same Stack.
	if got := string(out); got != `["staging",{"namespace":"team-a-prod","name":"app"},"local"]` {
		t.Fatalf("encoded %s", got)
	}
}

// An item that is neither a name nor {namespace, name} (stored before the
// CRD's schema refused it) decodes without error, so that one such
// Pipeline does not fail a list of Pipelines; Invalid says what it is,
// and it is written back unchanged.
func TestPipelineStackRefInvalidItemsDoNotFailTheList(t *testing.T) {
	list := `{"items":[
	  {"metadata":{"name":"bad","namespace":"d"},"spec":{"stages":[{"name":"s","stacks":[3,["x"],{"name":"a","namepsace":"b"},{"namespace":"b"}]}]}},
	  {"metadata":{"name":"good","namespace":"d"},"spec":{"stages":[{"name":"s","stacks":["a"]}]}}]}`
	var l v1alpha1.PipelineList
	if err := json.Unmarshal([]byte(list), &l); err != nil {
		t.Fatalf("one bad Pipeline failed the list: %v", err)
	}
	bad := l.Items[0].Spec.Stages[0].Stacks
	for i, want := range []string{"3 is neither", `["x"] is neither`, `{"name":"a","namepsace":"b"} is neither`, "no name"} {
		if got := bad[i].Invalid(); !strings.HasPrefix(got, want) {
			t.Errorf("item %d: Invalid() = %q, want %q…", i, got, want)
		}
	}
	if got := l.Items[1].Spec.Stages[0].Stacks[0]; got.Invalid() != "" || got.Name != "a" {
		t.Errorf("good Pipeline's Stack: %+v", got)
	}
	out, err := json.Marshal(bad[:3])
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out); got != `[3,["x"],{"name":"a","namepsace":"b"}]` {
		t.Errorf("written back as %s", got)
	}
	// A deep copy is a copy.
	p := l.Items[0].DeepCopy()
	p.Spec.Stages[0].Stacks[2].Name = "changed"
	if l.Items[0].Spec.Stages[0].Stacks[2].Name == "changed" {
		t.Error("the deep copy shares its Stacks")
	}
}

// The convoy.dev/pipeline annotation names a Pipeline of the Stack's
// namespace by its name (as before), one of another as namespace/name.
func TestPipelineOwner(t *testing.T) {
	st := &v1alpha1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a-prod", Name: "app"}}
	if _, ok := v1alpha1.PipelineOwner(st); ok {
		t.Fatal("owned without the annotation")
	}
	for _, pipelineNS := range []string{"team-a-prod", "delivery"} {
		st.Annotations = map[string]string{v1alpha1.PipelineAnnotation: v1alpha1.PipelineAnnotationValue(pipelineNS, "shop", st.Namespace)}
		got, ok := v1alpha1.PipelineOwner(st)
		if want := (types.NamespacedName{Namespace: pipelineNS, Name: "shop"}); !ok || got != want {
			t.Errorf("annotation %q: owner %s, want %s", st.Annotations[v1alpha1.PipelineAnnotation], got, want)
		}
	}
	if v := v1alpha1.PipelineAnnotationValue("team-a-prod", "shop", "team-a-prod"); v != "shop" {
		t.Errorf("same namespace: %q", v)
	}
}
