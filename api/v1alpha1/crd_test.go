package v1alpha1_test

import (
	"slices"
	"testing"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/deploy"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// The CRDs `convoy controller install` and the chart install (generated
// from these types: make generate) serve the kinds the scheme registers,
// and a Stack needs no spec.source of its own: a Pipeline pins it.
func TestCRDsServeTheTypes(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, doc := range [][]byte{deploy.CRD, deploy.PipelineCRD, deploy.StackSetCRD} {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(doc, &crd); err != nil {
			t.Fatal(err)
		}
		if len(crd.Spec.Versions) != 1 || crd.Spec.Group != v1alpha1.GroupVersion.Group || crd.Spec.Versions[0].Name != v1alpha1.GroupVersion.Version {
			t.Fatalf("%s: versions %+v", crd.Name, crd.Spec.Versions)
		}
		for _, kind := range []string{crd.Spec.Names.Kind, crd.Spec.Names.ListKind} {
			if !s.Recognizes(v1alpha1.GroupVersion.WithKind(kind)) {
				t.Errorf("%s: the scheme has no kind %s", crd.Name, kind)
			}
		}
		if crd.Spec.Names.Kind == "Stack" && slices.Contains(crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Required, "source") {
			t.Error("the Stack's spec.source is required: a Stack that a Pipeline pins has none of its own")
		}
	}
}
