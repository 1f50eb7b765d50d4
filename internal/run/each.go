package run

import (
	"context"
	"sync"
)

// forEach calls fn(i) for i in [0, n), at most limit at once; it stops
// starting calls once ctx is done and returns ctx's error then.
func forEach(ctx context.Context, limit, n int, fn func(i int)) error {
	sem := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		}
		wg.Go(func() {
			defer func() { <-sem }()
			fn(i)
		})
	}
	wg.Wait()
	return ctx.Err()
}
