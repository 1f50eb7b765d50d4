package stack

import (
	"sync"

	"github.com/convoy-sh/convoy/internal/stack/artifact"
)

// pulledBy remembers which credentials were served which artifacts
// (repository and digest) by their registry, in this process. The cache
// of pulled stacks is keyed by digest alone and shared by every
// namespace's Stacks; a Stack is given a cached artifact only when its
// own credentials (its spec.sourceSecretRef's, or the controller's) have
// been served the artifact's manifest: a Stack of another namespace that
// could not have pulled it is refused as the registry refuses it. Safe
// for concurrent use.
type pulledBy struct {
	mu sync.Mutex
	m  map[pulledKey]struct{}
}

type pulledKey struct{ creds, repository, digest string }

// maxPulled bounds the entries remembered: past it they are forgotten,
// and each Stack's next fetch asks its registry again.
const maxPulled = 10000

// has says whether creds were served the artifact src names by digest
// (a reference by tag is always resolved by the registry).
func (p *pulledBy) has(creds, src string) bool {
	ref, err := artifact.ParseRef(src)
	if err != nil || ref.Digest == "" {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.m[pulledKey{creds, ref.Repository, ref.Digest}]
	return ok
}

// add records that creds were served ref's manifest.
func (p *pulledBy) add(creds string, ref artifact.Ref) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil || len(p.m) >= maxPulled {
		p.m = map[pulledKey]struct{}{}
	}
	p.m[pulledKey{creds, ref.Repository, ref.Digest}] = struct{}{}
}
