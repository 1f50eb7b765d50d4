package config

import "sync/atomic"

// Counts are how many times this process parsed a stack directory
// (LoadDir), evaluated a stack (Evaluate) and decrypted a SOPS file
// (sops_file, once per file and evaluation): the work a run should do
// once. The controller's tests assert that a reconcile parses and
// evaluates its stack once; `convoy controller` exports them
// (convoy_controller_stack_evaluations_total,
// convoy_controller_sops_decryptions_total).
type Counts struct {
	Parses      int64
	Evaluations int64
	Decryptions int64
}

// The process's counts: monotonic totals, read by ReadCounts. They are
// the one package-level state of config, kept because what they count
// happens deep inside evaluation, where no options reach.
var parses, evaluations, decryptions atomic.Int64

// ReadCounts returns the counts so far; a caller subtracts two readings.
func ReadCounts() Counts {
	return Counts{Parses: parses.Load(), Evaluations: evaluations.Load(), Decryptions: decryptions.Load()}
}

// Sub is c minus an earlier reading.
func (c Counts) Sub(earlier Counts) Counts {
	return Counts{Parses: c.Parses - earlier.Parses, Evaluations: c.Evaluations - earlier.Evaluations, Decryptions: c.Decryptions - earlier.Decryptions}
}
