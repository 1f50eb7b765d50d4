package pipeline

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The stage machine is a pure function from what a Pipeline's reconcile
// observed (the newest matching digest, the stages' previous phases, the
// Stacks' pins and readiness, the gates' verdicts) to what it should do
// (pin Stacks) and record (the stages' phases, notices). The reconciler
// observes and acts; the tests drive this function alone.

// gateRecheck is how often the gates are evaluated again during a bake
// (and once more when it ends).
const gateRecheck = 30 * time.Second

// stackView is what the stage machine knows of one Stack.
type stackView struct {
	// Pinned is the digest of the Stack's spec.source ("": none).
	Pinned string
	// Ready: Ready on Pinned, the plan of its current generation applied.
	Ready bool
	// Failed says why the Stack failed on Pinned ("": it did not).
	Failed string
	// NotReady is its Ready condition's reason and message.
	NotReady string
}

// gateVerdict is one gate's evaluation.
type gateVerdict struct {
	// Pending: no verdict yet (the gate runs, or the stack is busy);
	// check again soon.
	Pending bool
	// Running is when the gate's run began (zero: not running).
	Running time.Time
	// Failed, with Output saying why.
	Failed bool
	Output string
}

// machineInput is what a reconcile observed.
type machineInput struct {
	// Namespace is the Pipeline's: Stacks are keyed by pipelineStackKey in it.
	Namespace string
	// Name is the Pipeline's (the command a waiting stage's message gives).
	Name string
	Now  time.Time
	// Latest is the newest matching digest ("": none yet).
	Latest string
	Spec   *v1alpha1.PipelineSpec
	// Stages are the phases recorded last (matched to the spec by name).
	Stages []v1alpha1.StageStatus
	// Stacks are keyed by pipelineStackKey.
	Stacks map[string]stackView
	// Gate is the verdict of gate j of stage i on a digest, as of since
	// or later; called only for a baking stage whose Stacks are all
	// Ready on it.
	Gate func(stage, gate int, digest string, since time.Time) gateVerdict
}

// stageNotice is a notification of a stage's event, sent once per stage
// and digest.
type stageNotice struct {
	Event   v1alpha1.NotificationEvent
	Stage   string
	Digest  string
	Message string
}

// machineOutput is what to do and record.
type machineOutput struct {
	Stages []v1alpha1.StageStatus
	// Pins are the Stacks to pin (by pipelineStackKey), to the digest.
	Pins map[string]string
	// Requeue is when to look again for the bake or the gates (0: when a
	// Stack or the tags change).
	Requeue time.Duration
	Notices []stageNotice
}

// stepStages advances every stage as far as the observations allow, in
// order, so that a digest a stage verifies reaches the next stage in the
// same step.
func stepStages(in machineInput) machineOutput {
	out := machineOutput{Pins: map[string]string{}}
	prev := map[string]v1alpha1.StageStatus{}
	for _, s := range in.Stages {
		prev[s.Name] = s
	}
	now := metav1.NewTime(in.Now)
	m := &machine{in: in, out: &out, now: now}
	for i, stage := range in.Spec.Stages {
		s, ok := prev[stage.Name]
		if !ok || s.Phase == "" {
			s = v1alpha1.StageStatus{Name: stage.Name, Phase: v1alpha1.PhaseWaiting, Since: &now, Message: "no digest has reached this stage"}
		}
		// The digest this stage may receive: the newest for the first
		// stage, else what the previous stage verified, and only while it
		// is at rest on it (a failed or busy stage halts the pipeline).
		candidate := in.Latest
		if i > 0 {
			candidate = ""
			if p := out.Stages[i-1]; p.Phase == v1alpha1.PhaseVerified {
				candidate = p.Verified
			}
		}
		if candidate != "" && candidate != s.Digest {
			s = m.start(stage, s, candidate)
		}
		if s.Phase == v1alpha1.PhaseAwaitingApproval {
			m.awaitApproval(stage, &s)
		}
		if s.Phase == v1alpha1.PhasePromoting {
			m.promote(stage, &s)
		}
		if s.Phase == v1alpha1.PhaseBaking {
			m.bake(i, stage, &s)
		}
		if s.Phase == v1alpha1.PhaseFailed && stage.Rollback && s.Verified != "" && s.Verified != s.Digest {
			for _, name := range stageTargets(in.Namespace, stage) {
				if v := in.Stacks[name]; v.Pinned != s.Verified {
					out.Pins[name] = s.Verified
				}
			}
		}
		out.Stages = append(out.Stages, s)
	}
	return out
}

