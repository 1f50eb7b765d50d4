package planner

import "testing"

// TestReadByList: the deployed records of a namespace are read with one
// list when a plan reads at least two of them whole and at least a
// quarter of them; one record is a GET whatever the namespace holds.
func TestReadByList(t *testing.T) {
	for _, tt := range []struct {
		needed, deployed int
		list             bool
	}{
		{0, 0, false},
		{1, 1, false},
		{1, 8, false},
		{2, 2, true},
		{2, 8, true},
		{2, 9, false},
		{6, 8, true},
		{3, 15, false},
		{4, 15, true},
		{12, 50, false},
		{13, 50, true},
	} {
		if got := readByList(tt.needed, tt.deployed); got != tt.list {
			t.Errorf("readByList(%d needed, %d deployed) = %v, want %v", tt.needed, tt.deployed, got, tt.list)
		}
	}
}
