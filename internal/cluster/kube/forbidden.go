package kube

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ForbiddenError is a request the API server's authorizer refused: who
// may not do what. Its message reads
// `serviceaccount team-a/deployer may not create clusterrolebindings.rbac.authorization.k8s.io`
// (with ` in namespace NS` for a namespaced resource). Unwrap gives the
// API server's error (apierrors.IsForbidden holds).
type ForbiddenError struct {
	// User is the user the request was made as (a service account's is
	// system:serviceaccount:NS:NAME).
	User string
	// Verb is the verb refused (get, list, create, patch, ...).
	Verb string
	// Resource is the resource, with its subresource and API group:
	// deployments/scale.apps, secrets.
	Resource string
	// Namespace is the request's namespace ("": cluster-scoped, or across
	// all namespaces).
	Namespace string
	Err       error
}

func (e *ForbiddenError) Error() string {
	s := fmt.Sprintf("%s may not %s %s", DescribeUser(e.User), e.Verb, e.Resource)
	if e.Namespace != "" {
		s += " in namespace " + e.Namespace
	}
	return s
}

func (e *ForbiddenError) Unwrap() error { return e.Err }

// DescribeUser names a Kubernetes user for people:
// "serviceaccount NS/NAME" for a service account, else `user "NAME"`.
func DescribeUser(user string) string {
	if rest, ok := strings.CutPrefix(user, "system:serviceaccount:"); ok {
		if ns, name, ok := strings.Cut(rest, ":"); ok {
			return "serviceaccount " + ns + "/" + name
		}
	}
	return fmt.Sprintf("user %q", user)
}

// rbacRefusal is the authorizer's message (the API server's
// forbiddenMessage) within a Forbidden status.
var rbacRefusal = regexp.MustCompile(`User "([^"]*)" cannot (\S+) resource "([^"]*)" in API group "([^"]*)"(?: in the namespace "([^"]*)"| at the cluster scope)?`)

// Forbidden is err as a *ForbiddenError when the API server's authorizer
// refused it, else err itself. Refusals of admission (a policy, a quota)
// are Forbidden too but name no verb: they are left as they are.
func Forbidden(err error) error {
	var fe *ForbiddenError
	if err == nil || !apierrors.IsForbidden(err) || errors.As(err, &fe) {
		return err
	}
	m := rbacRefusal.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	res := m[3]
	if m[4] != "" {
		res += "." + m[4]
	}
	return &ForbiddenError{User: m[1], Verb: m[2], Resource: res, Namespace: m[5], Err: err}
}

// apiRefusal is the API server's whole text of an authorizer's refusal:
// `secrets "x" is forbidden: User "…" cannot get resource …`.
var apiRefusal = regexp.MustCompile(`(?:[a-z0-9.-]+(?: "[^"]*")? is forbidden: )?` + rbacRefusal.String())

// Refusals rewrites, in a message made of errors' texts, each refusal of
// the API server's authorizer that no *ForbiddenError turned into its
// sentence (a path that passed the API server's error on as it was) as
// that sentence, and says whether it found any: who may not do what,
// never the API server's text.
func Refusals(msg string) (string, bool) {
	found := false
	out := apiRefusal.ReplaceAllStringFunc(msg, func(s string) string {
		m := apiRefusal.FindStringSubmatch(s)
		found = true
		res := m[3]
		if m[4] != "" {
			res += "." + m[4]
		}
		return (&ForbiddenError{User: m[1], Verb: m[2], Resource: res, Namespace: m[5]}).Error()
	})
	return out, found
}
