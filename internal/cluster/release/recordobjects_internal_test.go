package release

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
)

// The objects annotation reads back as written, short (JSON) and long
// (compressed); a damaged one reads as absent, so the plan parses the
// manifest instead.
func TestRecordObjectsAnnotation(t *testing.T) {
	short := []RecordObject{
		{Ref: kube.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"}, Template: "web/templates/deployment.yaml"},
		{Ref: kube.Ref{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "web"}, Template: "web/templates/rbac.yaml"},
		{Ref: kube.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "web"}, Template: "web/charts/common/templates/cm.yaml"},
	}
	var long []RecordObject
	for i := range 100 {
		long = append(long, RecordObject{Ref: kube.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: fmt.Sprintf("cm-%03d", i)}, Template: "web/templates/cms.yaml"})
	}
	for _, objs := range [][]RecordObject{short, long} {
		v, err := encodeRecordObjects(objs)
		if err != nil {
			t.Fatal(err)
		}
		if compressed := strings.HasPrefix(v, objectsGzipPrefix); compressed != (len(objs) == len(long)) {
			t.Errorf("%d objects: compressed=%v (%d bytes)", len(objs), compressed, len(v))
		}
		got, ok := RecordObjectsOf(&Release{Annotations: map[string]string{ObjectsAnnotation: v}})
		if !ok || !slices.Equal(got, objs) {
			t.Fatalf("%d objects: read back %v (%v)", len(objs), got, ok)
		}
	}
	for _, bad := range []string{"", "[[", `[["t","","Kind","ns","n"]]`, objectsGzipPrefix + "not base64", objectsGzipPrefix + "aGVsbG8="} {
		if got, ok := RecordObjectsOf(&Release{Annotations: map[string]string{ObjectsAnnotation: bad}}); ok {
			t.Errorf("%q read as %v", bad, got)
		}
	}
	if _, ok := RecordObjectsOf(&Release{}); ok {
		t.Error("a record without the annotation read as having one")
	}
}
