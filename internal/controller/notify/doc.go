// Package notify sends the notifications of Stacks and Pipelines
// (spec.notifications): POSTs in the background, retried, with their URL
// read from the spec or a Secret and never written into an event. What a
// notice says, and when it is due, is the reconcilers' (the Stack's
// status.notified, the Pipeline's stage notices).
package notify
