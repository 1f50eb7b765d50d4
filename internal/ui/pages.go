package ui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/run"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// stackRow is a Stack as the list shows it.
type stackRow struct {
	Namespace, Name string
	State           string // ready, reconciling, stalled, not-ready, suspended
	Reason, Message string
	Summary         string
	Approval        string
	Drifted         int
	LastApplied     string
	LastAppliedAt   string
	LastAppliedBy   string
	Source          string
	Labels          map[string]string
	// StackSet is the StackSet that generated the Stack ("": none).
	StackSet string
}

func (s *Server) rowOf(st *v1alpha1.Stack) stackRow {
	row := stackRow{Namespace: st.Namespace, Name: st.Name, Source: st.Spec.Source, Labels: st.Labels, StackSet: st.Labels[v1alpha1.StackSetLabel]}
	ready := meta.FindStatusCondition(st.Status.Conditions, "Ready")
	switch {
	case st.Spec.Suspend:
		row.State = "suspended"
	case meta.IsStatusConditionTrue(st.Status.Conditions, "Stalled"):
		row.State = "stalled"
		c := meta.FindStatusCondition(st.Status.Conditions, "Stalled")
		row.Reason, row.Message = c.Reason, c.Message
	case meta.IsStatusConditionTrue(st.Status.Conditions, "Reconciling"):
		row.State = "reconciling"
		c := meta.FindStatusCondition(st.Status.Conditions, "Reconciling")
		row.Reason, row.Message = c.Reason, c.Message
	case ready != nil && ready.Status == metav1.ConditionTrue:
		row.State = "ready"
	case ready != nil:
		row.State = "not-ready"
	default:
		row.State = "reconciling"
		row.Message = "not reconciled yet"
	}
	if ready != nil && row.Reason == "" {
		row.Reason, row.Message = ready.Reason, ready.Message
	}
	if p := st.Status.Plan; p != nil {
		row.Summary = p.Summary
		row.Drifted = p.Drifted
	}
	row.Approval = approvalState(st)
	if d := st.Status.LastAppliedPlan; d != "" {
		row.LastApplied = trimDigest(d)
		if a := st.Status.LastAppliedApproval; a != nil && a.Digest == d {
			row.LastAppliedBy = strings.Join(a.ApprovedBy, ", ")
		}
		if ready != nil && ready.Reason == "Applied" {
			row.LastAppliedAt = ready.LastTransitionTime.UTC().Format(time.RFC3339)
		}
	}
	return row
}

// approvalState says where the Stack's current plan stands: auto, or who
// approved it and how many approvals it still needs.
func approvalState(st *v1alpha1.Stack) string {
	p := st.Status.Plan
	if p == nil || !p.HasChanges {
		return string(cmp.Or(st.Spec.Approval, v1alpha1.ApprovalAuto))
	}
	if st.Spec.Approval != v1alpha1.ApprovalManual && len(p.DeniedBy) == 0 {
		return "auto"
	}
	a, ok := st.Spec.ApprovalOf(p.Digest)
	by := ""
	if len(a.ApprovedBy) > 0 {
		by = " by " + strings.Join(a.ApprovedBy, ", ")
	}
	switch {
	case ok && st.Status.LastAppliedPlan == p.Digest:
		return "approved" + by + ", applied"
	case ok:
		return "approved" + by
	case len(a.ApprovedBy) > 0:
		return fmt.Sprintf("%d of %d approvals%s", len(a.ApprovedBy), a.Required, by)
	case len(p.DeniedBy) > 0:
		return "denied by " + strings.Join(p.DeniedBy, ", ")
	}
	return "waiting for approval"
}

type stacksData struct {
	Rows       []stackRow
	Namespaces []string
	NS, State  string
	Label      string
	Total      int
	Note       string
}

var stackStates = []string{"ready", "reconciling", "stalled", "not-ready", "suspended"}

