package stack

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/errcode"
)

// sourceResolver is the resolver a Stack pulls its stack artifact and its
// OCI charts with: the controller's, with the credentials of
// spec.sourceSecretRef (a kubernetes.io/dockerconfigjson Secret) tried
// first. The Secret's config is written to a file of tmpDir, mode 0600,
// that cleanup removes; its content never appears in a message. creds
// names the credentials the resolver pulls with ("": the controller's
// own), for the cache's per-tenant checks (pulled.go).
func (r *reconciler) sourceResolver(ctx context.Context, st *v1alpha1.Stack, tmpDir string) (res *source.Resolver, creds string, cleanup func(), err error) {
	ref := st.Spec.SourceSecretRef
	if ref == nil {
		return r.chartAccess(st, r.resolver, ""), "", func() {}, nil
	}
	where := fmt.Sprintf("spec.sourceSecretRef: v1 Secret %s/%s", st.Namespace, ref.Name)
	reader, err := r.readerFor(st)
	if err != nil {
		return nil, "", nil, err
	}
	var s corev1.Secret
	if err := reader.Get(ctx, types.NamespacedName{Namespace: st.Namespace, Name: ref.Name}, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "", nil, &configError{msg: where + " not found"}
		}
		return nil, "", nil, fmt.Errorf("%s: %w", where, err)
	}
	if s.Type != corev1.SecretTypeDockerConfigJson {
		return nil, "", nil, &configError{msg: fmt.Sprintf("%s is of type %q, want %s (kubectl create secret docker-registry)", where, s.Type, corev1.SecretTypeDockerConfigJson)}
	}
	data := s.Data[corev1.DockerConfigJsonKey]
	var probe struct {
		Auths map[string]json.RawMessage `json:"auths"`
	}
	if err := json.Unmarshal(data, &probe); err != nil || len(probe.Auths) == 0 {
		return nil, "", nil, &configError{msg: fmt.Sprintf("%s: key %s is not a Docker config with auths", where, corev1.DockerConfigJsonKey)}
	}
	dir, err := os.MkdirTemp(tmpDir, "creds-*")
	if err != nil {
		return nil, "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	file := filepath.Join(dir, "config.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		cleanup()
		return nil, "", nil, err
	}
	c := *r.resolver
	c.RegistryConfigs = append([]string{file}, r.resolver.RegistryConfigs...)
	sum := sha256.Sum256(data)
	creds = fmt.Sprintf("%s/%s@%x", st.Namespace, ref.Name, sum[:12])
	return r.chartAccess(st, &c, creds), creds, cleanup, nil
}

// credentialHint explains a registry's refusal in terms of the Stack.
func credentialHint(st *v1alpha1.Stack, err error) string {
	var re *errcode.ErrorResponse
	if !errors.Is(err, auth.ErrBasicCredentialNotFound) &&
		!(errors.As(err, &re) && (re.StatusCode == http.StatusUnauthorized || re.StatusCode == http.StatusForbidden)) {
		return ""
	}
	if st.Spec.SourceSecretRef == nil {
		return " (the registry wants credentials: set spec.sourceSecretRef to a kubernetes.io/dockerconfigjson Secret of the Stack's namespace)"
	}
	return fmt.Sprintf(" (the registry refuses the credentials of spec.sourceSecretRef, v1 Secret %s/%s, for this host)", st.Namespace, st.Spec.SourceSecretRef.Name)
}
