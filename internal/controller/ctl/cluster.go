package ctl

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RegisterRequest is convoy cluster add.
type RegisterRequest struct {
	Namespace, Name string
	// Kubeconfig is the kubeconfig file's content; Context the context
	// kept ("": its current context).
	Kubeconfig []byte
	Context    string
	// Labels are the registration's labels, which StackSets select.
	Labels map[string]string
	// AllowedNamespaces may select it under --tenancy strict.
	AllowedNamespaces []string
}

// RegistrationKubeconfig is the kubeconfig a registration stores: the
// context asked for (or the current one), its cluster and user alone,
// refused when the controller could not use it: an exec plugin or an
// auth provider (a program or a login of the machine it was written on),
// or a file path (a certificate, key or token file the controller cannot
// read). Every error names the context and the field.
func RegistrationKubeconfig(data []byte, context string) ([]byte, error) {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	if context == "" {
		context = cfg.CurrentContext
	}
	if context == "" {
		return nil, errors.New("kubeconfig: no current context: give --context")
	}
	kctx, ok := cfg.Contexts[context]
	if !ok {
		return nil, fmt.Errorf("kubeconfig: no context %q (contexts: %s)", context, strings.Join(slices.Sorted(maps.Keys(cfg.Contexts)), ", "))
	}
	cl, ok := cfg.Clusters[kctx.Cluster]
	if !ok {
		return nil, fmt.Errorf("kubeconfig: context %q names cluster %q, which is not defined", context, kctx.Cluster)
	}
	user, ok := cfg.AuthInfos[kctx.AuthInfo]
	if !ok && kctx.AuthInfo != "" {
		return nil, fmt.Errorf("kubeconfig: context %q names user %q, which is not defined", context, kctx.AuthInfo)
	}
	var refused []string
	if cl.CertificateAuthority != "" {
		refused = append(refused, fmt.Sprintf("clusters[%q].certificate-authority is a file path (%s): embed it as certificate-authority-data", kctx.Cluster, cl.CertificateAuthority))
	}
	if user != nil {
		who := fmt.Sprintf("users[%q]", kctx.AuthInfo)
		if user.Exec != nil {
			refused = append(refused, fmt.Sprintf("%s.exec runs a program (%s) the controller does not have: use a ServiceAccount token", who, user.Exec.Command))
		}
		if user.AuthProvider != nil {
			refused = append(refused, fmt.Sprintf("%s.auth-provider (%s) logs in on this machine: use a ServiceAccount token", who, user.AuthProvider.Name))
		}
		for field, path := range map[string]string{"client-certificate": user.ClientCertificate, "client-key": user.ClientKey, "tokenFile": user.TokenFile} {
			if path != "" {
				refused = append(refused, fmt.Sprintf("%s.%s is a file path (%s) the controller cannot read: embed it (%s-data, token)", who, field, path, field))
			}
		}
	}
	if len(refused) > 0 {
		sort.Strings(refused)
		return nil, fmt.Errorf("kubeconfig context %q cannot be registered: %s", context, strings.Join(refused, "; "))
	}
	out := clientcmdapi.NewConfig()
	out.Clusters[kctx.Cluster] = cl
	if user != nil {
		out.AuthInfos[kctx.AuthInfo] = user
	}
	c := *kctx
	c.LocationOfOrigin = ""
	out.Contexts[context] = &c
	out.CurrentContext = context
	for _, v := range out.Clusters {
		v.LocationOfOrigin = ""
	}
	for _, v := range out.AuthInfos {
		v.LocationOfOrigin = ""
	}
	return clientcmd.Write(*out)
}