func (s *Server) stacksPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := stacksData{NS: q.Get("ns"), State: q.Get("state"), Label: q.Get("l")}
	sel := labels.Everything()
	if d.Label != "" {
		var err error
		if sel, err = labels.Parse(d.Label); err != nil {
			s.render(w, r, "stacks", http.StatusBadRequest, page{Title: "Stacks", Nav: "stacks", Error: fmt.Sprintf("label selector %q: %v", d.Label, err), Data: d})
			return
		}
	}
	stacks, err := s.o.Backend.Stacks(r.Context(), d.NS)
	var shown []string
	if d.NS == "" && isForbidden(err) {
		// Where the user may: the namespaces found to allow it, and the
		// kubeconfig context's.
		stacks, shown, err = whereAllowed(r.Context(), s, s.o.Backend.Stacks)
		switch {
		case err != nil:
		case len(shown) == 0 && s.o.Namespace != "":
			d.Note = fmt.Sprintf("You may list Stacks neither in all namespaces nor in namespace %s (your kubeconfig context's): name a namespace above, or start convoy ui -n NAMESPACE.", s.o.Namespace)
		case len(shown) == 0:
			d.Note = "You may not list Stacks in all namespaces: name a namespace above, or start convoy ui -n NAMESPACE."
		default:
			d.Note = fmt.Sprintf("You may not list Stacks in all namespaces: %s %s, where you may.", plural(len(shown), "namespace", "namespaces"), strings.Join(shown, ", "))
		}
	}
	if err != nil {
		s.render(w, r, "stacks", statusOf(err), page{Title: "Stacks", Nav: "stacks", Error: err.Error(), Data: d})
		return
	}
	d.Total = len(stacks)
	seen := map[string]bool{}
	for _, ns := range shown {
		seen[ns] = true
		d.Namespaces = append(d.Namespaces, ns)
	}
	for i := range stacks {
		st := &stacks[i]
		if !seen[st.Namespace] {
			seen[st.Namespace] = true
			d.Namespaces = append(d.Namespaces, st.Namespace)
		}
		if !sel.Matches(labels.Set(st.Labels)) {
			continue
		}
		row := s.rowOf(st)
		if d.State != "" && row.State != d.State {
			continue
		}
		d.Rows = append(d.Rows, row)
	}
	slices.Sort(d.Namespaces)
	slices.SortFunc(d.Rows, func(a, b stackRow) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	s.render(w, r, "stacks", http.StatusOK, page{Title: "Stacks", Nav: "stacks", Data: d})
}

