package stacklock

import (
	"strings"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
)

// Identity is what a stack's lock is keyed by: the stack's ID (its name
// and environment), for a controller's Stack whose identity is scoped to
// its namespace that namespace too, and the clusters it uses. Two runs
// with one identity contend for one lock and write the same releases.
type Identity struct {
	// Namespace is the namespace of the controller's Stack the identity
	// is scoped to ("": none; the CLI's stacks, and Stacks acting as the
	// controller itself): Stacks of two namespaces with one stack ID then
	// have two identities and two locks.
	Namespace string
	Stack     string
	Clusters  []kube.ClusterID
}

// Key is what the stack's lock is named by (Name) and recorded as: the
// stack's ID, or NAMESPACE/ID for an identity scoped to a namespace (a
// stack ID never holds a "/").
func (id Identity) Key() string {
	if id.Namespace == "" {
		return id.Stack
	}
	return id.Namespace + "/" + id.Stack
}

// String is the identity as one line: [namespace/]stack@cluster,cluster.
func (id Identity) String() string {
	cs := make([]string, len(id.Clusters))
	for i, c := range id.Clusters {
		cs[i] = string(c)
	}
	return id.Key() + "@" + strings.Join(cs, ",")
}

// ParseIdentity reads an Identity's String.
func ParseIdentity(s string) (Identity, bool) {
	key, clusters, ok := strings.Cut(s, "@")
	if !ok || key == "" {
		return Identity{}, false
	}
	id := Identity{Stack: key}
	if ns, stack, scoped := strings.Cut(key, "/"); scoped {
		if ns == "" || stack == "" {
			return Identity{}, false
		}
		id.Namespace, id.Stack = ns, stack
	}
	for _, c := range strings.Split(clusters, ",") {
		if c != "" {
			id.Clusters = append(id.Clusters, kube.ClusterID(c))
		}
	}
	return id, true
}
