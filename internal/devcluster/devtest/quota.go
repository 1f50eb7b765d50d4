package devtest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// LimitConfigMaps installs a ResourceQuota that lets ns hold n ConfigMaps
// besides kube-root-ca.crt (which the root CA publisher creates in every
// namespace, and which counts), and waits until the quota is enforced
// (its usage computed: before that the API server refuses every
// ConfigMap).
func (e *Env) LimitConfigMaps(t testing.TB, ns string, n int) {
	t.Helper()
	e.Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := e.client
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("kube-root-ca.crt never appeared in %s: %v", ns, err)
	}
	q := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "configmaps"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/configmaps": *resource.NewQuantity(int64(n+1), resource.DecimalSI)}},
	}
	if _, err := c.CoreV1().ResourceQuotas(ns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := c.CoreV1().ResourceQuotas(ns).Get(ctx, q.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		_, used := got.Status.Used["count/configmaps"]
		return used, nil
	}); err != nil {
		t.Fatalf("quota in %s never computed: %v", ns, err)
	}
}

// HelmConfigMaps are the sorted names, space-separated, of the ConfigMaps
// of ns a release made (those Helm's managed-by label marks), without
// those being deleted.
func (e *Env) HelmConfigMaps(t testing.TB, ns string) string {
	t.Helper()
	e.Need(t)
	list, err := e.client.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=Helm"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, cm := range list.Items {
		if cm.DeletionTimestamp == nil {
			names = append(names, cm.Name)
		}
	}
	slices.Sort(names)
	return strings.Join(names, " ")
}
