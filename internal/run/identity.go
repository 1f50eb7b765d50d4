package run

import (
	"context"
	"errors"
	"fmt"
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"maps"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// identityOf is the identity of a loaded stack.
func identityOf(o Options, ls *Loaded) (stacklock.Identity, error) {
	st := ls.Stack
	cl := o.newClusters(nil)
	seen := map[kube.ClusterID]bool{}
	for _, spec := range st.UsedClusters() {
		cfg, err := cl.restConfig(spec)
		if err != nil {
			return stacklock.Identity{}, err
		}
		seen[kube.ClusterIDOf(cfg)] = true
	}
	return stacklock.Identity{Namespace: o.IdentityNamespace, Stack: st.ID(), Clusters: slices.Sorted(maps.Keys(seen))}, nil
}

// LockHolder returns the run that holds the stack's lock on one of its
// clusters as a *LockedError, or nil when no live run holds it (a holder
// that is gone would be taken over).
func (s *Session) LockHolder(ctx context.Context) (*stacklock.HeldError, error) {
	if s.ls == nil {
		return nil, errGone
	}
	st := s.ls.Stack
	key := s.o.lockKey(st)
	clusters, err := s.o.newClusters(nil).Stack(ctx, st)
	if err != nil {
		return nil, err
	}
	for _, c := range clusters {
		l, err := c.Engine.LockClient().CoordinationV1().Leases(stacklock.Namespace).Get(ctx, stacklock.Name(key), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: read the lock of stack %q: %w", c.Describe(), key, err)
		}
		if le := stacklock.Holder(key, l); le != nil {
			return le, nil
		}
	}
	return nil, nil
}

// Abandon takes the stack's label off the records of every release the
// stack owns, on every cluster it uses, under the stack's lock: the
// releases keep running, and no stack manages them any more (a Stack
// deleted without prune; removed blocks with destroy = false do it per
// release). It returns the releases it let go, as namespace/name.
//
// A session of a stack that can no longer be loaded (OpenGone) lets go of
// what the stack owns on the default cluster only (abandonOnDefaultCluster).
func (s *Session) Abandon(ctx context.Context, command string) (released []string, err error) {
	if s.ls == nil {
		return s.abandonOnDefaultCluster(ctx, command)
	}
	st := s.ls.Stack
	o := s.o.forStack(st)
	cl := o.newClusters(nil)
	defer cl.Close()
	lock, err := lockStack(ctx, o, st, cl, command)
	if err != nil {
		return nil, err
	}
	defer func() { err = lock.finish(ctx, err) }()
	ctx, stopFence := lock.fence(ctx)
	defer stopFence()
	selector := stackSelector(stacklock.Identity{Namespace: o.IdentityNamespace, Stack: st.ID()})
	for _, h := range lock.held {
		eng := h.cluster.Engine
		keys, err := eng.Labelled(ctx, selector)
		if err != nil {
			return released, fmt.Errorf("%s: %w", h.cluster.Describe(), err)
		}
		for _, k := range keys {
			if err := eng.Disown(ctx, k.Namespace, k.Name, st.ID()); err != nil {
				return released, fmt.Errorf("%s: %w", h.cluster.Describe(), err)
			}
			released = append(released, k.Namespace+"/"+k.Name)
		}
	}
	return released, nil
}

// abandonOnDefaultCluster is Abandon for a stack that can no longer be
// loaded (its source or variable values gone), known by its identity: it
// lets go of the releases the stack owns on the default cluster, under the
// stack's lock there. It refuses a stack that uses any other cluster: what
// it owns there cannot be reached without the stack.
func (s *Session) abandonOnDefaultCluster(ctx context.Context, command string) (released []string, err error) {
	o, id := s.o, s.gone
	cl := o.newClusters(nil)
	cfg, err := cl.restConfig(nil)
	if err != nil {
		return nil, err
	}
	def := kube.ClusterIDOf(cfg)
	if len(id.Clusters) != 1 || id.Clusters[0] != def {
		return nil, fmt.Errorf("stack %q uses clusters other than the default one (%s): it must be loaded to let its releases go", id.Stack, def)
	}
	eng, err := cl.Engine(ctx, nil)
	if err != nil {
		return nil, err
	}
	env := ""
	if _, e, ok := strings.Cut(id.Stack, "."); ok {
		env = e
	}
	lock, err := stacklock.Acquire(ctx, eng.LockClient(), id.Key(), stacklock.Options{Command: command, Announce: o.announce, Environment: env})
	if err != nil {
		return nil, err
	}
	defer func() {
		if rerr := lock.Release(ctx, o.Grace); rerr != nil {
			err = errors.Join(err, &UnlockError{Stack: id.Key(), Cluster: "the default cluster", LockID: lock.ID(), Err: rerr})
		}
	}()
	keys, err := eng.Labelled(ctx, stackSelector(id))
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if err := eng.Disown(ctx, k.Namespace, k.Name, id.Stack); err != nil {
			return released, err
		}
		released = append(released, k.Namespace+"/"+k.Name)
	}
	return released, nil
}

// stackSelector selects the records of the releases of the stack id
// names: those its stack label names, and, for an identity scoped to a
// namespace, that the Stack of that namespace wrote (another namespace's
// Stack of the same stack ID owns its own).
func stackSelector(id stacklock.Identity) map[string]string {
	sel := map[string]string{"owner": "helm", release.StackLabel: id.Stack}
	if id.Namespace != "" {
		sel[release.StackNamespaceLabel] = id.Namespace
	}
	return sel
}
