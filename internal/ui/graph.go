package ui

import (
	"fmt"
	"slices"
)

// graph is the release graph laid out for an SVG: releases in columns by
// depth (a release sits right of everything it depends on), edges from a
// dependency to its dependent.
type graph struct {
	Width, Height int
	Nodes         []graphNode
	Edges         []graphEdge
}

type graphNode struct {
	Address, Action, Label string
	X, Y                   int
}

type graphEdge struct {
	From, To string
	Path     string
}

const (
	nodeW, nodeH = 200, 34
	colGap       = 60
	rowGap       = 16
	margin       = 10
)

// layoutGraph places each release at column = its longest chain of
// dependencies, rows in the plan's order; dependencies on releases not in
// the plan are left out.
func layoutGraph(releases []*releasePage) *graph {
	index := map[string]*releasePage{}
	for _, r := range releases {
		index[r.Address] = r
	}
	depth := map[string]int{}
	var depthOf func(addr string, seen map[string]bool) int
	depthOf = func(addr string, seen map[string]bool) int {
		if d, ok := depth[addr]; ok {
			return d
		}
		if seen[addr] { // a cycle (the planner refuses those): stop
			return 0
		}
		seen[addr] = true
		d := 0
		for _, dep := range index[addr].DependsOn {
			if _, ok := index[dep]; ok {
				d = max(d, depthOf(dep, seen)+1)
			}
		}
		depth[addr] = d
		return d
	}
	g := &graph{}
	rows := map[int]int{}
	pos := map[string]graphNode{}
	for _, r := range releases {
		d := depthOf(r.Address, map[string]bool{})
		n := graphNode{Address: r.Address, Action: r.Action, Label: short(r.Address, 28),
			X: margin + d*(nodeW+colGap), Y: margin + rows[d]*(nodeH+rowGap)}
		rows[d]++
		pos[r.Address] = n
		g.Nodes = append(g.Nodes, n)
		g.Width = max(g.Width, n.X+nodeW+margin)
		g.Height = max(g.Height, n.Y+nodeH+margin)
	}
	for _, r := range releases {
		deps := slices.Clone(r.DependsOn)
		slices.Sort(deps)
		for _, dep := range slices.Compact(deps) {
			from, ok := pos[dep]
			if !ok {
				continue
			}
			to := pos[r.Address]
			x1, y1 := from.X+nodeW, from.Y+nodeH/2
			x2, y2 := to.X, to.Y+nodeH/2
			mid := (x1 + x2) / 2
			g.Edges = append(g.Edges, graphEdge{From: dep, To: r.Address,
				Path: fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", x1, y1, mid, y1, mid, y2, x2, y2)})
		}
	}
	return g
}

// short cuts s to n runes with an ellipsis.
func short(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