// whereAllowed lists, with list, the objects of each namespace the user
// may list Stacks in, as far as the user may find out
// (Backend.StackNamespaces), and of the kubeconfig context's namespace;
// shown are the namespaces listed. A namespace that refuses the list is
// left out.
func whereAllowed[T any](ctx context.Context, s *Server, list func(context.Context, string) ([]T, error)) (items []T, shown []string, err error) {
	nss := s.o.Backend.StackNamespaces(ctx)
	if s.o.Namespace != "" && !slices.Contains(nss, s.o.Namespace) {
		nss = append(slices.Clone(nss), s.o.Namespace)
	}
	slices.Sort(nss)
	for _, ns := range nss {
		l, err := list(ctx, ns)
		if isForbidden(err) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		items = append(items, l...)
		shown = append(shown, ns)
	}
	return items, shown, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

type stackData struct {
	Row        stackRow
	Stack      *v1alpha1.Stack
	Plan       *planPage
	PlanText   string
	PlanErr    string
	Conditions []metav1.Condition
	Events     []corev1.Event
	History    []releaseHistory
	CanApprove bool
	WhyNot     string
	Approvable bool // manual, changes, not approved yet
}

type releaseHistory struct {
	Address, Name, Namespace string
	Revisions                []run.Revision
	Err                      string
	// Note says why the records are not shown (the user may not read
	// them) and what the Stack's status says instead.
	Note string
}

func (s *Server) stackPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ns, name := r.PathValue("ns"), r.PathValue("name")
	title := "Stack " + ns + "/" + name
	st, err := s.o.Backend.Stack(ctx, ns, name)
	if err != nil {
		s.render(w, r, "stack", statusOf(err), page{Title: title, Nav: "stacks", Error: err.Error(), Data: stackData{}})
		return
	}
	d := stackData{Row: s.rowOf(st), Stack: st, Conditions: st.Status.Conditions}
	if st.Status.Plan != nil && st.Status.Plan.Digest != "" {
		d.Plan, d.PlanText, err = s.o.Backend.Plan(ctx, st)
		if err != nil {
			d.PlanErr = err.Error()
		}
	}
	if ev, err := s.o.Backend.Events(ctx, "Stack", ns, name); err == nil {
		if len(ev) > 20 {
			ev = ev[len(ev)-20:]
		}
		slices.Reverse(ev)
		d.Events = ev
	}
	// The records are where spec.storage keeps them; a storage block in
	// the stack's own files is not known here (the Note below says so).
	driver := release.DriverSecret
	if sp := st.Spec.Storage; sp != nil {
		driver, _ = release.ParseStorageDriver(sp.Driver)
	}
	for _, rel := range st.Status.Releases {
		h := releaseHistory{Address: rel.Address, Name: rel.Name, Namespace: rel.Namespace}
		recorded := fmt.Sprintf("The Stack records revision %d %s.", rel.Revision, cmp.Or(rel.Status, "(no status)"))
		if rel.Cluster != "" {
			h.Err = "on cluster " + rel.Cluster + ": not read"
		} else if revs, err := s.o.Backend.History(ctx, driver, rel.Namespace, rel.Name); errors.Is(err, run.ErrRecordsNotInCluster) {
			h.Note = fmt.Sprintf("Helm's history of %s is kept in the Stack's SQL storage, which the web view does not read "+
				"(HELM_DRIVER=sql helm history %s -n %s shows it). %s", rel.Name, rel.Name, rel.Namespace, recorded)
		} else if isForbidden(err) {
			// Helm keeps the history in Secrets, which neither
			// convoy-approver nor view reads: say what would show it,
			// and what the Stack records, rather than widen any access.
			h.Note = fmt.Sprintf("Helm's history of %s is kept in Secrets, and you may not get and list on secrets in namespace %s "+
				"(neither convoy-approver nor view grants it; edit or admin there does, or a Role with get and list on secrets). "+
				"%s", rel.Name, rel.Namespace, recorded)
		} else if err != nil {
			h.Err = err.Error()
		} else if len(revs) == 0 && rel.Revision > 0 {
			h.Note = fmt.Sprintf("No record of %s in the %s storage of namespace %s: the stack's storage block keeps them elsewhere "+
				"(convoy history, or helm history with its HELM_DRIVER, shows them). %s", rel.Name, driver, rel.Namespace, recorded)
		} else {
			if len(revs) > 10 {
				revs = revs[len(revs)-10:]
			}
			slices.Reverse(revs)
			h.Revisions = revs
		}
		d.History = append(d.History, h)
	}
	if p := st.Status.Plan; p != nil && p.HasChanges && (st.Spec.Approval == v1alpha1.ApprovalManual || len(p.DeniedBy) > 0) {
		_, approved := st.Spec.ApprovalOf(p.Digest)
		d.Approvable = !approved
	}
	if d.Approvable {
		d.CanApprove, d.WhyNot = s.o.Backend.CanApprove(ctx, "stacks", ns, name)
		if why := ownApproval(st, s.o.Backend.User(ctx)); d.CanApprove && why != "" {
			d.CanApprove, d.WhyNot = false, why
		}
	}
	s.render(w, r, "stack", http.StatusOK, page{Title: title, Nav: "stacks", Data: d})
}

// ownApproval says why user may not approve the Stack's current plan
// again ("" when they may): they approved it already, and it waits for
// approvals by other users (convoy approve refuses a second approval of
// one plan by one user).
func ownApproval(st *v1alpha1.Stack, user string) string {
	p := st.Status.Plan
	if user == "" || p == nil {
		return ""
	}
	a, _ := st.Spec.ApprovalOf(p.Digest)
	if !slices.Contains(a.ApprovedBy, user) {
		return ""
	}
	more := int(a.Required) - len(a.ApprovedBy)
	return fmt.Sprintf("You (%s) approved plan %s already (%d of %d approvals): it waits for %d more %s by %s.",
		user, trimDigest(p.Digest), len(a.ApprovedBy), a.Required, more, plural(more, "approval", "approvals"), plural(more, "another user", "other users"))
}

