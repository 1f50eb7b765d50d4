package stack

import (
	"fmt"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source"
)

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
