package planner

import (
	"context"
	"fmt"
	"slices"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// validateNew asks the API server whether it would create obj, which does
// not exist: a server-side dry-run apply, as apply validates it. The API
// server refuses anything in a namespace that does not exist before it
// validates it, so an object whose namespace is missing (create_namespace,
// a Namespace of the release or of a dependency) is dry-run created in
// kube.ValidationNamespace instead: elsewhere names its namespace then. A
// refused object is an error naming it. In the namespace create_namespace
// creates, found absent (namespaceAbsent), the dry-run create is the only
// dry run: the dry-run apply there would only be refused.
func (c *computer) validateNew(ctx context.Context, rd *release.Renderer, obj *unstructured.Unstructured, req *release.Request) (elsewhere, warning string, err error) {
	ns := obj.GetNamespace()
	absent := false
	if req.CreateNamespace && ns == req.Namespace {
		if absent, err = c.namespaceAbsent(ctx, rd, ns); err != nil {
			return "", "", err
		}
	}
	if !absent {
		_, err = c.dryRun(ctx, rd, obj, nil, req.IgnoreChanges)
		missing, ok := kube.IsNamespaceNotFound(err)
		if err == nil || !ok || missing != ns {
			return "", "", err
		}
	}
	c.stats.add(&c.stats.DryRuns, 1)
	switch err := c.view(rd).DryRunCreate(ctx, obj, kube.ValidationNamespace); {
	case apierrors.IsForbidden(err):
		return ns, fmt.Sprintf("%s is not validated before apply: %v", kube.RefOf(obj), err), nil
	case err != nil:
		return "", "", err
	}
	return ns, "", nil
}

// namespaceAbsent validates namespace, which create_namespace creates,
// and reports whether it does not exist, as the plan's view reads it
// (ClusterView.Namespace: once per plan).
func (c *computer) namespaceAbsent(ctx context.Context, rd *release.Renderer, namespace string) (bool, error) {
	exists, err := c.view(rd).Namespace(ctx, namespace)
	return !exists, err
}

// missingNamespaces warns about the namespaces that objects were validated
// outside of because they do not exist, unless the release creates them.
func missingNamespaces(namespaces []string, req *release.Request, objs []*unstructured.Unstructured) []string {
	slices.Sort(namespaces)
	var out []string
	for _, ns := range slices.Compact(namespaces) {
		created := req.CreateNamespace && ns == req.Namespace
		for _, o := range objs {
			created = created || (o.GetAPIVersion() == "v1" && o.GetKind() == "Namespace" && o.GetName() == ns)
		}
		if !created {
			out = append(out, fmt.Sprintf("namespace %s does not exist: its objects were validated by a dry run in namespace %s, and apply fails unless it exists by then (created by a release this one depends on)", ns, kube.ValidationNamespace))
		}
	}
	return out
}

// inTemplate names the template an object error comes from.
func inTemplate(template string, err error) error {
	if template == "" || err == nil {
		return err
	}
	return fmt.Errorf("template %s: %w", template, err)
}
