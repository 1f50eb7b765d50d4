package devcluster_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/devcluster"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// A claim that names no class gets the default one, "standard", and is
// bound to a volume whose directory exists on this machine; deleting the
// claim deletes the volume and its directory (issue 37.9: every PVC of a
// real chart stayed Pending).
func TestClaimOfDefaultClassIsBound(t *testing.T) {
	cluster.Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := cluster.Client()
	ns := cluster.Namespace(t)
	sc, err := client.StorageV1().StorageClasses().Get(ctx, devcluster.StorageClass, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Annotations["storageclass.kubernetes.io/is-default-class"] != "true" || sc.AllowVolumeExpansion == nil || !*sc.AllowVolumeExpansion {
		t.Fatalf("storage class %s: %v, expansion %v", sc.Name, sc.Annotations, sc.AllowVolumeExpansion)
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var bound *corev1.PersistentVolumeClaim
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		bound, err = client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{})
		return err == nil && bound.Status.Phase == corev1.ClaimBound, err
	}); err != nil {
		t.Fatalf("claim not bound: %v (%+v)", err, bound.Status)
	}
	if bound.Spec.StorageClassName == nil || *bound.Spec.StorageClassName != devcluster.StorageClass {
		t.Errorf("claim's class %v, want %s", bound.Spec.StorageClassName, devcluster.StorageClass)
	}
	pv, err := client.CoreV1().PersistentVolumes().Get(ctx, bound.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pv.Spec.HostPath == nil {
		t.Fatalf("volume %s has no hostPath: %+v", pv.Name, pv.Spec.PersistentVolumeSource)
	}
	path := pv.Spec.HostPath.Path
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		t.Fatalf("volume %s: path %s: %v", pv.Name, path, err)
	}
	if got := bound.Status.Capacity[corev1.ResourceStorage]; got.String() != "1Gi" {
		t.Errorf("claim capacity %s, want 1Gi", got.String())
	}

	// The class allows expansion, and a grown request is served.
	if _, err := client.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, "data", types.MergePatchType,
		[]byte(`{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		bound, err = client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got := bound.Status.Capacity[corev1.ResourceStorage]
		return got.String() == "2Gi", nil
	}); err != nil {
		t.Fatalf("claim not grown: %v (%+v)", err, bound.Status)
	}

	if err := client.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	}); err != nil {
		t.Fatalf("volume %s not deleted with its claim: %v", pv.Name, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("volume directory %s left behind: %v", path, err)
	}
}
