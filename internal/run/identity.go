package run

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/internal/kube"
	"github.com/convoy-sh/convoy/internal/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Identity is what a stack's lock is keyed by: the stack's ID (its name
// and environment) and the clusters it uses. Two runs with one identity
// contend for one lock and write the same releases.
type Identity struct {
	Stack    string
	Clusters []kube.ClusterID
}

// String is the identity as one line: stack@cluster,cluster.
func (id Identity) String() string {
	cs := make([]string, len(id.Clusters))
	for i, c := range id.Clusters {
		cs[i] = string(c)
	}
	return id.Stack + "@" + strings.Join(cs, ",")
}

// StackIdentity loads the stack (evaluated, not ordered) and resolves the
// clusters it uses to what they connect to, without connecting.
func StackIdentity(ctx context.Context, o Options) (Identity, error) {
	ls, err := Load(ctx, o.Source, Evaluated)
	if err != nil {
		return Identity{}, err
	}
	st := ls.Stack
	cl := o.newClusters(nil)
	seen := map[kube.ClusterID]bool{}
	for _, spec := range st.UsedClusters() {
		cfg, err := cl.restConfig(spec)
		if err != nil {
			return Identity{}, err
		}
		seen[kube.ClusterIDOf(cfg)] = true
	}
	return Identity{Stack: st.ID(), Clusters: slices.Sorted(maps.Keys(seen))}, nil
}

// LockHolder returns the run that holds the stack's lock on one of its
// clusters as a *LockedError, or nil when no live run holds it (a holder
// that is gone would be taken over).
func LockHolder(ctx context.Context, o Options) (*LockedError, error) {
	ls, err := Load(ctx, o.Source, Evaluated)
	if err != nil {
		return nil, err
	}
	st := ls.Stack
	clusters, err := o.newClusters(nil).Stack(ctx, st)
	if err != nil {
		return nil, err
	}
	me := thisProcess()
	for _, c := range clusters {
		l, err := c.Engine.Client().CoordinationV1().Leases(LockNamespace).Get(ctx, LockName(st.ID()), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: read the lock of stack %q: %w", c.Describe(), st.ID(), err)
		}
		if gone(l, me, time.Now(), processExists) == "" {
			return lockedError(st.ID(), l), nil
		}
	}
	return nil, nil
}

// Abandon takes the stack's label off the records of every release the
// stack owns, on every cluster it uses, under the stack's lock: the
// releases keep running, and no stack manages them any more (a Stack
// deleted without prune; removed blocks with destroy = false do it per
// release). It returns the releases it let go, as namespace/name.
func Abandon(ctx context.Context, o Options, command string) (released []string, err error) {
	ls, err := Load(ctx, o.Source, Evaluated)
	if err != nil {
		return nil, err
	}
	st := ls.Stack
	cl := o.newClusters(nil)
	lock, err := lockStack(ctx, o, st, cl, command)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, lock.release(ctx)) }()
	for _, h := range lock.held {
		eng := h.cluster.Engine
		keys, err := eng.Labelled(ctx, map[string]string{"owner": "helm", release.StackLabel: st.ID()})
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
