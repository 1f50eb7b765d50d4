// Package lockfile names the lock file `convoy init` writes beside a
// stack's .hcl files. internal/chart/source reads and writes it;
// internal/config leaves it out of the stack's files. It lives here, below
// both, so that the chart engine does not depend on the stack language.
package lockfile

// Name is the lock file's name in a stack directory.
const Name = "convoy.lock.hcl"
