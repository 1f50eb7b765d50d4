package controller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/run"
)

// maxGateOutput bounds a failed gate's output in the status.
const maxGateOutput = 4000

// gateResult is one gate's verdict on one Stack.
type gateResult = gateVerdict

// stageGate evaluates gate j of stage i on every Stack of the stage, in
// order: the first Stack it fails on fails it.
func (r *pipelineReconciler) stageGate(ctx context.Context, p *v1alpha1.Pipeline, i, j int, stacks map[string]*v1alpha1.Stack) gateVerdict {
	stage := p.Spec.Stages[i]
	for _, name := range stage.Stacks {
		st := stacks[name]
		if st == nil {
			return gateVerdict{Failed: true, Output: fmt.Sprintf("Stack %s not found", name)}
		}
		v := r.evaluateGate(ctx, st, stage.Gates[j])
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
func (r *pipelineReconciler) evaluateGate(ctx context.Context, st *v1alpha1.Stack, g v1alpha1.Gate) gateResult {
	switch {
	case g.Test != nil:
		return r.testGate(ctx, st)
	case g.CEL != "":
		return gateResult{Failed: true, Output: "cel gates are not available in this build of convoy: the gate fails closed"}
	case g.Prometheus != nil:
		return gateResult{Failed: true, Output: "prometheus gates are not available in this build of convoy: the gate fails closed"}
	}
	return gateResult{Failed: true, Output: "a gate is one of test, cel and prometheus"}
}

// testGate runs the test hooks of the Stack's releases (convoy test) with
// the run options the Stack's reconciles use. Its output names the failed
// tests, with their pods' logs.
func (r *pipelineReconciler) testGate(ctx context.Context, st *v1alpha1.Stack) gateResult {
	sr := r.stacks
	stacksDir, chartsDir, tmpDir := sr.dirs()
	for _, d := range []string{stacksDir, chartsDir, tmpDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return gateResult{Failed: true, Output: err.Error()}
		}
	}
	res, drop, err := sr.sourceResolver(ctx, st, tmpDir)
	if err != nil {
		return gateResult{Failed: true, Output: err.Error()}
	}
	defer drop()
	reg := sr.registry
	reg.Resolver = res
	f, release, err := sr.fetch(ctx, reg, stacksDir, st.Spec.Source)
	if err != nil {
		return gateResult{Failed: true, Output: "spec.source: " + err.Error()}
	}
	defer release()
	cfg, diags := config.LoadDir(f.Dir)
	if diags.HasErrors() {
		return gateResult{Failed: true, Output: diagText(diags, cfg)}
	}
	in, err := readInputs(ctx, sr.reader, st, f.Digest, cfg.Variables, tmpDir)
	if err != nil {
		return gateResult{Failed: true, Output: err.Error()}
	}
	defer in.cleanup()
	opts := sr.runOptions(st, f, in)
	opts.Announce = nil
	tested, err := run.Test(ctx, opts, run.TestRequest{})
	var le *run.LockedError
	if errors.As(err, &le) {
		// The Stack's own reconcile holds the lock: the tests run later.
		return gateResult{Pending: true}
	}
	if err != nil {
		return gateResult{Failed: true, Output: message(err, nil, in)}
	}
	var b strings.Builder
	for _, t := range tested {
		if !t.Failed() {
			continue
		}
		inst := t.Instance
		if t.Err != nil {
			fmt.Fprintf(&b, "%s (%s/%s): %s\n", inst.Addr, inst.Namespace, inst.Name, message(t.Err, nil, in))
			continue
		}
		var failed []string
		for _, h := range t.Result.Hooks {
			if h.LastRun.Phase != "" && h.LastRun.Phase != "Succeeded" {
				failed = append(failed, h.Name)
			}
		}
		fmt.Fprintf(&b, "%s (%s/%s): failed tests %s: %s\n", inst.Addr, inst.Namespace, inst.Name, strings.Join(failed, ", "), in.redact(t.Result.Err.Error()))
		for _, l := range t.Result.Logs {
			if l.Err != nil {
				fmt.Fprintf(&b, "Logs of pod %s, container %s: %v\n", l.Pod, l.Container, l.Err)
				continue
			}
			fmt.Fprintf(&b, "Logs of pod %s, container %s:\n%s\n", l.Pod, l.Container, in.redact(strings.TrimRight(l.Log, "\n")))
		}
	}
	if b.Len() == 0 {
		return gateResult{}
	}
	return gateResult{Failed: true, Output: capOutput(sr.stripCachePaths(strings.TrimSpace(b.String())))}
}

func capOutput(s string) string {
	if len(s) <= maxGateOutput {
		return s
	}
	return s[:maxGateOutput] + "… (cut)"
}
