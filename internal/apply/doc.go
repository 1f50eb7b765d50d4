// Package apply executes a plan: it walks the release graph with bounded
// parallelism (a release starts when everything it depends on succeeded;
// the dependents of a failure are skipped while independent branches go on),
// restores every release changed in the run when the stack is atomic, holds
// the stack lock (a coordination.k8s.io Lease) for the duration, and reports
// progress live on a terminal or as timestamped lines.
package apply
