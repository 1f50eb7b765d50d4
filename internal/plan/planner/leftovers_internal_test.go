package planner

import (
	"slices"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
)

func TestLeftoverRevisions(t *testing.T) {
	hist := func(statuses ...release.Status) []*release.Release {
		var h []*release.Release
		for i, s := range statuses {
			h = append(h, &release.Release{Name: "r", Version: i + 1, Info: &release.Info{Status: s}})
		}
		return h
	}
	const (
		dep  = release.StatusDeployed
		sup  = release.StatusSuperseded
		fail = release.StatusFailed
	)
	for _, tc := range []struct {
		name string
		hist []*release.Release
		want []int
	}{
		{"healthy", hist(sup, sup, dep), nil},
		{"failed after deployed", hist(sup, dep, fail), []int{3}},
		{"two failed after deployed", hist(dep, fail, fail), []int{2, 3}},
		{"rolled back after a failure", hist(sup, fail, dep), []int{2}},
		{"an older failure, then an upgrade", hist(fail, sup, dep), nil},
		{"nothing deployed", hist(fail, fail), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var deployed *release.Release
			for _, r := range tc.hist {
				if r.Info.Status == dep {
					deployed = r
				}
			}
			var got []int
			for _, r := range leftoverRevisions(tc.hist, deployed) {
				got = append(got, r.Version)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}
