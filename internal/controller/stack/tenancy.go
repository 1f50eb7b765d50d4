package stack

import (
	"fmt"
	"strings"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Tenancy is how far the controller keeps Stacks of different namespaces
// apart.
type Tenancy string

const (
	// TenancyNone: Stacks act as their service account when they name
	// one (or --default-service-account is set), else as the controller.
	TenancyNone Tenancy = ""
	// TenancyStrict: every Stack acts as a service account of its own
	// namespace (--default-service-account is required), references to
	// other namespaces are refused. (The shared cache serves pulled
	// artifacts and charts per credentials in every mode: pulled.go,
	// source.Access.)
	TenancyStrict Tenancy = "strict"
)

// ParseTenancy reads --tenancy.
func ParseTenancy(s string) (Tenancy, error) {
	switch t := Tenancy(s); t {
	case TenancyNone, TenancyStrict:
		return t, nil
	}
	return "", fmt.Errorf("--tenancy %q: want strict (or nothing)", s)
}

// validateTenancy checks the tenancy options before the controller starts.
func (o Options) validateTenancy() error {
	if o.DefaultServiceAccount != "" {
		if errs := validation.IsDNS1123Subdomain(o.DefaultServiceAccount); len(errs) > 0 {
			return fmt.Errorf("--default-service-account %q: %s", o.DefaultServiceAccount, strings.Join(errs, "; "))
		}
	}
	if o.Tenancy == TenancyStrict && o.DefaultServiceAccount == "" {
		return fmt.Errorf("--tenancy strict needs --default-service-account: every Stack must act as a service account of its own namespace")
	}
	return nil
}

// noCrossNamespaceRefs: references to other namespaces are refused.
func (o Options) noCrossNamespaceRefs() bool {
	return o.NoCrossNamespaceRefs || o.Tenancy == TenancyStrict
}

// serviceAccountOf is the service account a Stack acts as, in its own
// namespace ("": the controller's own identity).
func (o Options) serviceAccountOf(st *v1alpha1.Stack) string {
	if st.Spec.ServiceAccountName != "" {
		return st.Spec.ServiceAccountName
	}
	return o.DefaultServiceAccount
}

// identityNamespace is the namespace a Stack's identity (and its stack
// lock) is scoped to: its own, whenever it acts as a service account of
// its namespace (always under --tenancy strict), since Stacks of two
// namespaces then see and change only what their own identities may and
// are two tenants' stacks though their artifacts name one stack; "" for a
// Stack acting as the controller, whose identity stays the stack's ID
// and clusters, as the CLI's (one lock with `convoy apply` of the stack).
func (o Options) identityNamespace(st *v1alpha1.Stack) string {
	if o.Tenancy == TenancyStrict || o.serviceAccountOf(st) != "" {
		return st.Namespace
	}
	return ""
}

// impersonating is the user name a Stack's requests impersonate
// (system:serviceaccount:NS:NAME), "" for none.
func (o Options) impersonating(st *v1alpha1.Stack) string {
	return serviceAccountUser(st.Namespace, o.serviceAccountOf(st))
}

// serviceAccountUser is the user name of service account sa of namespace
// ns (system:serviceaccount:NS:NAME), "" for none.
func serviceAccountUser(ns, sa string) string {
	if sa == "" {
		return ""
	}
	return "system:serviceaccount:" + ns + ":" + sa
}

// crossNamespaceRefs are the fields of the Stack that name an object of
// another namespace, as "spec.varsFrom[1].namespace: NS".
func crossNamespaceRefs(st *v1alpha1.Stack) []string {
	var out []string
	other := func(ns string) bool { return ns != "" && ns != st.Namespace }
	for i, vf := range st.Spec.VarsFrom {
		if other(vf.Namespace) {
			out = append(out, fmt.Sprintf("spec.varsFrom[%d].namespace: %s", i, vf.Namespace))
		}
	}
	for i, c := range st.Spec.Clusters {
		if other(c.SecretRef.Namespace) {
			out = append(out, fmt.Sprintf("spec.clusters[%d].secretRef.namespace: %s", i, c.SecretRef.Namespace))
		}
	}
	for i, n := range st.Spec.Notifications {
		if n.URLFrom != nil && other(n.URLFrom.SecretKeyRef.Namespace) {
			out = append(out, fmt.Sprintf("spec.notifications[%d].urlFrom.secretKeyRef.namespace: %s", i, n.URLFrom.SecretKeyRef.Namespace))
		}
	}
	return out
}

// crossNamespaceError is the Invalid message of a Stack with references
// to other namespaces under --no-cross-namespace-refs ("" when it has
// none, or they are allowed).
func (o Options) crossNamespaceError(st *v1alpha1.Stack) string {
	if !o.noCrossNamespaceRefs() {
		return ""
	}
	refs := crossNamespaceRefs(st)
	if len(refs) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: the controller refuses references to namespaces other than the Stack's own (%s; --no-cross-namespace-refs): nothing is planned",
		strings.Join(refs, ", "), st.Namespace)
}

// refNamespace is the namespace a reference names ("": the Stack's).
func refNamespace(st *v1alpha1.Stack, ns string) string {
	if ns == "" {
		return st.Namespace
	}
	return ns
}