// RegisterCluster writes (or replaces) the registration: a Secret NAME
// of the namespace with the kubeconfig, labelled.
func RegisterCluster(ctx context.Context, c client.Client, req RegisterRequest) (*corev1.Secret, error) {
	if errs := validation.IsDNS1123Label(req.Name); len(errs) > 0 {
		return nil, fmt.Errorf("cluster name %q: %s", req.Name, strings.Join(errs, "; "))
	}
	for k, v := range req.Labels {
		if k == v1alpha1.RegistrationLabel {
			return nil, fmt.Errorf("label %s is convoy's", k)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("label %q: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, fmt.Errorf("label %s=%q: %s", k, v, strings.Join(errs, "; "))
		}
	}
	kc, err := RegistrationKubeconfig(req.Kubeconfig, req.Context)
	if err != nil {
		return nil, err
	}
	labels := maps.Clone(req.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[v1alpha1.RegistrationLabel] = v1alpha1.RegistrationValue
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: req.Name, Namespace: req.Namespace, Labels: labels},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{v1alpha1.KubeconfigKey: kc},
	}
	if len(req.AllowedNamespaces) > 0 {
		s.Annotations = map[string]string{v1alpha1.AllowedNamespacesAnnotation: strings.Join(req.AllowedNamespaces, ",")}
	}
	var old corev1.Secret
	err = c.Get(ctx, client.ObjectKeyFromObject(s), &old)
	switch {
	case apierrors.IsNotFound(err):
		if err := c.Create(ctx, s); err != nil {
			return nil, fmt.Errorf("v1 Secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("v1 Secret %s/%s: %w", s.Namespace, s.Name, err)
	case old.Labels[v1alpha1.RegistrationLabel] != v1alpha1.RegistrationValue:
		return nil, fmt.Errorf("v1 Secret %s/%s exists and is no cluster registration (no label %s=%s): not replaced", s.Namespace, s.Name, v1alpha1.RegistrationLabel, v1alpha1.RegistrationValue)
	}
	old.Labels, old.Annotations, old.Data = s.Labels, s.Annotations, s.Data
	if err := c.Update(ctx, &old); err != nil {
		return nil, fmt.Errorf("v1 Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return &old, nil
}

// Registration is a registered cluster as convoy cluster list shows it.
type Registration struct {
	Namespace, Name string
	Labels          map[string]string
	Allowed         string
	Server          string
	// Version is the API server's version ("" when unreachable: Err).
	Version string
	Err     error
}

// ListClusters lists the registrations of namespace ("": all) and asks
// each API server its version, at once, each within timeout.
func ListClusters(ctx context.Context, c client.Client, namespace string, timeout time.Duration) ([]Registration, error) {
	var l corev1.SecretList
	opts := []client.ListOption{client.MatchingLabels{v1alpha1.RegistrationLabel: v1alpha1.RegistrationValue}}
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := c.List(ctx, &l, opts...); err != nil {
		return nil, fmt.Errorf("list the cluster registrations (v1 Secrets labelled %s=%s): %w", v1alpha1.RegistrationLabel, v1alpha1.RegistrationValue, err)
	}
	out := make([]Registration, len(l.Items))
	var wg sync.WaitGroup
	for i := range l.Items {
		s := &l.Items[i]
		labels := maps.Clone(s.Labels)
		delete(labels, v1alpha1.RegistrationLabel)
		out[i] = Registration{Namespace: s.Namespace, Name: s.Name, Labels: labels, Allowed: s.Annotations[v1alpha1.AllowedNamespacesAnnotation]}
		wg.Go(func() { probe(&out[i], s.Data[v1alpha1.KubeconfigKey], timeout) })
	}
	wg.Wait()
	return out, nil
}

// probe reads the registration's server and asks it its version.
func probe(r *Registration, kc []byte, timeout time.Duration) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		r.Err = fmt.Errorf("kubeconfig: %w", err)
		return
	}
	r.Server = cfg.Host
	cfg.Timeout = timeout
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		r.Err = err
		return
	}
	v, err := d.ServerVersion()
	if err != nil {
		r.Err = err
		return
	}
	r.Version = v.GitVersion
}

// FormatLabels is k=v,… in key order.
func FormatLabels(l map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(l)) {
		parts = append(parts, k+"="+l[k])
	}
	return strings.Join(parts, ",")
}
