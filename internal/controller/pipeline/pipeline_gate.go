package pipeline

import (
	"context"
	"errors"
	"fmt"
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"strings"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/run/gate"
)

// maxGateOutput bounds a failed gate's output in the status.
const maxGateOutput = 4000

// gateResult is one gate's verdict on one Stack.
type gateResult = gateVerdict

// stageGate evaluates gate j of stage i. A prometheus gate is one query
// for the stage; test and cel gates are evaluated on every Stack of the
// stage, in order: the first Stack one fails on fails it.
func (r *Reconciler) stageGate(ctx context.Context, p *v1alpha1.Pipeline, i, j int, stacks map[string]*v1alpha1.Stack) gateVerdict {
	stage := p.Spec.Stages[i]
	g := stage.Gates[j]
	if g.Prometheus != nil {
		return prometheusGate(ctx, g.Prometheus)
	}
	for _, ref := range stage.Stacks {
		name := pipelineStackKey(p.Namespace, ref)
		st := stacks[name]
		if st == nil {
			return gateVerdict{Failed: true, Output: fmt.Sprintf("Stack %s not found", name)}
		}
		v := r.evaluateGate(ctx, st, g)
		if v.Failed {
			v.Output = capOutput(fmt.Sprintf("Stack %s: %s", name, v.Output))
		}
		if v.Failed || v.Pending {
			return v
		}
	}
	return gateVerdict{}
}

// evaluateGate is the one place a gate is evaluated on a Stack. A gate
// that cannot be evaluated fails (closed).
func (r *Reconciler) evaluateGate(ctx context.Context, st *v1alpha1.Stack, g v1alpha1.Gate) gateResult {
	switch {
	case g.Test != nil:
		return r.testGate(ctx, st)
	case g.CEL != "":
		return r.celGate(ctx, st, g.CEL)
	case g.Prometheus != nil:
		return prometheusGate(ctx, g.Prometheus)
	}
	return gateResult{Failed: true, Output: "a gate is one of test, cel and prometheus"}
}

// prometheusGate runs the gate's query (internal/run/gate: every sample at
// most max; no data, an error or an address that does not answer fail).
func prometheusGate(ctx context.Context, g *v1alpha1.PrometheusGate) gateResult {
	res := gate.EvalPrometheus(ctx, gate.Prometheus{Address: g.Address, Query: g.Query, Max: g.Max})
	return verdictOf(res)
}

func verdictOf(res gate.Result) gateResult {
	if res.Passed {
		return gateResult{}
	}
	out := res.Output
	if res.Err != nil && !strings.Contains(out, res.Err.Error()) {
		out = strings.TrimSpace(out + ": " + res.Err.Error())
	}
	return gateResult{Failed: true, Output: capOutput(out)}
}

// celGate evaluates the expression over the live objects of the Stack's
// deployed revisions (run.Session.Objects; Secrets without their values). A
// release without a deployed revision, or an object of one that is gone,
// fails the gate, named.
func (r *Reconciler) celGate(ctx context.Context, st *v1alpha1.Stack, expr string) gateResult {
	c, err := gate.CompileCEL(expr)
	if err != nil {
		return gateResult{Failed: true, Output: err.Error()}
	}
	return r.withStackRun(ctx, st, func(sr *StackRun) gateResult {
		objs, err := sr.Session.Objects(ctx)
		if err != nil {
			return gateResult{Failed: true, Output: capOutput(r.stacks.StripCachePaths(sr.Message(err)))}
		}
		return verdictOf(c.Eval(ctx, gate.ObjectMaps(objs)))
	})
}

// withStackRun opens the Stack as its reconciles do (its source fetched,
// its inputs read), and calls f with it. A gate that cannot open it
// fails, saying why.
func (r *Reconciler) withStackRun(ctx context.Context, st *v1alpha1.Stack, f func(*StackRun) gateResult) gateResult {
	sr, err := r.stacks.Open(ctx, st)
	if err != nil {
		return gateResult{Failed: true, Output: err.Error()}
	}
	defer sr.Close()
	return f(sr)
}

// testGate runs the test hooks of the Stack's releases (convoy test) with
// the run options the Stack's reconciles use. Its output names the failed
// tests, with their pods' logs.
func (r *Reconciler) testGate(ctx context.Context, st *v1alpha1.Stack) gateResult {
	return r.withStackRun(ctx, st, func(sr *StackRun) gateResult {
		return r.testOutcome(ctx, sr)
	})
}

func (r *Reconciler) testOutcome(ctx context.Context, sr *StackRun) gateResult {
	tested, err := sr.Session.Test(ctx, run.TestRequest{})
	var le *stacklock.HeldError
	if errors.As(err, &le) {
		// The Stack's own reconcile holds the lock: the tests run later.
		return gateResult{Pending: true}
	}
	if err != nil {
		return gateResult{Failed: true, Output: sr.Message(err)}
	}
	var b strings.Builder
	for _, t := range tested {
		if !t.Failed() {
			continue
		}
		inst := t.Instance
		if t.Err != nil {
			fmt.Fprintf(&b, "%s (%s/%s): %s\n", inst.Addr, inst.Namespace, inst.Name, sr.Message(t.Err))
			continue
		}
		var failed []string
		for _, h := range t.Result.Hooks {
			if h.LastRun.Phase != "" && h.LastRun.Phase != "Succeeded" {
				failed = append(failed, h.Name)
			}
		}
		fmt.Fprintf(&b, "%s (%s/%s): failed tests %s: %s\n", inst.Addr, inst.Namespace, inst.Name, strings.Join(failed, ", "), sr.Redact(t.Result.Err.Error()))
		for _, l := range t.Result.Logs {
			if l.Err != nil {
				fmt.Fprintf(&b, "Logs of pod %s, container %s: %v\n", l.Pod, l.Container, l.Err)
				continue
			}
			fmt.Fprintf(&b, "Logs of pod %s, container %s:\n%s\n", l.Pod, l.Container, sr.Redact(strings.TrimRight(l.Log, "\n")))
		}
	}
	if b.Len() == 0 {
		return gateResult{}
	}
	return gateResult{Failed: true, Output: capOutput(r.stacks.StripCachePaths(strings.TrimSpace(b.String())))}
}

func capOutput(s string) string {
	if len(s) <= maxGateOutput {
		return s
	}
	return s[:maxGateOutput] + "… (cut)"
}
