package ctl

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/deploy"
	"github.com/convoy-sh/convoy/internal/version"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Connect is NewClient of the cluster a kubeconfig and context name (as
// RestConfig): what the Stack commands (approve, get stacks, install) use.
func Connect(kubeconfig, context string) (client.Client, error) {
	cfg, err := RestConfig(kubeconfig, context)
	if err != nil {
		return nil, err
	}
	return NewClient(cfg)
}

// NewClient is a client of Stacks and the built-in types.
func NewClient(cfg *rest.Config) (client.Client, error) {
	s, err := NewScheme()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: s})
}

// ApproveError says why a Stack cannot be approved.
type ApproveError struct{ msg string }

func (e *ApproveError) Error() string { return e.msg }

// Approve adds an approval of the Stack's current plan (or of want, which
// must be its digest) as the user c authenticates as, and returns the
// digest.
func Approve(ctx context.Context, c client.Client, namespace, name, want string) (string, error) {
	return ApproveWith(ctx, c, namespace, name, want, nil)
}

// ApproveWith is Approve with overrides of the policies that deny the
// plan (spec.allowPolicies, for that digest only): each must deny it, and
// together they must cover every denial, or approving would apply nothing.
func ApproveWith(ctx context.Context, c client.Client, namespace, name, want string, allow []string) (string, error) {
	a, err := ApprovePlan(ctx, c, ApproveRequest{Namespace: namespace, Name: name, Plan: want, AllowPolicies: allow})
	if err != nil {
		return "", err
	}
	return a.Digest, nil
}

// ListStacks lists the Stacks of a namespace ("": all).
func ListStacks(ctx context.Context, c client.Client, namespace string) ([]v1alpha1.Stack, error) {
	var l v1alpha1.StackList
	if err := listIn(ctx, c, &l, namespace, "Stack type (stacks.convoy.dev)"); err != nil {
		return nil, err
	}
	return l.Items, nil
}

// listIn lists into l the objects of a namespace ("": all); a cluster
// without the type is told to run convoy controller install.
func listIn(ctx context.Context, c client.Client, l client.ObjectList, namespace, what string) error {
	var opts []client.ListOption
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := c.List(ctx, l, opts...); err != nil {
		if apierrors.IsNotFound(err) || isNoMatch(err) {
			return fmt.Errorf("the cluster has no %s: run convoy controller install", what)
		}
		return err
	}
	return nil
}

func isNoMatch(err error) bool {
	return err != nil && bytes.Contains([]byte(err.Error()), []byte("no matches for kind"))
}

// InstallRequest says what to install.
type InstallRequest struct {
	// Deployment installs the controller's Deployment too.
	Deployment bool
	// Image is the Deployment's image ("": deploy.DefaultImage of this
	// convoy's version).
	Image string
	// Log receives a line per object applied.
	Log io.Writer
	// MinInterval is the shortest spec.interval the CRDs accept (0:
	// DefaultMinInterval).
	MinInterval time.Duration
	// WebhookTokenSecret, NAMESPACE/NAME, runs the Deployment's push
	// receiver with this token Secret, and installs its Service ("":
	// none).
	WebhookTokenSecret string
}

