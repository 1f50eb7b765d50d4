package stack

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// secretReader serves Secrets from a map, as the uncached reader does.
type secretReader struct {
	client.Reader
	secrets map[string]*corev1.Secret
}

func (r secretReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	s, ok := r.secrets[key.Namespace+"/"+key.Name]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, key.Name)
	}
	s.DeepCopyInto(obj.(*corev1.Secret))
	return nil
}

func pubPEM(t *testing.T) []byte {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// The keys of spec.verify's Secret: cosign.pub first, then every other
// *.pub key in name order, other keys ignored; a Secret that is missing,
// has no such key or a key that is not a public key is named (never its
// content).
func TestVerifyKeys(t *testing.T) {
	ctx := context.Background()
	bad := []byte("-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1ieXRlcw==\n-----END PRIVATE KEY-----\n")
	r := secretReader{secrets: map[string]*corev1.Secret{
		"apps/keys":   {Data: map[string][]byte{"z.pub": pubPEM(t), "cosign.pub": pubPEM(t), "a.pub": pubPEM(t), "notes": []byte("x")}},
		"apps/none":   {Data: map[string][]byte{"cosign.key": []byte("x")}},
		"apps/broken": {Data: map[string][]byte{"cosign.pub": bad}},
	}}
	spec := func(name string) *v1alpha1.VerifySpec {
		return &v1alpha1.VerifySpec{Provider: v1alpha1.ProviderCosign, SecretRef: v1alpha1.LocalObjectReference{Name: name}}
	}
	keys, err := verifyKeys(ctx, r, "apps", spec("keys"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range keys {
		names = append(names, k.Name)
	}
	if got := strings.Join(names, " "); got != "cosign.pub a.pub z.pub" {
		t.Errorf("keys %s, want cosign.pub a.pub z.pub", got)
	}
	for name, want := range map[string]string{
		"missing": "spec.verify.secretRef: v1 Secret apps/missing not found",
		"none":    "spec.verify.secretRef: v1 Secret apps/none has no key cosign.pub or *.pub",
		"broken":  `spec.verify.secretRef: v1 Secret apps/broken: key cosign.pub: a PEM "PRIVATE KEY" block, want PUBLIC KEY`,
	} {
		_, err := verifyKeys(ctx, r, "apps", spec(name))
		var ce *configError
		if err == nil || !strings.Contains(err.Error(), want) || !errors.As(err, &ce) {
			t.Errorf("%s: %v, want a configError saying %q", name, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "c2VjcmV0") {
			t.Errorf("%s: the error quotes the Secret: %v", name, err)
		}
	}
}

// A change of spec.verify's Secret re-queues the Stack.
func TestVerifySecretIsWatched(t *testing.T) {
	st := &v1alpha1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a"}, Spec: v1alpha1.StackSpec{Verify: &v1alpha1.VerifySpec{Provider: v1alpha1.ProviderCosign, SecretRef: v1alpha1.LocalObjectReference{Name: "keys"}}}}
	if !references(st, "Secret", "team-a", "keys") {
		t.Error("a Stack does not reference its spec.verify Secret")
	}
	if references(st, "ConfigMap", "team-a", "keys") || references(st, "Secret", "team-a", "other") || references(st, "Secret", "team-b", "keys") {
		t.Error("a Stack references what it does not read")
	}
}
