package ctl

import (
	"bytes"
	"fmt"
	"time"

	"github.com/convoy-sh/convoy/deploy"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// minIntervalRule is the CRDs' rule on interval as deploy/crd writes it
// (after a check that the value is a duration: the pattern refuses
// others, and a stored one must not fail every write with a CEL error).
const (
	minIntervalRule    = "duration(self) >= duration('1m')"
	minIntervalMessage = "the minimum of 1m"
)

// crdWithMinInterval is a CRD whose interval rule has another minimum.
func crdWithMinInterval(doc []byte, min time.Duration) []byte {
	if min <= 0 || min == DefaultMinInterval {
		return doc
	}
	doc = bytes.ReplaceAll(doc, []byte(minIntervalRule), fmt.Appendf(nil, "duration(self) >= duration('%s')", min))
	return bytes.ReplaceAll(doc, []byte(minIntervalMessage), fmt.Appendf(nil, "the minimum of %s", min))
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
