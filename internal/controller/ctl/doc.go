// Package ctl is what the CLI and the UI do with the controller's objects,
// as a client of the API server: connect, install the CRDs, RBAC and
// Deployment, list Stacks and Pipelines, approve a Stack's plan, promote a
// Pipeline's stage. It never imports the controller: cmd/convoy and
// internal/ui use it without linking the reconcilers.
package ctl