func (s *Server) approveStack(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	if !s.csrfOK(r) {
		http.Error(w, "convoy ui: the form's token is missing or wrong; reload the page", http.StatusForbidden)
		return
	}
	digest := r.PostFormValue("digest")
	allow := r.PostForm["allow"]
	back := "/stacks/" + url.PathEscape(ns) + "/" + url.PathEscape(name)
	if err := s.o.Backend.Approve(r.Context(), ns, name, digest, allow); err != nil {
		http.Redirect(w, r, back+"?flash="+url.QueryEscape("Not approved: "+err.Error()), http.StatusSeeOther)
		return
	}
	msg := "Approved " + digest
	if len(allow) > 0 {
		msg += ", overriding " + strings.Join(allow, ", ")
	}
	http.Redirect(w, r, back+"?flash="+url.QueryEscape(msg), http.StatusSeeOther)
}

type pipelinesData struct {
	Pipelines []v1alpha1.Pipeline
}

func (s *Server) pipelinesPage(w http.ResponseWriter, r *http.Request) {
	ns := r.URL.Query().Get("ns")
	ps, err := s.o.Backend.Pipelines(r.Context(), ns)
	if ns == "" && isForbidden(err) && s.o.Namespace != "" {
		ps, err = s.o.Backend.Pipelines(r.Context(), s.o.Namespace)
	}
	if err != nil {
		s.render(w, r, "pipelines", statusOf(err), page{Title: "Pipelines", Nav: "pipelines", Error: err.Error(), Data: pipelinesData{}})
		return
	}
	slices.SortFunc(ps, func(a, b v1alpha1.Pipeline) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	s.render(w, r, "pipelines", http.StatusOK, page{Title: "Pipelines", Nav: "pipelines", Data: pipelinesData{Pipelines: ps}})
}

type stageView struct {
	Spec       v1alpha1.Stage
	Status     v1alpha1.StageStatus
	Stacks     []v1alpha1.PipelineStack
	BakePct    int
	Awaiting   bool
	CanApprove bool
	WhyNot     string
}

type pipelineData struct {
	Pipeline *v1alpha1.Pipeline
	Stages   []stageView
}

func (s *Server) pipelinePage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ns, name := r.PathValue("ns"), r.PathValue("name")
	title := "Pipeline " + ns + "/" + name
	p, err := s.o.Backend.Pipeline(ctx, ns, name)
	if err != nil {
		s.render(w, r, "pipeline", statusOf(err), page{Title: title, Nav: "pipelines", Error: err.Error(), Data: pipelineData{}})
		return
	}
	d := pipelineData{Pipeline: p}
	for _, spec := range p.Spec.Stages {
		v := stageView{Spec: spec, Status: v1alpha1.StageStatus{Name: spec.Name, Phase: v1alpha1.PhaseWaiting}}
		for _, st := range p.Status.Stages {
			if st.Name == spec.Name {
				v.Status = st
			}
		}
		for _, ps := range p.Status.Stacks {
			if ps.Stage == spec.Name {
				v.Stacks = append(v.Stacks, ps)
			}
		}
		v.BakePct = bakePercent(v.Status, spec.Bake, s.o.Now())
		v.Awaiting = v.Status.Phase == v1alpha1.PhaseAwaitingApproval
		if a, ok := p.Spec.ApprovalFor(spec.Name, v.Status.Digest); v.Awaiting && ok {
			// Approved: the controller pins the stage's Stacks next.
			by := ""
			if a.ApprovedBy != "" {
				by = " by " + a.ApprovedBy
			}
			v.WhyNot = fmt.Sprintf("Stage %s is approved%s for %s: the controller promotes it next.", spec.Name, by, trimDigest(v.Status.Digest))
		} else if v.Awaiting {
			v.CanApprove, v.WhyNot = s.o.Backend.CanApprove(ctx, "pipelines", ns, name)
		}
		d.Stages = append(d.Stages, v)
	}
	s.render(w, r, "pipeline", http.StatusOK, page{Title: title, Nav: "pipelines", Data: d})
}

