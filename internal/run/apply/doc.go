// Package apply executes a plan's steps: it walks the release graph with
// bounded parallelism (a release starts when everything it depends on
// succeeded; the dependents of a failure are skipped while independent
// branches go on), prepares each deploy when its step starts, and restores
// every release changed in the run when the stack is atomic. What to run
// and how to show it are the caller's (internal/run, the progress views).
package apply
