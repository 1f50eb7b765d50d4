package policy

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/sensitive"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/interpreter"
)

// Evaluate runs the policies against p and returns their violations, in
// policy order, then release and object order. Policies mentioning object
// are evaluated for every object (no-ops included) of every release that
// changes; releases planned unchanged from their records alone have no
// objects in the plan and are not evaluated object by object
// (--refresh=full plans them in full). Policies mentioning release (not
// object) are evaluated for every planned release; the others once.
//
// Messages and errors are masked with the plan's redactor. The plan is
// not changed: the caller stores the results (plan.Plan.PolicyResults).
func (s *Set) Evaluate(ctx context.Context, p *plan.Plan) ([]plan.PolicyResult, error) {
	if s.Len() == 0 {
		return nil, nil
	}
	red := p.Redactor()
	planVar := planValue(p)
	var byScope [3][]*compiled
	for _, c := range s.policies {
		byScope[c.scope] = append(byScope[c.scope], c)
	}
	results := make([][]plan.PolicyResult, len(s.policies))
	index := map[*compiled]int{}
	for i, c := range s.policies {
		index[c] = i
	}
	add := func(c *compiled, r plan.PolicyResult) {
		r.Policy = c.name
		r.Message = red.Text(r.Message)
		results[index[c]] = append(results[index[c]], r)
	}

	vars := map[string]any{varPlan: planVar, varRelease: nil, varObject: nil}
	for _, c := range byScope[ScopePlan] {
		if r, ok := c.eval(ctx, vars); !ok {
			add(c, r)
		}
	}
	for _, rc := range p.Releases {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(byScope[ScopeRelease]) == 0 && (len(byScope[ScopeObject]) == 0 || rc.Action == plan.ActionNoOp) {
			continue
		}
		relVar := releaseValue(rc, red)
		addr := rc.Addr.String()
		vars := map[string]any{varPlan: planVar, varRelease: relVar, varObject: nil}
		for _, c := range byScope[ScopeRelease] {
			if r, ok := c.eval(ctx, vars); !ok {
				r.Release = addr
				add(c, r)
			}
		}
		if rc.Action == plan.ActionNoOp {
			continue
		}
		for _, o := range rc.Objects {
			vars := map[string]any{varPlan: planVar, varRelease: relVar, varObject: objectValue(o)}
			for _, c := range byScope[ScopeObject] {
				if r, ok := c.eval(ctx, vars); !ok {
					r.Release, r.Object = addr, o.Ref.String()
					add(c, r)
				}
			}
		}
	}
	var out []plan.PolicyResult
	for _, rs := range results {
		out = append(out, rs...)
	}
	return out, nil
}

// eval evaluates the condition with vars; ok when it holds. A violation
// comes back with its level and message; an evaluation error is a deny
// whose message is the error.
func (c *compiled) eval(ctx context.Context, vars map[string]any) (plan.PolicyResult, bool) {
	act, err := interpreter.NewActivation(vars)
	if err != nil {
		return c.failed(err), false
	}
	out, _, err := c.cond.ContextEval(ctx, act)
	if err != nil {
		return c.failed(err), false
	}
	holds, isBool := out.(types.Bool)
	if !isBool {
		return c.failed(fmt.Errorf("the condition is a %s, not a bool", out.Type().TypeName())), false
	}
	if holds {
		return plan.PolicyResult{}, true
	}
	return plan.PolicyResult{Level: c.level, Message: c.messageFor(ctx, act)}, false
}

// messageFor is the violation's message: message_expression's value, else
// message, else a generic one.
func (c *compiled) messageFor(ctx context.Context, act interpreter.Activation) string {
	fallback := c.message
	if fallback == "" {
		fallback = fmt.Sprintf("policy %s does not hold", c.name)
	}
	if c.msg == nil {
		return fallback
	}
	out, _, err := c.msg.ContextEval(ctx, act)
	if err != nil {
		return fmt.Sprintf("%s (message_expression failed: %v)", fallback, err)
	}
	if s, ok := out.(types.String); ok {
		return string(s)
	}
	return fmt.Sprintf("%s (message_expression is a %s, not a string)", fallback, out.Type().TypeName())
}

