package stack

import (
	"fmt"
	"sync"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// stackReaders are the uncached readers of the objects Stacks name
// (varsFrom, kubeconfig and registry Secrets, notification URLs), one per
// impersonated user: a Stack with a service account reads them as it,
// so that it reads nothing its identity could not. Safe for concurrent
// use.
type stackReaders struct {
	cfg    *rest.Config // the controller's own
	scheme *runtime.Scheme
	mapper meta.RESTMapper
	own    client.Reader // the controller's: Stacks without an identity

	mu     sync.Mutex
	byUser map[string]client.Reader
}

// of is the reader of the user a Stack impersonates ("": the
// controller's own).
func (s *stackReaders) of(user string) (client.Reader, error) {
	if user == "" || s.cfg == nil {
		return s.own, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.byUser[user]; ok {
		return c, nil
	}
	cfg := rest.CopyConfig(s.cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := client.New(cfg, client.Options{Scheme: s.scheme, Mapper: s.mapper})
	if err != nil {
		return nil, fmt.Errorf("a client impersonating %s: %w", user, err)
	}
	if s.byUser == nil {
		s.byUser = map[string]client.Reader{}
	}
	s.byUser[user] = c
	return c, nil
}

// readerFor is the reader of the objects the Stack names: as its service
// account, if it has one.
func (r *reconciler) readerFor(st *v1alpha1.Stack) (client.Reader, error) {
	if r.readers == nil {
		return r.reader, nil
	}
	return r.readers.of(r.opts.impersonating(st))
}

// refsAllowed refuses a Stack naming objects of other namespaces under
// --no-cross-namespace-refs: a *configError (Invalid, nothing planned).
func (r *reconciler) refsAllowed(st *v1alpha1.Stack) error {
	if msg := r.opts.crossNamespaceError(st); msg != "" {
		return &configError{msg: msg}
	}
	return nil
}
