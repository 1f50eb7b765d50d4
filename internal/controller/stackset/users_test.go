package stackset_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/controller/controllertest"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// waitApprovalPolicy waits until the API server enforces the approval
// policy (a moment after it is created): until a dry-run create of an
// approved Stack by editor is refused.
func waitApprovalPolicy(t *testing.T, editor client.Client, ns string) {
	t.Helper()
	var err error
	devtest.Eventually(t, 60*time.Second, func() bool {
		st := controllertest.NewStack(ns, "policy-probe", "oci://example.invalid/stacks/app:v1", nil)
		st.Spec.ApprovedPlan = "sha256:" + strings.Repeat("0", 64)
		err = editor.Create(context.Background(), st, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "may not approve")
	}, func() string {
		return fmt.Sprintf("the approval policy is not enforced after 60s: a dry-run create by an editor: %v", err)
	})
}
