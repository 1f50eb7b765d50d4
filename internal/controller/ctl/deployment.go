package ctl

import (
	"fmt"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/deploy"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// minIntervalRule is the CRDs' rule on interval as api/v1alpha1's markers
// write it (after a check that the value is a duration: the pattern
// refuses others, and a stored one must not fail every write with a CEL
// error).
const (
	minIntervalRule    = "duration(self) >= duration('1m')"
	minIntervalMessage = "the minimum of 1m"
)

// setMinInterval gives a CRD's interval rules another minimum (min 0 or
// DefaultMinInterval: none changed), and says how many it changed.
func setMinInterval(u *unstructured.Unstructured, min time.Duration) int {
	if min <= 0 || min == DefaultMinInterval {
		return 0
	}
	return lowerIntervalRules(u.Object, min)
}

// lowerIntervalRules rewrites the x-kubernetes-validations under v that
// are the interval rule.
func lowerIntervalRules(v any, min time.Duration) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		rules, _ := v["x-kubernetes-validations"].([]any)
		for _, r := range rules {
			r, _ := r.(map[string]any)
			rule, _ := r["rule"].(string)
			if !strings.Contains(rule, minIntervalRule) {
				continue
			}
			r["rule"] = strings.ReplaceAll(rule, minIntervalRule, fmt.Sprintf("duration(self) >= duration('%s')", min))
			if msg, ok := r["message"].(string); ok {
				r["message"] = strings.ReplaceAll(msg, minIntervalMessage, "the minimum of "+min.String())
			}
			n++
		}
		for _, e := range v {
			n += lowerIntervalRules(e, min)
		}
	case []any:
		for _, e := range v {
			n += lowerIntervalRules(e, min)
		}
	}
	return n
}

// setWebhook runs the push receiver in the controller's Deployment: its
// flags and port (secret "": unchanged).
func setWebhook(u *unstructured.Unstructured, secret string) error {
	if secret == "" {
		return nil
	}
	if _, err := ParseSecretRef(secret); err != nil {
		return fmt.Errorf("--webhook-token-secret %w", err)
	}
	containers, _, err := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if err != nil {
		return fmt.Errorf("%s %s %s: %w", u.GetAPIVersion(), u.GetKind(), objName(u), err)
	}
	for i, c := range containers {
		m, ok := c.(map[string]any)
		if !ok || m["name"] != "controller" {
			continue
		}
		args, _ := m["args"].([]any)
		m["args"] = append(args, fmt.Sprintf("--webhook-listen=:%d", deploy.WebhookPort), "--webhook-token-secret="+secret)
		ports, _ := m["ports"].([]any)
		m["ports"] = append(ports, map[string]any{"name": "webhook", "containerPort": int64(deploy.WebhookPort)})
		containers[i] = m
		return unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers")
	}
	return fmt.Errorf("%s %s %s: no container named controller", u.GetAPIVersion(), u.GetKind(), objName(u))
}
