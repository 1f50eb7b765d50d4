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
// changes, and for the hooks it runs; for a release that does not change,
// for the objects its deployed revision applied (plan.ObjectChange.Deployed,
// kept by plans of stacks with such policies), as no-ops. Releases
// rendered only at apply have no objects yet: apply evaluates them
// (EvaluateRelease). Policies mentioning release (not object) are
// evaluated for every planned release; the others once.
//
// Messages and errors are masked with the plan's redactor. The plan is
// not changed: the caller stores the results (plan.Plan.PolicyResults).
func (s *Set) Evaluate(ctx context.Context, p *plan.Plan) ([]plan.PolicyResult, error) {
	if s.Len() == 0 {
		return nil, nil
	}
	ev := s.evaluator(p, p.Redactor())
	vars := map[string]any{varPlan: ev.planVar, varRelease: nil, varObject: nil}
	for _, c := range ev.byScope[ScopePlan] {
		if r, ok := c.eval(ctx, vars); !ok {
			ev.add(c, r)
		}
	}
	for _, rc := range p.Releases {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ev.release(ctx, rc)
	}
	return ev.results(), nil
}

// EvaluateRelease runs the policies over releases and objects against one
// release of p as apply renders it (rc: its objects and hooks as they are
// now, its values known), masking with red. Apply calls it for the
// releases the plan could not render (plan.ReleaseChange.PoliciesAtApply).
func (s *Set) EvaluateRelease(ctx context.Context, p *plan.Plan, rc *plan.ReleaseChange, red *sensitive.Redactor) ([]plan.PolicyResult, error) {
	if s.Len() == 0 {
		return nil, nil
	}
	ev := s.evaluator(p, red)
	ev.release(ctx, rc)
	return ev.results(), ctx.Err()
}

// ReadsReleases reports whether any policy is evaluated per release or
// per object: such policies have something to say about a release
// rendered only at apply.
func (s *Set) ReadsReleases() bool {
	for _, c := range s.policiesOrNil() {
		if c.scope != ScopePlan {
			return true
		}
	}
	return false
}

// ReadsObjects reports whether any policy is evaluated per object.
func (s *Set) ReadsObjects() bool {
	for _, c := range s.policiesOrNil() {
		if c.scope == ScopeObject {
			return true
		}
	}
	return false
}

func (s *Set) policiesOrNil() []*compiled {
	if s == nil {
		return nil
	}
	return s.policies
}

// evaluator collects the violations of one evaluation, per policy.
type evaluator struct {
	red     *sensitive.Redactor
	planVar map[string]any
	byScope [3][]*compiled
	index   map[*compiled]int
	found   [][]plan.PolicyResult
}

func (s *Set) evaluator(p *plan.Plan, red *sensitive.Redactor) *evaluator {
	ev := &evaluator{red: red, planVar: planValue(p), index: map[*compiled]int{}, found: make([][]plan.PolicyResult, len(s.policies))}
	for i, c := range s.policies {
		ev.byScope[c.scope] = append(ev.byScope[c.scope], c)
		ev.index[c] = i
	}
	return ev
}

func (ev *evaluator) add(c *compiled, r plan.PolicyResult) {
	r.Policy = c.name
	r.Message = ev.red.Text(r.Message)
	ev.found[ev.index[c]] = append(ev.found[ev.index[c]], r)
}

func (ev *evaluator) results() []plan.PolicyResult {
	var out []plan.PolicyResult
	for _, rs := range ev.found {
		out = append(out, rs...)
	}
	return out
}

// release evaluates the policies over releases and objects for rc.
func (ev *evaluator) release(ctx context.Context, rc *plan.ReleaseChange) {
	objectPolicies := ev.byScope[ScopeObject]
	if len(ev.byScope[ScopeRelease]) == 0 && len(objectPolicies) == 0 {
		return
	}
	relVar := releaseValue(rc, ev.red)
	addr := rc.Addr.String()
	vars := map[string]any{varPlan: ev.planVar, varRelease: relVar, varObject: nil}
	for _, c := range ev.byScope[ScopeRelease] {
		if r, ok := c.eval(ctx, vars); !ok {
			r.Release = addr
			ev.add(c, r)
		}
	}
	if len(objectPolicies) == 0 || rc.Action == plan.ActionForget {
		return
	}
	for _, o := range objectsOf(rc) {
		vars := map[string]any{varPlan: ev.planVar, varRelease: relVar, varObject: o.value}
		for _, c := range objectPolicies {
			if r, ok := c.eval(ctx, vars); !ok {
				r.Release, r.Object, r.Hook = addr, o.ref, o.hook
				ev.add(c, r)
			}
		}
	}
}

