package controller

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Keys of the plan objects.
const (
	planFileKey     = "plan.cvp.gz"
	planDigestKey   = "digest"
	planTextKey     = "plan.txt"
	planMarkdownKey = "plan.md"
	// maxPlanFile bounds a saved plan, unpacked (a Secret holds 1 MiB
	// packed).
	maxPlanFile = 64 << 20
)

// planObjectName names the ConfigMap (plan text) and the Secret (the saved
// plan, which holds sensitive values unmasked) of a Stack.
func planObjectName(stack string) string {
	name := "convoy-plan-" + stack
	if len(name) > 253 {
		sum := sha256.Sum256([]byte(stack))
		name = name[:240] + "-" + hex.EncodeToString(sum[:])[:12]
	}
	return name
}

// planDigest identifies a saved plan file.
func planDigest(file []byte) string {
	sum := sha256.Sum256(file)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// storePlan writes the saved plan into the Stack's plan Secret and its
// text and markdown into the plan ConfigMap, both owned by the Stack.
func storePlan(ctx context.Context, c client.Client, scheme *runtime.Scheme, st *v1alpha1.Stack, file []byte, digest, text, markdown string) error {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	if _, err := w.Write(file); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	name := planObjectName(st.Name)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: st.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, sec, func() error {
		sec.Labels = map[string]string{"convoy.dev/stack-object": st.Name}
		sec.Type = "convoy.dev/plan"
		sec.Data = map[string][]byte{planFileKey: gz.Bytes(), planDigestKey: []byte(digest)}
		return controllerutil.SetControllerReference(st, sec, scheme)
	}); err != nil {
		return fmt.Errorf("v1 Secret %s/%s: %w", st.Namespace, name, err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: st.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, cm, func() error {
		cm.Labels = map[string]string{"convoy.dev/stack-object": st.Name}
		cm.Data = map[string]string{planDigestKey: digest, planTextKey: text, planMarkdownKey: markdown}
		return controllerutil.SetControllerReference(st, cm, scheme)
	}); err != nil {
		return fmt.Errorf("v1 ConfigMap %s/%s: %w", st.Namespace, name, err)
	}
	return nil
}

// errNoSavedPlan: the plan Secret is gone or holds another plan.
var errNoSavedPlan = fmt.Errorf("the saved plan is gone")

// loadPlan reads the saved plan of the given digest from the plan Secret.
func loadPlan(ctx context.Context, c client.Reader, st *v1alpha1.Stack, digest string) ([]byte, error) {
	key := types.NamespacedName{Namespace: st.Namespace, Name: planObjectName(st.Name)}
	var sec corev1.Secret
	if err := c.Get(ctx, key, &sec); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, errNoSavedPlan
		}
		return nil, fmt.Errorf("v1 Secret %s: %w", key, err)
	}
	if string(sec.Data[planDigestKey]) != digest {
		return nil, errNoSavedPlan
	}
	r, err := gzip.NewReader(bytes.NewReader(sec.Data[planFileKey]))
	if err != nil {
		return nil, fmt.Errorf("v1 Secret %s: %w", key, err)
	}
	file, err := io.ReadAll(io.LimitReader(r, maxPlanFile+1))
	if err != nil || len(file) > maxPlanFile {
		return nil, fmt.Errorf("v1 Secret %s: the saved plan is unreadable or larger than %d bytes", key, maxPlanFile)
	}
	if got := planDigest(file); got != digest {
		return nil, fmt.Errorf("v1 Secret %s: the saved plan's digest is %s, not %s", key, got, digest)
	}
	return file, nil
}
