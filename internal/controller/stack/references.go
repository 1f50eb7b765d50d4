package stack

import (
	"context"
	"slices"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// IndexReferences indexes the Stacks in mgr's cache by the ConfigMaps
// and Secrets they name (StacksReferencing reads the index).
func IndexReferences(ctx context.Context, mgr manager.Manager) error {
	return mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.Stack{}, referencesIndex, func(o client.Object) []string {
		return referenceKeys(o.(*v1alpha1.Stack))
	})
}

// StacksReferencing maps a ConfigMap or Secret (kind) to the Stacks that
// name it.
func (x *Reconciler) StacksReferencing(kind string) handler.MapFunc {
	return x.r.stacksReferencing(kind)
}

// referencesIndex indexes the Stacks in the cache by the ConfigMaps and
// Secrets they read (referenceKeys), so that a changed one finds its
// Stacks, in any namespace, without a scan of every Stack.
const referencesIndex = "convoy.dev/references"

// stacksReferencing maps a ConfigMap or Secret to the Stacks that read it
// (varsFrom, or clusters and sourceSecretRef for Secrets).
func (r *reconciler) stacksReferencing(kind string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		var l v1alpha1.StackList
		if err := r.client.List(ctx, &l, client.MatchingFields{referencesIndex: referenceKey(kind, obj.GetNamespace(), obj.GetName())}); err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(l.Items))
		for _, st := range l.Items {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: st.Namespace, Name: st.Name}})
		}
		return out
	}
}

func referenceKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// referenceKeys are the ConfigMaps and Secrets a Stack reads, as
// referenceKey.
func referenceKeys(st *v1alpha1.Stack) []string {
	var keys []string
	for _, vf := range st.Spec.VarsFrom {
		keys = append(keys, referenceKey(vf.Kind, refNamespace(st, vf.Namespace), vf.Name))
	}
	if ref := st.Spec.SourceSecretRef; ref != nil {
		keys = append(keys, referenceKey("Secret", st.Namespace, ref.Name))
	}
	if v := st.Spec.Verify; v != nil {
		keys = append(keys, referenceKey("Secret", st.Namespace, v.SecretRef.Name))
	}
	for _, c := range st.Spec.Clusters {
		keys = append(keys, referenceKey("Secret", refNamespace(st, c.SecretRef.Namespace), c.SecretRef.Name))
	}
	return keys
}

func references(st *v1alpha1.Stack, kind, namespace, name string) bool {
	return slices.Contains(referenceKeys(st), referenceKey(kind, namespace, name))
}
