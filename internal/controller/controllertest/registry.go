package controllertest

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DockerConfigJSON is a Docker config with the credentials of one host.
func DockerConfigJSON(host, user, pass string) []byte {
	b, _ := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{
		"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + pass)),
	}}})
	return b
}

// DockerConfig writes a Docker config with the credentials of one host
// and returns its path.
func DockerConfig(t *testing.T, host, user, pass string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(p, DockerConfigJSON(host, user, pass), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// DockerSecret is a Secret ns/name of type dockerconfigjson with the
// credentials of one host.
func DockerSecret(ns, name, host, user, pass string) *corev1.Secret {
	b := DockerConfigJSON(host, user, pass)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: b},
	}
}