type machine struct {
	in  machineInput
	out *machineOutput
	now metav1.Time
}

func (m *machine) requeue(d time.Duration) {
	d = max(d, time.Second)
	if m.out.Requeue == 0 || d < m.out.Requeue {
		m.out.Requeue = d
	}
}

func (m *machine) phase(s *v1alpha1.StageStatus, p v1alpha1.StagePhase, msg string) {
	s.Phase, s.Message, s.Since = p, msg, &m.now
}

// start moves a stage to a new digest: it waits for approval, or is
// promoted.
func (m *machine) start(stage v1alpha1.Stage, s v1alpha1.StageStatus, digest string) v1alpha1.StageStatus {
	s.Digest, s.FailedGate, s.GatesChecked, s.Gates = digest, nil, nil, nil
	m.phase(&s, v1alpha1.PhasePromoting, "pinning the Stacks to "+digest)
	if stage.Approval == v1alpha1.ApprovalManual {
		m.phase(&s, v1alpha1.PhaseAwaitingApproval, "")
	}
	return s
}

func (m *machine) awaitApproval(stage v1alpha1.Stage, s *v1alpha1.StageStatus) {
	if stage.Approval != v1alpha1.ApprovalManual {
		m.phase(s, v1alpha1.PhasePromoting, "approved: pinning the Stacks to "+s.Digest)
		return
	}
	if a, ok := m.in.Spec.ApprovalFor(stage.Name, s.Digest); ok {
		by := ""
		if a.ApprovedBy != "" {
			by = " by " + a.ApprovedBy
		}
		m.phase(s, v1alpha1.PhasePromoting, "approved"+by+": pinning the Stacks to "+s.Digest)
		return
	}
	s.Message = fmt.Sprintf("digest %s waits for approval: convoy promote %s %s -n %s --digest %s", s.Digest, m.in.Name, stage.Name, m.in.Namespace, s.Digest)
	m.out.Notices = append(m.out.Notices, stageNotice{v1alpha1.EventApprovalRequired, stage.Name, s.Digest, s.Message})
}

// promote pins the stage's Stacks in waves of maxParallel: a Stack is in
// progress from its pin until it is Ready on the digest.
func (m *machine) promote(stage v1alpha1.Stage, s *v1alpha1.StageStatus) {
	d := s.Digest
	targets := stageTargets(m.in.Namespace, stage)
	limit := len(targets)
	if stage.MaxParallel != nil && *stage.MaxParallel >= 1 {
		limit = int(*stage.MaxParallel)
	}
	ready, busy := 0, 0
	var waiting []string
	for _, name := range targets {
		v := m.in.Stacks[name]
		switch {
		case v.Pinned != d:
		case v.Failed != "":
			m.fail(stage, s, fmt.Sprintf("%s failed on %s: %s", targetText(name), d, v.Failed), nil)
			return
		case v.Ready:
			ready++
		default:
			busy++
			if isStackSetKey(name) {
				waiting = append(waiting, fmt.Sprintf("%s: %s", targetText(name), v.NotReady))
			}
		}
	}
	for _, name := range targets {
		if busy >= limit {
			break
		}
		if m.in.Stacks[name].Pinned != d {
			m.out.Pins[name] = d
			busy++
		}
	}
	if ready < len(targets) {
		s.Message = fmt.Sprintf("%d of %d %s Ready on %s", ready, len(targets), targetsNoun(stage), d)
		if len(waiting) > 0 {
			s.Message += "; " + strings.Join(waiting, "; ")
		}
		return
	}
	msg := "every " + targetNoun(stage) + " is Ready on " + d
	if stage.Bake != nil && stage.Bake.Duration > 0 {
		msg += ": baking for " + stage.Bake.Duration.String()
	}
	m.phase(s, v1alpha1.PhaseBaking, msg)
}

