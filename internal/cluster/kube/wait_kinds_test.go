package kube_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestWaitKinds: each kind Wait knows reaches ready on the devcluster, or
// times out with its own reason when it cannot.
func TestWaitKinds(t *testing.T) {
	t.Parallel()
	podSpec := `
    spec:
      containers:
      - name: app
        image: registry.example/app:1`
	tests := []struct {
		name     string
		manifest string
		// notReady is the expected error line after NAMESPACE/; empty when
		// the objects must become ready.
		notReady string
	}{
		{name: "statefulset", manifest: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}` + podSpec},
		{name: "daemonset", manifest: `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}` + podSpec},
		{name: "replicaset", manifest: `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs}
spec:
  replicas: 2
  selector: {matchLabels: {app: rs}}
  template:
    metadata: {labels: {app: rs}}` + podSpec},
		{name: "pod", manifest: `
apiVersion: v1
kind: Pod
metadata: {name: solo}
spec:
  containers:
  - {name: app, image: registry.example/app:1}`},
		{name: "never ready pod", manifest: `
apiVersion: v1
kind: Pod
metadata: {name: solo, labels: {devcluster.convoy.dev/never-ready: "true"}}
spec:
  containers:
  - {name: app, image: registry.example/app:1}`,
			notReady: "solo: not ready: Pod is running but is not Ready; pod solo: container app: not ready (ContainersNotReady)"},
		{name: "never ready statefulset", manifest: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 1
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db, devcluster.convoy.dev/never-ready: "true"}}` + podSpec,
			notReady: "db: not ready: 0/1 replicas ready; pod db-0: container app: not ready (ContainersNotReady)"},
		{name: "unbound pvc", manifest: `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: none
  resources: {requests: {storage: 1Gi}}`,
			notReady: `data: not ready: PVC is not Bound. phase: Pending; event ProvisioningFailed: storageclass.storage.k8s.io "none" not found`},
		{name: "bound pvc", manifest: `
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-NAMESPACE}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: manual
  hostPath: {path: /tmp/NAMESPACE}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: manual
  volumeName: pv-NAMESPACE
  resources: {requests: {storage: 1Gi}}`},
		{name: "cluster ip service and config", manifest: `
apiVersion: v1
kind: Service
metadata: {name: svc}
spec:
  selector: {app: x}
  ports: [{port: 80}]
---
apiVersion: v1
kind: Secret
metadata: {name: s}
stringData: {a: b}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ns := cluster.Namespace(t)
			c := newClient(t)
			objs := parse(t, c, ns, strings.ReplaceAll(tt.manifest, "NAMESPACE", ns))
			t.Cleanup(func() { // cluster-scoped objects outlive the namespace
				for _, r := range refs(objs) {
					if r.Namespace == "" {
						_, _ = c.Delete(context.Background(), []kube.Ref{r}, kube.DeleteOptions{})
					}
				}
			})
			if _, err := c.Apply(testContext(t, 30*time.Second), objs, kube.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			timeout := 60 * time.Second
			if tt.notReady != "" {
				timeout = 3 * time.Second
			}
			err := c.Wait(testContext(t, timeout), refs(objs), kube.WaitOptions{})
			if tt.notReady == "" {
				if err != nil {
					t.Fatalf("wait: %v", err)
				}
				return
			}
			var nre *kube.NotReadyError
			if !errors.As(err, &nre) || !strings.HasSuffix(err.Error(), ns+"/"+tt.notReady) {
				t.Fatalf("error = %v\nwant …%s/%s", err, ns, tt.notReady)
			}
		})
	}
}

// A Deployment whose pods cannot even be created has no pods to blame; the
// reason is in its ReplicaSet's events.
func TestWaitExplainsFailedCreate(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	c := newClient(t)
	objs := parse(t, c, ns, `
apiVersion: v1
kind: ResourceQuota
metadata: {name: no-pods}
spec:
  hard: {pods: "0"}
`)
	if _, err := c.Apply(testContext(t, 30*time.Second), objs, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	// Let the quota controller fill in the quota's status first, so the
	// rejection is about the quota and not its unknown state.
	devtest.Eventually(t, 30*time.Second, func() bool {
		q, err := cluster.Client().CoreV1().ResourceQuotas(ns).Get(context.Background(), "no-pods", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, counted := q.Status.Hard[corev1.ResourcePods]
		return counted
	}, func() string { return "the quota controller never filled in the quota's status" })
	objs = parse(t, c, ns, deployment("web", 1))
	if _, err := c.Apply(testContext(t, 30*time.Second), objs, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	err := c.Wait(testContext(t, 3*time.Second), refs(objs), kube.WaitOptions{})
	t.Log(err)
	want := "apps/v1 Deployment " + ns + "/web: not ready: 0/1 replicas available; event FailedCreate: "
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "quota") {
		t.Fatalf("error = %v\nwant %s… mentioning the quota", err, want)
	}
}