func (c *compiled) failed(err error) plan.PolicyResult {
	return plan.PolicyResult{Level: plan.PolicyDeny, Message: fmt.Sprintf("policy %s failed to evaluate: %v", c.name, err)}
}

// The variables, as plain maps (CEL's default adapter reads them without
// copying).

func planValue(p *plan.Plan) map[string]any {
	s := p.Summary()
	return map[string]any{
		"stack":       p.Stack,
		"environment": p.Environment,
		"destroy":     p.Destroy,
		"summary": map[string]any{
			"install": s.Install, "upgrade": s.Upgrade, "uninstall": s.Uninstall,
			"unchanged": s.Unchanged, "drifted": s.Drifted, "refused": s.Refused,
		},
	}
}

func releaseValue(rc *plan.ReleaseChange, red *sensitive.Redactor) map[string]any {
	reasons := make([]any, len(rc.Reasons))
	for i, r := range rc.Reasons {
		reasons[i] = string(r.Kind)
	}
	// Releases proven unchanged from their records were not rendered:
	// their values are unknown here (null).
	var values any
	if rc.Saved != nil && rc.Saved.Rendered != nil && rc.Saved.Rendered.Values != nil && rc.Action != plan.ActionUninstall {
		values = plan.MaskValueTree(rc.Saved.Rendered.Values, red)
	}
	var before any
	if rc.ValuesBefore != nil {
		before = rc.ValuesBefore
	}
	labels := map[string]any{}
	for k, v := range rc.Labels {
		labels[k] = v
	}
	return map[string]any{
		"address":       rc.Addr.String(),
		"labels":        labels,
		"name":          rc.Name,
		"namespace":     rc.Namespace,
		"cluster":       rc.Cluster,
		"action":        string(rc.Action),
		"reasons":       reasons,
		"chart":         map[string]any{"before": chartValue(rc.Chart.Before), "after": chartValue(rc.Chart.After)},
		"values":        values,
		"values_before": before,
		"impact":        impactValue(rc.Impact),
	}
}

// impactValue is a release's impact as policies see it: the JSON fields
// of docs/plan-json.md (objects by their ref text), null when the release
// has none.
func impactValue(i *plan.Impact) any {
	if i.Empty() {
		return nil
	}
	b, err := json.Marshal(i)
	if err != nil {
		return nil
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil
	}
	return v
}

func chartValue(c *plan.ChartRef) any {
	if c == nil {
		return nil
	}
	return map[string]any{"name": c.Name, "version": c.Version, "app_version": c.AppVersion}
}

func objectValue(o *plan.ObjectChange) map[string]any {
	var changes []any
	if o.Diff != nil {
		changes = make([]any, 0, len(o.Diff.Changes))
		for _, c := range o.Diff.Changes {
			changes = append(changes, map[string]any{
				"path": c.Path, "op": string(c.Op), "before": c.Before, "after": c.After,
				"manager": c.Manager, "sensitive": c.Sensitive,
			})
		}
	}
	if changes == nil {
		changes = []any{}
	}
	return map[string]any{
		"ref":        o.Ref.String(),
		"apiVersion": o.Ref.APIVersion(),
		"group":      o.Ref.Group,
		"kind":       o.Ref.Kind,
		"namespace":  o.Ref.Namespace,
		"name":       o.Ref.Name,
		"action":     string(o.Action),
		"before":     mapOrNull(o.Before),
		"after":      mapOrNull(o.After),
		"changes":    changes,
	}
}

// mapOrNull keeps a nil object null in CEL (a nil map would be an empty
// map).
func mapOrNull(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}