// bake checks that the Stacks stay Ready and the gates hold until the
// bake time has passed.
func (m *machine) bake(i int, stage v1alpha1.Stage, s *v1alpha1.StageStatus) {
	d := s.Digest
	for _, name := range stageTargets(m.in.Namespace, stage) {
		if v := m.in.Stacks[name]; v.Pinned != d || !v.Ready {
			m.fail(stage, s, fmt.Sprintf("%s stopped being Ready on %s during the bake: %s", targetText(name), d, v.NotReady), nil)
			return
		}
	}
	var bake time.Duration
	if stage.Bake != nil {
		bake = stage.Bake.Duration
	}
	elapsed := m.in.Now.Sub(s.Since.Time)
	over := elapsed >= bake
	due := over || s.GatesChecked == nil || m.in.Now.Sub(s.GatesChecked.Time) >= gateRecheck
	if len(stage.Gates) > 0 && due {
		// The verdicts that count: for the last check, of runs that
		// ended once the bake was over; for a recheck, once it was due.
		since := s.Since.Time
		switch {
		case over:
			since = s.Since.Add(bake)
		case s.GatesChecked != nil:
			since = s.GatesChecked.Add(gateRecheck)
		}
		// Every gate is asked (they run side by side); the first failed
		// in the spec's order fails the stage.
		verdicts := make([]gateVerdict, len(stage.Gates))
		for j := range stage.Gates {
			verdicts[j] = m.in.Gate(i, j, d, since)
		}
		s.Gates = m.gateResults(i, stage, verdicts)
		for j, v := range verdicts {
			if v.Failed {
				m.fail(stage, s, fmt.Sprintf("gate %s failed on %s", gateName(i, j, stage.Gates[j]), d),
					&v1alpha1.FailedGate{Gate: gateName(i, j, stage.Gates[j]), Output: v.Output})
				return
			}
		}
		for j, v := range verdicts {
			if !v.Pending {
				continue
			}
			s.Message = fmt.Sprintf("every %s is Ready on %s: gate %s waits to run", targetNoun(stage), d, gateName(i, j, stage.Gates[j]))
			if !v.Running.IsZero() {
				s.Message = fmt.Sprintf("every %s is Ready on %s: gate %s running since %s", targetNoun(stage), d, gateName(i, j, stage.Gates[j]), v.Running.UTC().Format(time.RFC3339))
			}
			m.requeue(5 * time.Second)
			return
		}
		s.GatesChecked = &m.now
		s.Message = fmt.Sprintf("every %s is Ready on %s: baking for %s, the gates passed at %s", targetNoun(stage), d, bake, m.now.UTC().Format(time.RFC3339))
	}
	if !over {
		next := bake - elapsed
		if len(stage.Gates) > 0 {
			next = min(next, gateRecheck)
		}
		m.requeue(next)
		return
	}
	s.Verified, s.GatesChecked = d, nil
	msg := "verified " + d
	if bake > 0 {
		msg += fmt.Sprintf(" (Ready and the gates holding for %s)", bake)
	}
	m.phase(s, v1alpha1.PhaseVerified, msg)
	m.out.Notices = append(m.out.Notices, stageNotice{v1alpha1.EventStageVerified, stage.Name, d, msg})
}

func (m *machine) fail(stage v1alpha1.Stage, s *v1alpha1.StageStatus, msg string, gate *v1alpha1.FailedGate) {
	if stage.Rollback && s.Verified != "" {
		msg += "; rolled back to " + s.Verified
	}
	s.FailedGate, s.GatesChecked = gate, nil
	m.phase(s, v1alpha1.PhaseFailed, msg)
	m.out.Notices = append(m.out.Notices, stageNotice{v1alpha1.EventStageFailed, stage.Name, s.Digest, msg})
}

