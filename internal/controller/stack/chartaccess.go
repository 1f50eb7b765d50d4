package stack

import (
	"context"
	"fmt"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/run"
)

// initCharts fills the chart cache with the locked charts of the Stack's
// pulled stack (the lock file as pushed) and proves, with the Stack's own
// credentials, that it may read those the cache held already
// (res.Access): a chart of another namespace's pulls is refused before
// anything is planned, naming the chart and the Stack.
func initCharts(ctx context.Context, opts run.Options, res *source.Resolver) error {
	s, err := run.Open(ctx, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	return initSessionCharts(ctx, s, res)
}

// initSessionCharts is initCharts of a reconcile's opened stack.
func initSessionCharts(ctx context.Context, s *run.Session, res *source.Resolver) error {
	_, err := s.Init(ctx, run.InitRequest{Frozen: true, Resolver: res})
	return err
}

// chartAccess is res serving the Stack a locked chart of the shared chart
// cache only once the chart's repository served it to the Stack's
// credentials (source.Access): proofs are per namespace, credentials and
// digest, kept for source.DefaultProofTTL.
func (r *reconciler) chartAccess(st *v1alpha1.Stack, res *source.Resolver, creds string) *source.Resolver {
	c := *res
	c.Access = &source.Access{
		Tenant: st.Namespace, Credentials: creds, Who: fmt.Sprintf("Stack %s/%s", st.Namespace, st.Name), Proofs: r.chartProofs,
		Hint: func(err error) string { return credentialHint(st, err) },
	}
	return &c
}
