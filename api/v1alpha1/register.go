package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DefaultInterval is a Stack's interval when unset.
const DefaultInterval = 5 * time.Minute

// GroupVersion is convoy.dev/v1alpha1.
var GroupVersion = schema.GroupVersion{Group: "convoy.dev", Version: "v1alpha1"}

// AddToScheme registers Stack, Pipeline and their lists.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Stack{}, &StackList{}, &Pipeline{}, &PipelineList{}, &StackSet{}, &StackSetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