// gateResults are the stage's gates' verdicts as the status shows them.
func (m *machine) gateResults(i int, stage v1alpha1.Stage, verdicts []gateVerdict) []v1alpha1.GateResult {
	out := make([]v1alpha1.GateResult, len(verdicts))
	for j, v := range verdicts {
		r := v1alpha1.GateResult{Gate: gateName(i, j, stage.Gates[j]), Result: v1alpha1.GatePassed, Time: &m.now}
		switch {
		case v.Failed:
			r.Result, r.Output = v1alpha1.GateFailed, truncateOutput(v.Output)
		case v.Pending && !v.Running.IsZero():
			at := metav1.NewTime(v.Running)
			r.Result, r.Time = v1alpha1.GateRunning, &at
		case v.Pending:
			r.Result, r.Time = v1alpha1.GateWaiting, nil
		}
		out[j] = r
	}
	return out
}

// truncateOutput keeps the end of a gate's output (where a failing test's
// log says why) within MaxGateOutput bytes.
func truncateOutput(s string) string {
	if len(s) <= v1alpha1.MaxGateOutput {
		return s
	}
	cut := s[len(s)-v1alpha1.MaxGateOutput+len("…"):]
	for len(cut) > 0 && !utf8.RuneStart(cut[0]) {
		cut = cut[1:]
	}
	return "…" + cut
}

// pipelineStackKey names a stage's Stack in a Pipeline of namespace ns: its
// name when it is of ns, else namespace/name. It keys the machine's and
// the reconcile's maps and names the Stack in messages.
func pipelineStackKey(ns string, ref v1alpha1.PipelineStackRef) string {
	k := ref.In(ns)
	if k.Namespace == ns {
		return k.Name
	}
	return k.String()
}

// stackSetKeyPrefix starts the key of a stage's StackSet: "StackSet
// NAME" (no Stack name has a space). It names the StackSet in messages.
const stackSetKeyPrefix = "StackSet "

// stageTargets are the keys of what a stage pins, in order: its Stacks
// (pipelineStackKey), then its StackSet (of the Pipeline's namespace:
// another is refused before the stage machine runs).
func stageTargets(ns string, stage v1alpha1.Stage) []string {
	out := make([]string, 0, len(stage.Stacks)+1)
	for _, ref := range stage.Stacks {
		out = append(out, pipelineStackKey(ns, ref))
	}
	if ref := stage.StackSet; ref != nil {
		out = append(out, stackSetKey(ref.Name))
	}
	return out
}

// stackSetKey is the key of the StackSet name of the Pipeline's namespace.
func stackSetKey(name string) string { return stackSetKeyPrefix + name }

func isStackSetKey(key string) bool { return strings.HasPrefix(key, stackSetKeyPrefix) }

// targetText names a target in a message: "Stack NAME", "StackSet NAME".
func targetText(key string) string {
	if isStackSetKey(key) {
		return key
	}
	return "Stack " + key
}

// targetNoun and targetsNoun say what a stage pins: Stack(s), or
// StackSet (the only target), or target(s) (both).
func targetNoun(stage v1alpha1.Stage) string {
	switch {
	case stage.StackSet == nil:
		return "Stack"
	case len(stage.Stacks) == 0:
		return "StackSet"
	}
	return "Stack and StackSet"
}

func targetsNoun(stage v1alpha1.Stage) string {
	switch {
	case stage.StackSet == nil:
		return "Stacks"
	case len(stage.Stacks) == 0:
		return "StackSet"
	}
	return "Stacks and StackSets"
}

// gateName is where a gate is in the spec, with its kind.
func gateName(i, j int, g v1alpha1.Gate) string {
	kind := "test"
	switch {
	case g.CEL != "":
		kind = "cel"
	case g.Prometheus != nil:
		kind = "prometheus"
	}
	return fmt.Sprintf("spec.stages[%d].gates[%d] (%s)", i, j, kind)
}
