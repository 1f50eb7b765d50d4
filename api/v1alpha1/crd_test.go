package v1alpha1_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/deploy"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The CRD's schema names every field of the Go types, so that no field
// the controller writes is pruned by the API server (and no field a user
// writes is silently dropped).
func TestCRDSchemaCoversTheTypes(t *testing.T) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(deploy.CRD, &crd); err != nil {
		t.Fatal(err)
	}
	if crd.Spec.Group != v1alpha1.GroupVersion.Group || crd.Spec.Versions[0].Name != v1alpha1.GroupVersion.Version {
		t.Fatalf("CRD for %s/%s", crd.Spec.Group, crd.Spec.Versions[0].Name)
	}
	root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties
	check(t, "spec", reflect.TypeOf(v1alpha1.StackSpec{}), root["spec"])
	check(t, "status", reflect.TypeOf(v1alpha1.StackStatus{}), root["status"])
	if _, required := slicesIndex(crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Required, "source"); required {
		t.Error("the Stack's spec.source is required: a Stack that a Pipeline pins has none of its own")
	}
}

// Likewise for Pipelines.
func TestPipelineCRDSchemaCoversTheTypes(t *testing.T) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(deploy.PipelineCRD, &crd); err != nil {
		t.Fatal(err)
	}
	if crd.Spec.Group != v1alpha1.GroupVersion.Group || crd.Spec.Versions[0].Name != v1alpha1.GroupVersion.Version || crd.Spec.Names.Kind != "Pipeline" {
		t.Fatalf("CRD for %s/%s %s", crd.Spec.Group, crd.Spec.Versions[0].Name, crd.Spec.Names.Kind)
	}
	root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties
	check(t, "spec", reflect.TypeOf(v1alpha1.PipelineSpec{}), root["spec"])
	check(t, "status", reflect.TypeOf(v1alpha1.PipelineStatus{}), root["status"])
}

func slicesIndex(s []string, v string) (int, bool) {
	for i, x := range s {
		if x == v {
			return i, true
		}
	}
	return -1, false
}

var skip = map[reflect.Type]bool{reflect.TypeOf(metav1.Condition{}): true, reflect.TypeOf(metav1.Time{}): true, reflect.TypeOf(metav1.Duration{}): true}

func check(t *testing.T, path string, typ reflect.Type, s apiextensionsv1.JSONSchemaProps) {
	t.Helper()
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
		typ = typ.Elem()
		if s.Items != nil && s.Items.Schema != nil {
			s = *s.Items.Schema
		}
	}
	if typ.Kind() != reflect.Struct || skip[typ] {
		return
	}
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		sub, ok := s.Properties[name]
		if !ok {
			t.Errorf("%s.%s is not in the CRD's schema", path, name)
			continue
		}
		check(t, path+"."+name, f.Type, sub)
	}
}
