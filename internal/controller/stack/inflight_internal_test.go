package stack

import (
	"testing"
	"time"
)

func TestInflightDrainWaitsForRunsAndRefusesNewOnes(t *testing.T) {
	var f inflight
	if !f.start() || !f.start() {
		t.Fatal("runs refused before drain")
	}
	drained := make(chan int)
	go func() { drained <- f.drain(time.Minute) }()
	f.done()
	select {
	case n := <-drained:
		t.Fatalf("drain returned with a run under way (%d left)", n)
	default:
	}
	f.done()
	if n := <-drained; n != 0 {
		t.Fatalf("%d runs left", n)
	}
	if f.start() {
		t.Fatal("a run started after drain")
	}
}

func TestInflightDrainGivesUpAfterItsTimeout(t *testing.T) {
	var f inflight
	f.start()
	if n := f.drain(10 * time.Millisecond); n != 1 {
		t.Fatalf("%d runs left, want 1", n)
	}
}