// Install applies the CRD (and waits until it is established), the RBAC,
// the approval admission policies and, when asked, the Deployment, with
// server-side apply.
func Install(ctx context.Context, c client.Client, req InstallRequest) error {
	if req.WebhookTokenSecret != "" {
		if _, err := ParseSecretRef(req.WebhookTokenSecret); err != nil {
			return fmt.Errorf("--webhook-token-secret %w", err)
		}
		if !req.Deployment {
			return errors.New("--webhook-token-secret sets the Deployment's push receiver: install the Deployment too")
		}
	}
	docs := [][]byte{deploy.CRD, deploy.PipelineCRD, deploy.StackSetCRD, deploy.RBAC, deploy.ApprovalPolicy}
	if req.Deployment {
		docs = append(docs, deploy.Deployment)
		if req.WebhookTokenSecret != "" {
			docs = append(docs, deploy.WebhookService)
		}
	}
	for _, doc := range docs {
		objs, err := decodeAll(doc)
		if err != nil {
			return err
		}
		for _, u := range objs {
			if u.GetKind() == "CustomResourceDefinition" {
				setMinInterval(u, req.MinInterval)
			}
			if u.GetKind() == "Deployment" {
				if err := setImage(u, cmp.Or(req.Image, deploy.DefaultImage(version.Get().Version))); err != nil {
					return err
				}
				if err := setWebhook(u, req.WebhookTokenSecret); err != nil {
					return err
				}
			}
			//nolint:staticcheck // client.Apply with unstructured objects
			if err := c.Patch(ctx, u, client.Apply, client.FieldOwner("convoy"), client.ForceOwnership); err != nil {
				return fmt.Errorf("%s %s %s: %w", u.GetAPIVersion(), u.GetKind(), objName(u), err)
			}
			if req.Log != nil {
				fmt.Fprintf(req.Log, "applied %s %s %s%s\n", u.GetAPIVersion(), u.GetKind(), objName(u), imageOf(u))
			}
			if u.GetKind() == "CustomResourceDefinition" {
				if err := waitEstablished(ctx, c, u.GetName()); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// ValidateImage refuses what cannot be an image reference
// (REGISTRY/REPO:TAG or …@sha256:…): the kubelet would only say so when
// the pod fails to start.
func ValidateImage(ref string) error {
	switch {
	case ref == "":
		return errors.New("--image: empty image reference")
	case strings.Contains(ref, "://"):
		return fmt.Errorf("--image %q: an image reference has no scheme: REGISTRY/REPO:TAG", ref)
	case strings.ContainsAny(ref, " \t\n\r"):
		return fmt.Errorf("--image %q: an image reference has no spaces", ref)
	case strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, "-") || strings.HasSuffix(ref, ":") || strings.HasSuffix(ref, "/"):
		return fmt.Errorf("--image %q: want REGISTRY/REPO:TAG or REGISTRY/REPO@sha256:DIGEST", ref)
	}
	return nil
}

// setImage sets the image of the controller's container.
func setImage(u *unstructured.Unstructured, image string) error {
	containers, _, err := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if err != nil {
		return fmt.Errorf("%s %s %s: %w", u.GetAPIVersion(), u.GetKind(), objName(u), err)
	}
	for i, c := range containers {
		m, ok := c.(map[string]any)
		if ok && m["name"] == "controller" {
			m["image"] = image
			containers[i] = m
			return unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers")
		}
	}
	return fmt.Errorf("%s %s %s: no container named controller", u.GetAPIVersion(), u.GetKind(), objName(u))
}

// imageOf is " (image REF)" for the controller's Deployment.
func imageOf(u *unstructured.Unstructured) string {
	if u.GetKind() != "Deployment" {
		return ""
	}
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		if m, ok := c.(map[string]any); ok && m["name"] == "controller" {
			return fmt.Sprintf(" (image %v)", m["image"])
		}
	}
	return ""
}

func objName(u *unstructured.Unstructured) string {
	if u.GetNamespace() != "" {
		return u.GetNamespace() + "/" + u.GetName()
	}
	return u.GetName()
}

func decodeAll(doc []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(doc), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(m) > 0 {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
}

func waitEstablished(ctx context.Context, c client.Client, name string) error {
	deadline := time.Now().Add(time.Minute)
	for {
		var crd apiextensionsv1.CustomResourceDefinition
		err := c.Get(ctx, types.NamespacedName{Name: name}, &crd)
		if err == nil {
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("apiextensions.k8s.io/v1 CustomResourceDefinition %s: not established after a minute", name)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// checkOverrides refuses overrides that would not make the plan
// applicable, or that name policies not denying it.
func checkOverrides(key string, p *v1alpha1.PlanStatus, allow []string) error {
	for _, a := range allow {
		if !slices.Contains(p.DeniedBy, a) {
			denied := "no policy denies it"
			if len(p.DeniedBy) > 0 {
				denied = "it is denied by " + strings.Join(p.DeniedBy, ", ")
			}
			return &ApproveError{fmt.Sprintf("convoy.dev/v1alpha1 Stack %s: --allow-policy %s: policy %s does not deny plan %s (%s)", key, a, a, p.Digest, denied)}
		}
	}
	var missing []string
	for _, d := range p.DeniedBy {
		if !slices.Contains(allow, d) {
			missing = append(missing, d)
		}
	}
	if len(missing) > 0 {
		return &ApproveError{fmt.Sprintf("convoy.dev/v1alpha1 Stack %s: plan %s is denied by %s; approving it needs --allow-policy for each: %s", key, p.Digest, strings.Join(missing, ", "), strings.Join(missing, ", "))}
	}
	return nil
}
