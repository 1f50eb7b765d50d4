package provenance

import (
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/hashicorp/hcl/v2"
)

// Identity inputs: what a release is rendered as besides its values and
// its chart's files — its Helm name (.Release.Name), its namespace
// (.Release.Namespace) and its chart's name and version (.Chart). A
// change of them (a moved block renaming the release, a new chart
// version) changes fields that no values leaf sets: labels naming the
// instance, `helm.sh/chart`. They are named where the stack says them.

// Where says where an identity input of the release instance inst is
// written: what (plan.OriginReleaseName, plan.OriginNamespace,
// plan.OriginChart) names the attribute of its release block (`name`,
// `namespace`, `chart` and `version`); moved, when not empty, is the
// range of the moved block that renames it, which names its Helm name
// rather than the block's. nil when the stack's source is not at hand.
func Where(st *config.Stack, inst *config.ReleaseInstance, what plan.OriginKind, moved hcl.Range) *plan.Source {
	b := newBuilder(st, inst)
	if what == plan.OriginReleaseName && moved.Filename != "" {
		return b.source(moved)
	}
	var expr hcl.Expression
	if b.blk != nil {
		switch what {
		case plan.OriginReleaseName:
			expr = b.blk.ReleaseName
		case plan.OriginNamespace:
			expr = b.blk.Namespace
		case plan.OriginChart:
			expr = b.blk.Version
			if expr == nil || expr.Range().Filename == "" {
				expr = b.blk.Chart
			}
		}
	}
	if expr != nil && expr.Range().Filename != "" && !isEmptyExpr(expr) {
		return b.source(expr.Range())
	}
	if moved.Filename != "" {
		return b.source(moved)
	}
	return b.source(inst.DeclRange)
}

// isEmptyExpr: an attribute the block leaves out (hcl's empty expression
// spans nothing).
func isEmptyExpr(e hcl.Expression) bool {
	r := e.Range()
	return r.Start == r.End
}
