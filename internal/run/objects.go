package run

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/stack/config"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Objects reads the live objects of the stack: for every release, in the
// stack's order, the objects of its deployed revision (from the record's
// objects annotation, else its manifest; hooks are not part of either),
// each read in full (status included) from its cluster, in the order of
// the manifest. Secrets come without data, stringData and kubectl's
// last-applied-configuration annotation: what reads them (a pipeline's
// gates) never holds a Secret's values.
//
// What is absent is an error, returned with the objects that were found:
// an *AbsentError names each release of the stack without a deployed
// revision and each object of a deployed revision that is gone (a gate
// over a Deployment that vanished fails rather than passing over the
// others). Any other failure (loading, an unreachable cluster, a refused
// read) returns no objects.
func (s *Session) Objects(ctx context.Context) ([]*unstructured.Unstructured, error) {
	ls, o, cl, err := s.connected(ctx)
	if err != nil {
		return nil, err
	}
	type found struct {
		objs   []*unstructured.Unstructured
		absent AbsentError
	}
	out := make([]found, len(ls.Order))
	errs := make([]error, len(ls.Order))
	err = forEach(ctx, o.parallelism(), len(ls.Order), func(i int) {
		inst := ls.Stack.Release(ls.Order[i])
		out[i].objs, out[i].absent, errs[i] = releaseObjects(ctx, cl, inst)
	})
	if err := firstError(errs, err); err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	var absent AbsentError
	for _, f := range out {
		objs = append(objs, f.objs...)
		absent.Releases = append(absent.Releases, f.absent.Releases...)
		absent.Objects = append(absent.Objects, f.absent.Objects...)
	}
	if len(absent.Releases) > 0 || len(absent.Objects) > 0 {
		return objs, &absent
	}
	return objs, nil
}

// releaseObjects reads the live objects of inst's deployed revision.
func releaseObjects(ctx context.Context, cl *Clusters, inst *config.ReleaseInstance) ([]*unstructured.Unstructured, AbsentError, error) {
	var absent AbsentError
	eng, err := cl.Engine(ctx, inst.Cluster)
	if err != nil {
		return nil, absent, err
	}
	rel, err := eng.Storage(inst.Namespace).Deployed(ctx, inst.Name)
	if errors.Is(err, release.ErrNoDeployed) || errors.Is(err, release.ErrReleaseNotFound) {
		absent.Releases = append(absent.Releases, AbsentRelease{Address: inst.Addr.String(), Name: inst.Name, Namespace: inst.Namespace})
		return nil, absent, nil
	}
	if err != nil {
		return nil, absent, err
	}
	refs, err := recordRefs(eng.Renderer, rel)
	if err != nil {
		return nil, absent, fmt.Errorf("%s (release %s, revision %d): %w", inst.Addr, rel.Name, rel.Version, err)
	}
	var objs []*unstructured.Unstructured
	for _, ref := range refs {
		live, err := eng.Kube().Get(ctx, ref)
		switch {
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			absent.Objects = append(absent.Objects, AbsentObject{Ref: ref, Release: inst.Addr.String(), Revision: rel.Version})
			continue
		case err != nil:
			return nil, absent, err
		}
		if ref.Group == "" && ref.Kind == "Secret" {
			withoutSecretValues(live)
		}
		objs = append(objs, live)
	}
	return objs, absent, nil
}

// withoutSecretValues takes out of a Secret what holds its values.
func withoutSecretValues(u *unstructured.Unstructured) {
	unstructured.RemoveNestedField(u.Object, "data")
	unstructured.RemoveNestedField(u.Object, "stringData")
	if a := u.GetAnnotations(); a != nil {
		if _, ok := a["kubectl.kubernetes.io/last-applied-configuration"]; ok {
			delete(a, "kubectl.kubernetes.io/last-applied-configuration")
			u.SetAnnotations(a)
		}
	}
}

// AbsentError is what a stack's objects lack: its releases without a
// deployed revision and the objects of deployed revisions that are gone.
type AbsentError struct {
	Releases []AbsentRelease
	Objects  []AbsentObject
}

// AbsentRelease is a release of the stack without a deployed revision
// (not installed, or every revision failed).
type AbsentRelease struct {
	// Address is the release's address in the stack (release.api["eu"]).
	Address         string
	Name, Namespace string
}

// AbsentObject is an object of a release's deployed revision that its
// cluster does not have (deleted, or its kind no longer served).
type AbsentObject struct {
	Ref      kube.Ref
	Release  string // the release's address
	Revision int
}

// Error lists them, one a line.
func (e *AbsentError) Error() string {
	lines := make([]string, 0, len(e.Releases)+len(e.Objects))
	for _, r := range e.Releases {
		lines = append(lines, fmt.Sprintf("%s (release %s in namespace %s): no deployed revision", r.Address, r.Name, r.Namespace))
	}
	for _, o := range e.Objects {
		lines = append(lines, fmt.Sprintf("%s: not found (%s, revision %d)", o.Ref, o.Release, o.Revision))
	}
	return strings.Join(lines, "\n")
}
