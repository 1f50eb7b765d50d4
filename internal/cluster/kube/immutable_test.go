package kube

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestIsImmutable(t *testing.T) {
	sts := schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	invalid := func(errs ...*field.Error) error { return apierrors.NewInvalid(sts, "db", errs) }
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"statefulset spec", invalid(field.Forbidden(field.NewPath("spec"), "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")), true},
		{"selector", invalid(field.Invalid(field.NewPath("spec", "selector"), nil, "field is immutable")), true},
		{"wrapped", &ObjectError{Err: invalid(field.Invalid(field.NewPath("spec", "clusterIP"), "10.0.0.1", "may not change once set"))}, true},
		{"immutable and invalid", invalid(field.Invalid(field.NewPath("spec", "selector"), nil, "field is immutable"), field.Required(field.NewPath("spec", "template", "spec", "containers"), "")), false},
		{"invalid", invalid(field.Required(field.NewPath("spec", "template"), "")), false},
		{"not an API error", errors.New("field is immutable"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsImmutable(tt.err); got != tt.want {
				t.Errorf("IsImmutable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
