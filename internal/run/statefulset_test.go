package run_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/view"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/testfiles"
)

// kvChart is a bitnami-like StatefulSet chart: persistence.enabled gives
// its data volume a volumeClaimTemplates entry (of persistence.size and
// persistence.storageClass), or an emptyDir without it.
func kvChart(t *testing.T, dir string) {
	t.Helper()
	testfiles.Write(t, dir, map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: kv\nversion: 0.1.0\n",
		"values.yaml": "persistence:\n  enabled: true\n  size: 8Gi\n  storageClass: \"\"\n",
		"templates/statefulset.yaml": `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ .Release.Name }}-master
spec:
  replicas: 1
  serviceName: {{ .Release.Name }}-headless
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      containers:
        - name: redis
          image: "redis:7.4"
          volumeMounts:
            - name: redis-data
              mountPath: /data
      {{- if not .Values.persistence.enabled }}
      volumes:
        - name: redis-data
          emptyDir: {}
      {{- end }}
  {{- if .Values.persistence.enabled }}
  volumeClaimTemplates:
    - metadata:
        name: redis-data
      spec:
        accessModes: [ReadWriteOnce]
        storageClassName: {{ .Values.persistence.storageClass | quote }}
        resources:
          requests:
            storage: {{ .Values.persistence.size | quote }}
  {{- end }}
`,
	})
}

