package release

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// SecretType is the type of Helm's record Secrets.
const SecretType = "helm.sh/release.v1"

// Secrets stores records as Secrets in one namespace (Helm's default
// driver). With namespace "" it lists across all namespaces (read only).
type Secrets struct {
	client    kubernetes.Interface
	namespace string
}

// NewSecrets returns the Secret driver for namespace.
func NewSecrets(client kubernetes.Interface, namespace string) *Secrets {
	return &Secrets{client: client, namespace: namespace}
}

// Name implements Driver.
func (s *Secrets) Name() string { return "Secret" }

func (s *Secrets) read(obj *corev1.Secret) (*Release, error) {
	r, err := decode(string(obj.Data["release"]))
	if err != nil {
		return nil, fmt.Errorf("v1 Secret %s/%s: %w", obj.Namespace, obj.Name, err)
	}
	r.fromObjectLabels(obj.Labels)
	return r, nil
}

// Get implements Driver.
func (s *Secrets) Get(ctx context.Context, key string) (*Release, error) {
	obj, err := s.client.CoreV1().Secrets(s.namespace).Get(ctx, key, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, ErrReleaseNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("v1 Secret %s/%s: %w", s.namespace, key, err)
	}
	return s.read(obj)
}

// List implements Driver.
func (s *Secrets) List(ctx context.Context, selector map[string]string) ([]*Release, error) {
	list, err := s.client.CoreV1().Secrets(s.namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(selector).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("list release records in namespace %q: %w", s.namespace, err)
	}
	out := make([]*Release, 0, len(list.Items))
	for i := range list.Items {
		if list.Items[i].Type != SecretType {
			continue
		}
		r, err := s.read(&list.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (s *Secrets) object(key string, r *Release, update bool) (*corev1.Secret, error) {
	payload, err := encode(r)
	if err != nil {
		return nil, fmt.Errorf("encode release %s: %w", r.Name, err)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: key, Namespace: s.namespace, Labels: recordLabels(r, time.Now(), update)},
		Type:       SecretType,
		Data:       map[string][]byte{"release": []byte(payload)},
	}, nil
}

// Create implements Driver.
func (s *Secrets) Create(ctx context.Context, key string, r *Release) error {
	obj, err := s.object(key, r, false)
	if err != nil {
		return err
	}
	_, err = s.client.CoreV1().Secrets(s.namespace).Create(ctx, obj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return ErrReleaseExists
	}
	if err != nil {
		return fmt.Errorf("v1 Secret %s/%s: %w", s.namespace, key, err)
	}
	return nil
}

// Update implements Driver.
func (s *Secrets) Update(ctx context.Context, key string, r *Release) error {
	obj, err := s.object(key, r, true)
	if err != nil {
		return err
	}
	if _, err := s.client.CoreV1().Secrets(s.namespace).Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("v1 Secret %s/%s: %w", s.namespace, key, err)
	}
	return nil
}

// Delete implements Driver.
func (s *Secrets) Delete(ctx context.Context, key string) error {
	err := s.client.CoreV1().Secrets(s.namespace).Delete(ctx, key, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return ErrReleaseNotFound
	}
	if err != nil {
		return fmt.Errorf("v1 Secret %s/%s: %w", s.namespace, key, err)
	}
	return nil
}

// ConfigMaps stores records as ConfigMaps (Helm's "configmap" driver).
type ConfigMaps struct {
	client    kubernetes.Interface
	namespace string
}

// NewConfigMaps returns the ConfigMap driver for namespace.
func NewConfigMaps(client kubernetes.Interface, namespace string) *ConfigMaps {
	return &ConfigMaps{client: client, namespace: namespace}
}

// Name implements Driver.
func (c *ConfigMaps) Name() string { return "ConfigMap" }

func (c *ConfigMaps) read(obj *corev1.ConfigMap) (*Release, error) {
	r, err := decode(obj.Data["release"])
	if err != nil {
		return nil, fmt.Errorf("v1 ConfigMap %s/%s: %w", obj.Namespace, obj.Name, err)
	}
	r.fromObjectLabels(obj.Labels)
	return r, nil
}

// Get implements Driver.
func (c *ConfigMaps) Get(ctx context.Context, key string) (*Release, error) {
	obj, err := c.client.CoreV1().ConfigMaps(c.namespace).Get(ctx, key, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, ErrReleaseNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("v1 ConfigMap %s/%s: %w", c.namespace, key, err)
	}
	return c.read(obj)
}

// List implements Driver.
func (c *ConfigMaps) List(ctx context.Context, selector map[string]string) ([]*Release, error) {
	list, err := c.client.CoreV1().ConfigMaps(c.namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(selector).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("list release records in namespace %q: %w", c.namespace, err)
	}
	out := make([]*Release, 0, len(list.Items))
	for i := range list.Items {
		r, err := c.read(&list.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (c *ConfigMaps) object(key string, r *Release, update bool) (*corev1.ConfigMap, error) {
	payload, err := encode(r)
	if err != nil {
		return nil, fmt.Errorf("encode release %s: %w", r.Name, err)
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: key, Namespace: c.namespace, Labels: recordLabels(r, time.Now(), update)},
		Data:       map[string]string{"release": payload},
	}, nil
}

// Create implements Driver.
func (c *ConfigMaps) Create(ctx context.Context, key string, r *Release) error {
	obj, err := c.object(key, r, false)
	if err != nil {
		return err
	}
	_, err = c.client.CoreV1().ConfigMaps(c.namespace).Create(ctx, obj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return ErrReleaseExists
	}
	if err != nil {
		return fmt.Errorf("v1 ConfigMap %s/%s: %w", c.namespace, key, err)
	}
	return nil
}

// Update implements Driver.
func (c *ConfigMaps) Update(ctx context.Context, key string, r *Release) error {
	obj, err := c.object(key, r, true)
	if err != nil {
		return err
	}
	if _, err := c.client.CoreV1().ConfigMaps(c.namespace).Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("v1 ConfigMap %s/%s: %w", c.namespace, key, err)
	}
	return nil
}

// Delete implements Driver.
func (c *ConfigMaps) Delete(ctx context.Context, key string) error {
	err := c.client.CoreV1().ConfigMaps(c.namespace).Delete(ctx, key, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return ErrReleaseNotFound
	}
	if err != nil {
		return fmt.Errorf("v1 ConfigMap %s/%s: %w", c.namespace, key, err)
	}
	return nil
}
