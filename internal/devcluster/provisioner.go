package devcluster

import (
	"context"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

const (
	// StorageClass is the devcluster's default StorageClass, served by
	// its local-path provisioner.
	StorageClass = "standard"
	// Provisioner is the provisioner name of StorageClass.
	Provisioner = "devcluster.convoy.dev/local-path"

	annProvisionedBy = "pv.kubernetes.io/provisioned-by"
	annVolumeDir     = "devcluster.convoy.dev/volume-dir"
)

// createStorageClass makes StorageClass the cluster's default. Binding is
// Immediate: every fake node is this machine, so there is no topology to
// wait for, and Helm's --wait (as convoy's) wants a claim Bound even when
// no pod uses it yet, which WaitForFirstConsumer would never give.
func createStorageClass(ctx context.Context, client kubernetes.Interface) error {
	immediate := storagev1.VolumeBindingImmediate
	del := corev1.PersistentVolumeReclaimDelete
	expand := true
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        StorageClass,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
		},
		Provisioner:          Provisioner,
		ReclaimPolicy:        &del,
		VolumeBindingMode:    &immediate,
		AllowVolumeExpansion: &expand,
	}
	_, err := client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// localPath provisions hostPath volumes for the claims of StorageClass:
// one directory per volume under dir, created with the PersistentVolume
// (pre-bound to its claim, the PV controller completes the binding) and
// removed with it once its claim is gone (reclaim policy Delete). A claim
// asking for more than its volume holds is grown at once.
type localPath struct {
	client kubernetes.Interface
	dir    string
	logf   func(format string, args ...any)
}

// run watches claims and volumes until ctx ends.
func (p *localPath) run(ctx context.Context) {
	f := informers.NewSharedInformerFactory(p.client, 10*time.Minute)
	claims := f.Core().V1().PersistentVolumeClaims().Informer()
	volumes := f.Core().V1().PersistentVolumes().Informer()
	onClaim := func(obj any) {
		if c, ok := obj.(*corev1.PersistentVolumeClaim); ok {
			p.claim(ctx, c)
		}
	}
	onVolume := func(obj any) {
		if v, ok := obj.(*corev1.PersistentVolume); ok {
			p.volume(ctx, v)
		}
	}
	_, _ = claims.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onClaim, UpdateFunc: func(_, n any) { onClaim(n) }})
	_, _ = volumes.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onVolume, UpdateFunc: func(_, n any) { onVolume(n) }})
	f.Start(ctx.Done())
	<-ctx.Done()
	f.Shutdown()
}

func volumeName(c *corev1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }

func (p *localPath) claim(ctx context.Context, c *corev1.PersistentVolumeClaim) {
	if c.Spec.StorageClassName == nil || *c.Spec.StorageClassName != StorageClass || c.DeletionTimestamp != nil {
		return
	}
	want := c.Spec.Resources.Requests[corev1.ResourceStorage]
	switch {
	case c.Spec.VolumeName == "" && c.Status.Phase == corev1.ClaimPending:
		p.provision(ctx, c, want)
	case c.Spec.VolumeName == volumeName(c) && c.Status.Phase == corev1.ClaimBound:
		have := c.Status.Capacity[corev1.ResourceStorage]
		if want.Cmp(have) > 0 {
			p.expand(ctx, c, want)
		}
	}
}

func (p *localPath) provision(ctx context.Context, c *corev1.PersistentVolumeClaim, size resource.Quantity) {
	name := volumeName(c)
	dir := filepath.Join(p.dir, c.Namespace+"_"+c.Name+"_"+name)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		p.logf("provision %s/%s: %v", c.Namespace, c.Name, err)
		return
	}
	del := corev1.PersistentVolumeReclaimDelete
	hostPath := corev1.HostPathDirectoryOrCreate
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{annProvisionedBy: Provisioner, annVolumeDir: dir},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   c.Spec.AccessModes,
			StorageClassName:              StorageClass,
			PersistentVolumeReclaimPolicy: del,
			VolumeMode:                    c.Spec.VolumeMode,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: &hostPath}},
			ClaimRef: &corev1.ObjectReference{
				APIVersion: "v1", Kind: "PersistentVolumeClaim",
				Namespace: c.Namespace, Name: c.Name, UID: c.UID, ResourceVersion: c.ResourceVersion,
			},
		},
	}
	if _, err := p.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		p.logf("provision %s/%s: %v", c.Namespace, c.Name, err)
	}
}

// expand grows the volume and the claim's status, as a resizer would.
func (p *localPath) expand(ctx context.Context, c *corev1.PersistentVolumeClaim, size resource.Quantity) {
	pv, err := p.client.CoreV1().PersistentVolumes().Get(ctx, c.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		p.logf("expand %s/%s: %v", c.Namespace, c.Name, err)
		return
	}
	pv.Spec.Capacity = corev1.ResourceList{corev1.ResourceStorage: size}
	if _, err := p.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
		p.logf("expand %s/%s: %v", c.Namespace, c.Name, err)
		return
	}
	c = c.DeepCopy()
	c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: size}
	if _, err := p.client.CoreV1().PersistentVolumeClaims(c.Namespace).UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
		p.logf("expand %s/%s: %v", c.Namespace, c.Name, err)
	}
}

// volume deletes a released volume of ours and its directory.
func (p *localPath) volume(ctx context.Context, v *corev1.PersistentVolume) {
	if v.Annotations[annProvisionedBy] != Provisioner || v.Status.Phase != corev1.VolumeReleased ||
		v.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || v.DeletionTimestamp != nil {
		return
	}
	if dir := v.Annotations[annVolumeDir]; dir != "" && filepath.Dir(dir) == p.dir {
		if err := os.RemoveAll(dir); err != nil {
			p.logf("delete volume %s: %v", v.Name, err)
			return
		}
	}
	if err := p.client.CoreV1().PersistentVolumes().Delete(ctx, v.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		p.logf("delete volume %s: %v", v.Name, err)
	}
}