// kvStack writes the stack of release redis of the kv chart in ns.
func kvStack(t *testing.T, dir, ns, class string, enabled bool, size string) {
	t.Helper()
	hcl := fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "redis" {
  chart         = "./charts/kv"
  values        = [{ persistence = { enabled = %[2]v, size = %[3]q, storageClass = %[4]q } }]
  wait          = true
  timeout       = "2m"
  expand_claims = true
}
`, ns, enabled, size, class)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
}

// boundClaim creates the claim the StatefulSet's template makes for pod 0
// and a volume bound to it by hand (the devcluster has no provisioner),
// of StorageClass class.
func boundClaim(t *testing.T, ns, class, claim string) {
	t.Helper()
	ctx := context.Background()
	c := cluster.Client()
	pvName := "pv-" + ns
	size := resource.MustParse("8Gi")
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              class,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + pvName}},
			ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: claim},
		},
	}
	if _, err := c.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.CoreV1().PersistentVolumes().Delete(context.Background(), pvName, metav1.DeleteOptions{})
	})
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claim, Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: &class,
			VolumeName:       pvName,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	if _, err := c.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func planText(t *testing.T, p *plan.Plan) string {
	t.Helper()
	var b bytes.Buffer
	if err := view.Text(&b, p); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestStatefulSetPersistenceToggle: turning a bitnami-like chart's
// persistence off is planned as data loss (its pods no longer mount their
// claim); turning it on again is planned as a replacement whose pods are
// recreated with their claim, and applies without stalling; growing the
// claim template with expand_claims resizes the claim.
func TestStatefulSetPersistenceToggle(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	c := cluster.Client()
	class := "expandable-" + ns
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: "example.com/none", AllowVolumeExpansion: new(true)}
	if _, err := c.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.StorageV1().StorageClasses().Delete(context.Background(), class, metav1.DeleteOptions{}) })
	const claim = "redis-data-redis-master-0"
	boundClaim(t, ns, class, claim)

	dir := filepath.Join(t.TempDir(), "stack")
	kvChart(t, filepath.Join(dir, "charts", "kv"))
	o := run.Options{Source: run.Source{Dir: dir}, Clusters: run.ClusterOptions{Kubeconfig: cluster.Kubeconfig()}}
	apply := func(step string) {
		t.Helper()
		applied, err := runApply(ctx, o, run.ApplyRequest{Command: "convoy apply"})
		if err != nil || applied.Failed() {
			t.Fatalf("%s: apply: %v %+v", step, err, applied)
		}
	}
	planned := func(step string) (*plan.ReleaseChange, string) {
		t.Helper()
		p, err := runPlan(ctx, o, run.PlanRequest{})
		if err != nil {
			t.Fatalf("%s: plan: %v", step, err)
		}
		return p.Plan.Release("release.redis"), planText(t, p.Plan)
	}
	pod := func() *corev1.Pod {
		t.Helper()
		p, err := c.CoreV1().Pods(ns).Get(ctx, "redis-master-0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	claimOf := func(p *corev1.Pod) string {
		for _, v := range p.Spec.Volumes {
			if v.Name == "redis-data" && v.PersistentVolumeClaim != nil {
				return v.PersistentVolumeClaim.ClaimName
			}
		}
		return ""
	}

	kvStack(t, dir, ns, class, true, "8Gi")
	apply("install")
	if got := claimOf(pod()); got != claim {
		t.Fatalf("install: pod mounts claim %q, want %s", got, claim)
	}

	// Persistence off: data no longer mounted, reported and seen by
	// policies as data_loss.
	kvStack(t, dir, ns, class, false, "8Gi")
	rc, text := planned("persistence off")
	if rc.Impact == nil || len(rc.Impact.DataLoss) != 1 || rc.Impact.DataLoss[0].Ref.Name != "redis-master" ||
		!strings.Contains(rc.Impact.DataLoss[0].Reason, "volumeClaimTemplates entry redis-data is removed: its pods no longer mount claim "+claim+" (volume redis-data now emptyDir)") {
		t.Fatalf("persistence off: impact %+v\n%s", rc.Impact, text)
	}
	if !strings.Contains(text, "data loss: StatefulSet redis-master (replace)") ||
		!strings.Contains(text, "StatefulSet redis-master: spec.volumeClaimTemplates cannot change; replaced, its pods orphaned and adopted by the new one") ||
		strings.Contains(text, "resizes") {
		t.Fatalf("persistence off: plan\n%s", text)
	}
	apply("persistence off")
	if got := claimOf(pod()); got != "" {
		t.Fatalf("persistence off: pod still mounts claim %q", got)
	}

	// Persistence on: the new StatefulSet cannot adopt a pod without the
	// claim, so its pods are recreated, and apply does not stall.
	before := pod().UID
	kvStack(t, dir, ns, class, true, "8Gi")
	rc, text = planned("persistence on")
	if rc.Impact == nil || len(rc.Impact.Replacements) != 1 || !rc.Impact.Replacements[0].RecreatesPods || len(rc.Impact.DataLoss) != 0 {
		t.Fatalf("persistence on: impact %+v\n%s", rc.Impact, text)
	}
	if !strings.Contains(text, "replaced, its pods orphaned, then deleted and created again by the new one with its new claims") {
		t.Fatalf("persistence on: plan\n%s", text)
	}
	apply("persistence on")
	if p := pod(); p.UID == before || claimOf(p) != claim {
		t.Fatalf("persistence on: pod %s (was %s) mounts claim %q, want a new pod mounting %s", p.UID, before, claimOf(p), claim)
	}

	// 8Gi → 10Gi: the StatefulSet is replaced (its pods adopted), and
	// expand_claims resizes the claim, its class allowing expansion.
	kvStack(t, dir, ns, class, true, "10Gi")
	rc, text = planned("resize")
	if len(rc.ClaimExpansions) != 1 || rc.ClaimExpansions[0].Ref.Name != claim || rc.ClaimExpansions[0].StorageClass != class {
		t.Fatalf("resize: expansions %+v\n%s", rc.ClaimExpansions, text)
	}
	if !strings.Contains(text, "~ PersistentVolumeClaim "+claim+": storage 8Gi → 10Gi (expand_claims)") ||
		!strings.Contains(text, "replaced, its pods orphaned and adopted by the new one; claims kept unchanged: "+claim) {
		t.Fatalf("resize: plan\n%s", text)
	}
	before = pod().UID
	apply("resize")
	got, err := c.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if q := got.Spec.Resources.Requests[corev1.ResourceStorage]; q.String() != "10Gi" {
		t.Fatalf("resize: claim requests %s, want 10Gi", q.String())
	}
	if p := pod(); p.UID != before {
		t.Errorf("resize: pod %s replaced (was %s): it should have been adopted", p.UID, before)
	}

	// A class that does not allow expansion: the plan refuses, naming the
	// claim and the class.
	if _, err := c.StorageV1().StorageClasses().Patch(ctx, class, types.MergePatchType, []byte(`{"allowVolumeExpansion":false}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	kvStack(t, dir, ns, class, true, "12Gi")
	_, err = runPlan(ctx, o, run.PlanRequest{})
	if err == nil || !strings.Contains(err.Error(), "v1 PersistentVolumeClaim "+ns+"/"+claim) || !strings.Contains(err.Error(), "StorageClass "+class+" does not allow volume expansion") {
		t.Fatalf("resize with a class that does not expand: err %v", err)
	}
}
