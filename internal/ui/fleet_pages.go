package ui

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/api/v1alpha1"
)

// stackSetRow is a StackSet as the list shows it.
type stackSetRow struct {
	Namespace, Name        string
	Ready, Reason, Message string
	Summary, PlanSummary   string
	Steps                  []v1alpha1.StageStatus
	Paused                 bool
}

type stackSetsData struct {
	Rows []stackSetRow
	Note string
}

func (s *Server) stackSetsPage(w http.ResponseWriter, r *http.Request) {
	ns := r.URL.Query().Get("ns")
	sets, err := s.o.Backend.StackSets(r.Context(), ns)
	var d stackSetsData
	if ns == "" && isForbidden(err) {
		var shown []string
		sets, shown, err = whereAllowed(r.Context(), s, s.o.Backend.StackSets)
		if err == nil {
			d.Note = "You may not list StackSets in all namespaces: "
			if len(shown) == 0 {
				d.Note += "none is shown; add ?ns=NAMESPACE, or start convoy ui -n NAMESPACE."
			} else {
				d.Note += fmt.Sprintf("%s %s, where you may.", plural(len(shown), "namespace", "namespaces"), strings.Join(shown, ", "))
			}
		}
	}
	if err != nil {
		s.render(w, r, "stacksets", statusOf(err), page{Title: "StackSets", Nav: "stacksets", Error: err.Error(), Data: d})
		return
	}
	for i := range sets {
		ss := &sets[i]
		row := stackSetRow{Namespace: ss.Namespace, Name: ss.Name, Summary: ss.Status.Summary, PlanSummary: ss.Status.PlanSummary,
			Steps: ss.Status.Steps, Paused: ss.Spec.Paused}
		v := newStackSetData(ss, nil, s.o.Now())
		row.Ready, row.Reason, row.Message = v.Ready, v.Reason, v.Message
		d.Rows = append(d.Rows, row)
	}
	slices.SortFunc(d.Rows, func(a, b stackSetRow) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	s.render(w, r, "stacksets", http.StatusOK, page{Title: "StackSets", Nav: "stacksets", Data: d})
}

func (s *Server) stackSetPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ns, name := r.PathValue("ns"), r.PathValue("name")
	title := "StackSet " + ns + "/" + name
	ss, err := s.o.Backend.StackSet(ctx, ns, name)
	if err != nil {
		s.render(w, r, "stackset", statusOf(err), page{Title: title, Nav: "stacksets", Error: err.Error(), Data: stackSetData{}})
		return
	}
	stacks, err := s.o.Backend.StackSetStacks(ctx, ns, name)
	note := ""
	if err != nil {
		stacks = nil
		note = "The Stacks' own conditions are not shown (" + err.Error() + "): each cell says what the StackSet records of its Stack."
	}
	d := newStackSetData(ss, stacks, s.o.Now())
	d.StacksNote = note
	s.render(w, r, "stackset", http.StatusOK, page{Title: title, Nav: "stacksets", Data: d})
}
