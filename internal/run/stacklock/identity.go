package stacklock

import (
	"strings"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
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

// ParseIdentity reads an Identity's String.
func ParseIdentity(s string) (Identity, bool) {
	stack, clusters, ok := strings.Cut(s, "@")
	if !ok || stack == "" {
		return Identity{}, false
	}
	id := Identity{Stack: stack}
	for _, c := range strings.Split(clusters, ",") {
		if c != "" {
			id.Clusters = append(id.Clusters, kube.ClusterID(c))
		}
	}
	return id, true
}
