package controller

import (
	"sync"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/controller/pipeline"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	"k8s.io/apimachinery/pkg/types"
)

// A registry notifies a manifest's push before it moves the tag to it
// (distribution's handler puts the manifest, which notifies, then tags
// it): a reconcile begun on the notification can still read the tag's
// old digest. pushes remembers what was pushed, so that a Stack or
// Pipeline that has not seen it yet looks again pushRetry later, for at
// most pushSettle.
const (
	pushRetry  = pipeline.PushRetry
	pushSettle = 30 * time.Second
)

// pushes are the pushes the receiver was told of and the reconciles have
// not seen yet.
type pushes struct {
	mu  sync.Mutex
	seq uint64
	now func() time.Time
	// tags are the digests last pushed to each repository's tags
	// (repositoryKey + ":" + tag).
	tags map[string]pushedTag
	// pipelines are the Pipelines whose repository was pushed to since
	// their last listing of its tags.
	pipelines map[types.NamespacedName]pipelinePush
}

type pushedTag struct {
	digest string
	at     time.Time
}

// pipelinePush is the last push of a Pipeline's repository.
type pipelinePush struct {
	seq         uint64
	tag, digest string
	at          time.Time
}

func newPushes() *pushes {
	return &pushes{now: time.Now, tags: map[string]pushedTag{}, pipelines: map[types.NamespacedName]pipelinePush{}}
}

// pushedTag records a push of digest to a repository's tag.
func (p *pushes) pushedTag(repo, tag, digest string) {
	if tag == "" || digest == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tags[repo+":"+tag] = pushedTag{digest: digest, at: p.now()}
}

// pushedPipeline marks a Pipeline whose repository was pushed to.
func (p *pushes) pushedPipeline(key types.NamespacedName, tag, digest string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	p.pipelines[key] = pipelinePush{seq: p.seq, tag: tag, digest: digest, at: p.now()}
}

// awaited is the digest pushed to the tag a Stack's source names that the
// Stack has not fetched yet ("": none, or it has; a push older than
// pushSettle is forgotten).
func (p *pushes) awaited(st *v1alpha1.Stack) string {
	if p == nil {
		return ""
	}
	ref, err := artifact.ParseRef(st.Spec.Source)
	if err != nil || ref.Tag == "" || ref.Digest != "" {
		return ""
	}
	repo, err := repositoryKey(ref.Repository)
	if err != nil {
		return ""
	}
	k := repo + ":" + ref.Tag
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.tags[k]
	if !ok {
		return ""
	}
	fetched := ""
	if s := st.Status.Source; s != nil {
		fetched = s.Digest
	}
	if t.digest == fetched || p.now().Sub(t.at) > pushSettle {
		delete(p.tags, k)
		return ""
	}
	return t.digest
}

// pipeline is the push a Pipeline's listing has not seen yet.
func (p *pushes) pipeline(key types.NamespacedName) (pipelinePush, bool) {
	if p == nil {
		return pipelinePush{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.pipelines[key]
	if ok && p.now().Sub(m.at) > pushSettle {
		delete(p.pipelines, key)
		return pipelinePush{}, false
	}
	return m, ok
}

// seen clears a Pipeline's push that a listing has seen, unless a newer
// push came meanwhile.
func (p *pushes) seen(key types.NamespacedName, m pipelinePush) {
	if p == nil || m.seq == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pipelines[key].seq == m.seq {
		delete(p.pipelines, key)
	}
}

// sawPush says whether a listing of tags (nil: the Pipeline follows one
// tag, which resolved to digest) has seen the push m.
func (m pipelinePush) sawPush(follow string, tags []string, digest string) bool {
	switch {
	case m.tag == "":
		// Pushed by digest: no tag to wait for.
		return true
	case tags != nil:
		for _, t := range tags {
			if t == m.tag {
				return true
			}
		}
		return false
	case m.tag == follow:
		return digest == m.digest
	}
	return true
}

// pipelinePushMarks are the push marks as the Pipeline reconciler reads them
// (pipeline.Pushes).
type pipelinePushMarks struct{ p *pushes }

// Pipeline is the Pipeline's push mark and how a listing clears it.
func (pp pipelinePushMarks) Pipeline(key types.NamespacedName) (func(string, []string, string), bool) {
	m, ok := pp.p.pipeline(key)
	if !ok {
		return nil, false
	}
	return func(follow string, tags []string, digest string) {
		if m.sawPush(follow, tags, digest) {
			pp.p.seen(key, m)
		}
	}, true
}
