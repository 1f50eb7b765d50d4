package stack

import (
	"context"

	"github.com/convoy-sh/convoy/internal/stack/artifact"
)

// fetch pulls the Stack's source and holds it (and its charts) in the
// cache until release. A digest the cache holds is served to creds (the
// credentials reg pulls with, sourceResolver's) only once the registry
// has served them its manifest: the cache is shared by every namespace's
// Stacks.
func (r *reconciler) fetch(ctx context.Context, reg artifact.Registry, creds, stacksDir, src string) (f *artifact.Fetched, release func(), err error) {
	reg.Recheck = !r.pulled.has(creds, src)
	f, err = artifact.Fetch(ctx, reg, stacksDir, src)
	if err != nil {
		return nil, nil, err
	}
	r.pulled.add(creds, f.Ref)
	release, ok := r.cache.Hold(f)
	if !ok {
		// Evicted between the pull and the hold: pull it again, held now.
		if f, err = artifact.Fetch(ctx, reg, stacksDir, src); err != nil {
			release()
			return nil, nil, err
		}
	}
	return f, release, nil
}
