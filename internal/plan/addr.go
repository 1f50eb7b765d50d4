package plan

import (
	"fmt"
	"strings"

	"github.com/convoy-sh/convoy/internal/stack/addrs"
)

// ReleaseAddr is whose change a ReleaseChange is: an instance of a release
// block of the stack, or a release of the stack (on one of its clusters)
// that its files no longer declare.
type ReleaseAddr struct {
	// Instance is the release instance; the zero value when Removed.
	Instance addrs.ReleaseInstance `json:",omitzero"`
	// Removed is the release its files no longer declare; the zero value
	// for an instance.
	Removed RemovedRelease `json:",omitzero"`
}

// RemovedRelease is a release of the stack its files no longer declare.
type RemovedRelease struct {
	// Cluster is the cluster block name ("" for the default cluster).
	Cluster   string `json:",omitempty"`
	Namespace string
	Name      string
}

// InstanceAddr is the address of a release instance's change.
func InstanceAddr(a addrs.ReleaseInstance) ReleaseAddr { return ReleaseAddr{Instance: a} }

// RemovedAddr is the address of a removed release's change.
func RemovedAddr(cluster, namespace, name string) ReleaseAddr {
	return ReleaseAddr{Removed: RemovedRelease{Cluster: cluster, Namespace: namespace, Name: name}}
}

// IsRemoved reports whether a is a release the stack no longer declares.
func (a ReleaseAddr) IsRemoved() bool { return a.Removed.Name != "" }

// String is the address as printed: `release.api["eu"]`, or
// "removed:<namespace>/<name>" for a removed release.
func (a ReleaseAddr) String() string {
	if a.IsRemoved() {
		return "removed:" + a.Removed.Namespace + "/" + a.Removed.Name
	}
	return a.Instance.String()
}

// ObjectRef identifies one Kubernetes object. Namespace is empty for
// cluster-scoped objects. It has the fields of kube.Ref, so the planner and
// the run convert between them without copying field by field.
type ObjectRef struct {
	Group, Version, Kind string
	Namespace, Name      string
}

// APIVersion as written in manifests: "apps/v1", "v1".
func (r ObjectRef) APIVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// String is the identity used in every message about the object:
// "apps/v1 Deployment ns/name", "rbac.authorization.k8s.io/v1 ClusterRole name".
func (r ObjectRef) String() string {
	name := r.Name
	if r.Namespace != "" {
		name = r.Namespace + "/" + r.Name
	}
	return r.APIVersion() + " " + r.Kind + " " + name
}

// MarshalText makes a ref its printed identity in JSON (saved plans, the
// impact and policy inputs): "apps/v1 Deployment ns/name".
func (r ObjectRef) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText parses what MarshalText wrote.
func (r *ObjectRef) UnmarshalText(b []byte) error {
	ref, err := ParseObjectRef(string(b))
	if err != nil {
		return err
	}
	*r = ref
	return nil
}

// ParseObjectRef parses an object identity as printed:
// "apps/v1 Deployment ns/name", "v1 Namespace name".
func ParseObjectRef(s string) (ObjectRef, error) {
	f := strings.Fields(s)
	if len(f) != 3 {
		return ObjectRef{}, fmt.Errorf("%q is not an object reference (apiVersion kind [namespace/]name)", s)
	}
	g, v := ParseAPIVersion(f[0])
	ns, name, ok := strings.Cut(f[2], "/")
	if !ok {
		ns, name = "", f[2]
	}
	return ObjectRef{Group: g, Version: v, Kind: f[1], Namespace: ns, Name: name}, nil
}

// ParseAPIVersion splits an apiVersion into group and version.
func ParseAPIVersion(apiVersion string) (group, version string) {
	if g, v, ok := strings.Cut(apiVersion, "/"); ok {
		return g, v
	}
	return "", apiVersion
}
