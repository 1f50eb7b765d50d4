package controller

import (
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Whatever its spec, a Pipeline lists its tags at most every
// --min-interval, as a Stack is planned (stack.TestIntervalClamped).
func TestPipelineOptions(t *testing.T) {
	p := &v1alpha1.Pipeline{Spec: v1alpha1.PipelineSpec{Interval: &metav1.Duration{Duration: time.Millisecond}}}
	if got := (Options{}).pipelineOptions().Interval(p); got != DefaultMinInterval {
		t.Errorf("Pipeline interval 1ms: every %s", got)
	}
	// --tenancy strict refuses other namespaces' Stacks to Pipelines too,
	// and has their service accounts reach their own namespace's.
	if o := (Options{Tenancy: TenancyStrict}).pipelineOptions(); !o.NoCrossNamespaceRefs || !o.Strict {
		t.Errorf("--tenancy strict: Pipeline options %+v", o)
	}
}
