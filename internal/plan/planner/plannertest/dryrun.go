package plannertest

import (
	"context"
	"fmt"
	"slices"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/plan/planner"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DryRun implements planner.ClusterView: the live object with the fields
// obj sets replaced by obj's, refused as the API server refuses an
// invalid name or a change of an immutable field (see the package's doc
// for what that leaves out).
func (v *View) DryRun(_ context.Context, obj, live *unstructured.Unstructured, ignore kube.IgnoreRules) (*unstructured.Unstructured, error) {
	ref := kube.RefOf(obj)
	if _, err := v.resource(ref); err != nil {
		return nil, err
	}
	if err := invalid(ref, validateName(ref)); err != nil {
		return nil, err
	}
	if live == nil {
		return obj.DeepCopy(), nil
	}
	after := merged(ignore.Strip(obj), live)
	if err := invalid(ref, immutable(ref, after.Object, live.Object)); err != nil {
		return nil, err
	}
	return after, nil
}

// DryRunReplace implements planner.ClusterView: the CRD as given (no
// defaulting, no check of the versions its live one stores).
func (v *View) DryRunReplace(_ context.Context, crd *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if _, err := v.resource(kube.RefOf(crd)); err != nil {
		return nil, err
	}
	return crd.DeepCopy(), nil
}

// DryRunCreate implements planner.ClusterView: obj's kind must be served
// and its name valid; nothing is created.
func (v *View) DryRunCreate(_ context.Context, obj *unstructured.Unstructured, namespace string) error {
	ref := kube.RefOf(obj)
	if _, err := v.resource(ref); err != nil {
		return err
	}
	if errs := validateName(ref); len(errs) > 0 {
		err := apierrors.NewInvalid(schema.GroupKind{Group: ref.Group, Kind: ref.Kind}, ref.Name, errs)
		return &kube.ObjectError{Ref: ref, Err: fmt.Errorf("%w (validated in namespace %q: namespace %q does not exist yet)", err, namespace, obj.GetNamespace())}
	}
	return nil
}

// Admission implements planner.ClusterView: Options.Admission, or what
// SetAdmission set since.
func (v *View) Admission(context.Context) (planner.AdmissionScope, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	scope := planner.AdmissionScope{All: slices.Contains(v.admission, "*"), Groups: map[string]bool{}}
	for _, g := range v.admission {
		scope.Groups[g] = true
	}
	return scope, nil
}

// merged is obj applied over live by convoy's field manager: every field
// obj sets replaces live's, maps merged.
func merged(obj, live *unstructured.Unstructured) *unstructured.Unstructured {
	if live == nil {
		return obj.DeepCopy()
	}
	return &unstructured.Unstructured{Object: mergeInto(live.DeepCopy().Object, obj.DeepCopy().Object)}
}

// mergeInto sets every field of src in dst, merging maps.
func mergeInto(dst, src map[string]any) map[string]any {
	for k, sv := range src {
		sm, sIsMap := sv.(map[string]any)
		dm, dIsMap := dst[k].(map[string]any)
		if sIsMap && dIsMap {
			dst[k] = mergeInto(dm, sm)
			continue
		}
		dst[k] = sv
	}
	return dst
}

// invalid is the API server's refusal of ref for errs (nil: none), as
// kube's client returns it: the object named, the status an Invalid one.
func invalid(ref kube.Ref, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return &kube.ObjectError{Ref: ref, Err: apierrors.NewInvalid(schema.GroupKind{Group: ref.Group, Kind: ref.Kind}, ref.Name, errs)}
}

// validateName validates metadata.name as the API server does for ref's
// kind.
func validateName(ref kube.Ref) field.ErrorList {
	fld := field.NewPath("metadata", "name")
	if ref.Name == "" {
		return field.ErrorList{field.Required(fld, "name or generateName is required")}
	}
	var msgs []string
	switch {
	case ref.Group == "" && ref.Kind == "Namespace":
		msgs = apivalidation.ValidateNamespaceName(ref.Name, false)
	case ref.Group == "" && ref.Kind == "Service":
		msgs = apivalidation.NameIsDNS1035Label(ref.Name, false)
	case ref.Group == "apps" && ref.Kind == "StatefulSet":
		msgs = apivalidation.NameIsDNSLabel(ref.Name, false)
	case ref.Group == "rbac.authorization.k8s.io":
		msgs = path.IsValidPathSegmentName(ref.Name)
	default:
		msgs = apivalidation.NameIsDNSSubdomain(ref.Name, false)
	}
	var errs field.ErrorList
	for _, m := range msgs {
		errs = append(errs, field.Invalid(fld, ref.Name, m))
	}
	return errs
}

// statefulSetMutable are the fields of a StatefulSet's spec an update may
// change (apps/v1 validation).
var statefulSetMutable = []string{"replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit", "persistentVolumeClaimRetentionPolicy", "minReadySeconds"}

// immutable are the API server's refusals of an update of live to after
// for the immutable fields of ref's kind, with its messages.
func immutable(ref kube.Ref, after, live map[string]any) field.ErrorList {
	spec := func(obj map[string]any) map[string]any {
		s, _, _ := unstructured.NestedMap(obj, "spec")
		return s
	}
	same := func(fields ...string) field.ErrorList {
		a, _, _ := unstructured.NestedFieldCopy(after, fields...)
		l, _, _ := unstructured.NestedFieldCopy(live, fields...)
		return apivalidation.ValidateImmutableField(a, l, field.NewPath(fields[0], fields[1:]...))
	}
	switch ref.Group + "/" + ref.Kind {
	case "apps/Deployment", "apps/ReplicaSet", "apps/DaemonSet":
		return same("spec", "selector")
	case "batch/Job":
		// A suspended Job's template may change in part: not modelled.
		return append(same("spec", "selector"), same("spec", "template")...)
	case "apps/StatefulSet":
		a, l := spec(after), spec(live)
		for _, k := range statefulSetMutable {
			delete(a, k)
			delete(l, k)
		}
		if !equality.Semantic.DeepEqual(a, l) {
			return field.ErrorList{field.Forbidden(field.NewPath("spec"), "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")}
		}
	case "/ConfigMap", "/Secret":
		if was, _, _ := unstructured.NestedBool(live, "immutable"); !was {
			return nil
		}
		var errs field.ErrorList
		if now, _, _ := unstructured.NestedBool(after, "immutable"); !now {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
		}
		for _, k := range []string{"data", "binaryData", "stringData"} {
			if !equality.Semantic.DeepEqual(after[k], live[k]) {
				errs = append(errs, field.Forbidden(field.NewPath(k), "field is immutable when `immutable` is set"))
			}
		}
		return errs
	}
	return nil
}