func (s *Server) approveStage(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	if !s.csrfOK(r) {
		http.Error(w, "convoy ui: the form's token is missing or wrong; reload the page", http.StatusForbidden)
		return
	}
	stage, digest := r.PostFormValue("stage"), r.PostFormValue("digest")
	back := "/pipelines/" + url.PathEscape(ns) + "/" + url.PathEscape(name)
	msg := "Approved stage " + stage + " for " + digest
	if err := s.o.Backend.ApproveStage(r.Context(), ns, name, stage, digest); err != nil {
		msg = "Not approved: " + err.Error()
	}
	http.Redirect(w, r, back+"?flash="+url.QueryEscape(msg), http.StatusSeeOther)
}

type localData struct {
	Name   string
	Plan   *planPage
	Err    string
	At     time.Time
	Replan bool
}

func (s *Server) localPlanned(ctx context.Context, again bool) localData {
	s.localMu.Lock()
	defer s.localMu.Unlock()
	if s.localPlan == nil && s.localErr == nil || again {
		p, err := s.o.Local.Plan(ctx)
		s.localPlan, s.localErr, s.localAt = nil, err, s.o.Now()
		if err == nil {
			s.localPlan, s.localErr = newPlanPage(p, "")
		}
	}
	d := localData{Name: s.o.Local.Name, Plan: s.localPlan, At: s.localAt, Replan: s.o.Local.Replan}
	if s.localErr != nil {
		d.Err = s.localErr.Error()
	}
	return d
}

func (s *Server) localPage(w http.ResponseWriter, r *http.Request) {
	d := s.localPlanned(r.Context(), false)
	s.render(w, r, "local", http.StatusOK, page{Title: "Plan of " + d.Name, Nav: "local", Data: d})
}

func (s *Server) replanLocal(w http.ResponseWriter, r *http.Request) {
	if !s.csrfOK(r) {
		http.Error(w, "convoy ui: the form's token is missing or wrong; reload the page", http.StatusForbidden)
		return
	}
	s.localPlanned(r.Context(), s.o.Local.Replan)
	http.Redirect(w, r, "/local", http.StatusSeeOther)
}

func statusOf(err error) int {
	switch {
	case isNotFound(err):
		return http.StatusNotFound
	case isForbidden(err):
		return http.StatusForbidden
	}
	return http.StatusBadGateway
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

func (s *Server) funcs() template.FuncMap {
	return template.FuncMap{
		"short":  trimDigest,
		"states": func() []string { return stackStates },
		"since": func(t any) string {
			var tt time.Time
			switch v := t.(type) {
			case *metav1.Time:
				if v == nil {
					return ""
				}
				tt = v.Time
			case metav1.Time:
				tt = v.Time
			case time.Time:
				tt = v
			}
			if tt.IsZero() {
				return ""
			}
			return s.o.Now().Sub(tt).Truncate(time.Second).String() + " ago"
		},
		"when": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
		// index1 is results[j], nil past its end (a gate not checked yet).
		"index1": func(results []v1alpha1.GateResult, j int) *v1alpha1.GateResult {
			if j < len(results) {
				return &results[j]
			}
			return nil
		},
		"eventTime": func(e corev1.Event) time.Time { return eventTime(e) },
		"pathEsc":   url.PathEscape,
		"labels": func(m map[string]string) string {
			return labels.Set(m).String()
		},
		"selector": metav1.FormatLabelSelector,
		"sym": func(action string) string {
			switch action {
			case "install", "create":
				return "+"
			case "upgrade", "update":
				return "~"
			case "uninstall", "delete":
				return "-"
			case "replace":
				return "-/+"
			case "forget":
				return "."
			}
			return "="
		},
	}
}
