// Package planstore holds a Stack's saved plan in the API server: the plan
// Secret (split into part Secrets when it does not fit one) and the plan
// ConfigMap of its masked text. The Stack reconciler writes and loads
// them; the CLI (convoy show --stack) and the UI read them.
package planstore