// policyObject is one object a policy sees, and how results name it.
type policyObject struct {
	ref, hook string
	value     map[string]any
}

// objectsOf are the objects of rc that policies over objects see: those a
// changing release applies or deletes and the hooks it runs (each hook
// object once, with every event it runs for), or those the deployed
// revision of an unchanged release applied.
func objectsOf(rc *plan.ReleaseChange) []policyObject {
	var out []policyObject
	if rc.Action == plan.ActionNoOp {
		for _, o := range rc.Objects {
			if o.Deployed != nil {
				out = append(out, policyObject{ref: o.Ref.String(), value: objectValue(o, o.Deployed, o.Deployed, "")})
			}
		}
		return out
	}
	for _, o := range rc.Objects {
		out = append(out, policyObject{ref: o.Ref.String(), value: objectValue(o, o.Before, o.After, "")})
	}
	for _, h := range plan.HookObjects(rc.Hooks) {
		ch := &plan.ObjectChange{Ref: h.Ref, Action: plan.ObjectCreate}
		out = append(out, policyObject{ref: h.Ref.String(), hook: h.Events, value: objectValue(ch, nil, h.Object, h.Events)})
	}
	return out
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
		"kube_target":   rc.KubeTarget,
		"deprecations":  deprecationsValue(rc.Deprecations),
	}
}

// deprecationsValue are a release's deprecated and removed APIs as
// policies see them: the fields of docs/plan-json.md.
func deprecationsValue(ds []plan.Deprecation) []any {
	out := make([]any, len(ds))
	for i, d := range ds {
		out[i] = map[string]any{
			"ref": d.Ref.String(), "api_version": d.Ref.APIVersion(), "kind": d.Ref.Kind,
			"deprecated_in": d.DeprecatedIn, "removed_in": d.RemovedIn, "removed": d.Removed, "replacement": d.Replacement,
		}
	}
	return out
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

// objectValue is an object as policies see it: before and after as
// given, hook the events it runs for as a hook ("" for a release object).
func objectValue(o *plan.ObjectChange, before, after map[string]any, hook string) map[string]any {
	var changes []any
	if o.Diff != nil {
		changes = make([]any, 0, len(o.Diff.Changes))
		for _, c := range o.Diff.Changes {
			changes = append(changes, map[string]any{
				"path": c.Path, "op": string(c.Op), "before": c.Before, "after": c.After,
				"manager": c.Manager, "sensitive": c.Sensitive,
				"provenance": originsValue(c.Provenance), "provenance_joint": c.ProvenanceJoint,
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
		"before":     mapOrNull(before),
		"after":      mapOrNull(after),
		"changes":    changes,
		"hook":       hook,
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

// originsValue is a change's provenance as policies see it: the fields of
// docs/plan-json.md, every source an object (empty strings and zeros for
// what it does not name), and each origin's edits (plan.Origin.Edits:
// where a user changes it), so that "set only in this file" is one
// condition: p.edits.all(e, e.source.file == 'production.vars.hcl').
func originsValue(os []plan.Origin) []any {
	out := make([]any, len(os))
	for i, o := range os {
		edits := o.Edits()
		ev := make([]any, len(edits))
		for j, e := range edits {
			ev[j] = map[string]any{"input": e.Input, "kind": string(e.Kind), "source": sourceValue(e.Source)}
		}
		out[i] = map[string]any{
			"input": o.Input, "kind": string(o.Kind), "source": sourceValue(o.Source),
			"via": originsValue(o.Via), "overrode": originsValue(o.Overrode), "edits": ev,
		}
	}
	return out
}

func sourceValue(s *plan.Source) map[string]any {
	if s == nil {
		s = &plan.Source{}
	}
	return map[string]any{"file": s.File, "line": s.Line, "column": s.Column, "env": s.Env, "flag": s.Flag}
}
