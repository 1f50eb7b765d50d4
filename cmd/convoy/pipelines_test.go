package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// convoy get pipelines shows each stage's digest and phase, and convoy
// promote approves a manual stage for exactly the digest it awaits, in the
// kubeconfig context's namespace. The status is written here as the
// controller would (no controller runs).
func TestPipelineCommands(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := contextKubeconfig(t, ns)
	c, err := ctl.NewClient(cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := ctl.Install(ctx, c, ctl.InstallRequest{MinInterval: time.Second}); err != nil {
		t.Fatal(err)
	}
	const (
		d1 = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
		d2 = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	)
	p := &v1alpha1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns},
		Spec: v1alpha1.PipelineSpec{
			Source: "oci://127.0.0.1:1/stacks/shop", Follow: v1alpha1.Follow{Semver: ">=1.0.0"},
			Stages: []v1alpha1.Stage{
				{Name: "staging", Stacks: v1alpha1.StackRefs("staging")},
				{Name: "production", Stacks: v1alpha1.StackRefs("prod-a", "prod-b"), Approval: v1alpha1.ApprovalManual},
			},
		},
	}
	if err := c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	p.Status = v1alpha1.PipelineStatus{
		Latest: &v1alpha1.Artifact{Tag: "1.2.0", Digest: d2},
		Stages: []v1alpha1.StageStatus{
			{Name: "staging", Digest: d2, Phase: v1alpha1.PhaseVerified, Verified: d2},
			{Name: "production", Digest: d2, Phase: v1alpha1.PhaseAwaitingApproval, Verified: d1},
		},
	}
	if err := c.Status().Update(ctx, p); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runConvoy(t, "get", "pipelines", "--kubeconfig", kc)
	if code != 0 || !regexp.MustCompile(`(?m)^NAME\s+LATEST\s+STAGES\nshop\s+1\.2\.0 \(sha256:222222222222\)\s+staging: 222222222222 Verified\s+production: 222222222222 AwaitingApproval\s*$`).MatchString(out) {
		t.Fatalf("get pipelines: exit %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = runConvoy(t, "promote", "shop", "production", "--digest", d1, "--kubeconfig", kc)
	if code != 1 || !strings.Contains(errOut, "stage production awaits approval for "+d2+", not "+d1) {
		t.Fatalf("promote another digest: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runConvoy(t, "promote", "shop", "staging", "--kubeconfig", kc)
	if code != 1 || !strings.Contains(errOut, "stage staging has approval auto") {
		t.Fatalf("promote an auto stage: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runConvoy(t, "promote", "shop", "qa", "--kubeconfig", kc)
	if code != 1 || !strings.Contains(errOut, `has no stage "qa"`) {
		t.Fatalf("promote a missing stage: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runConvoy(t, "promote", "nope", "production", "--kubeconfig", kc)
	if code != 1 || !strings.Contains(errOut, "Pipeline "+ns+"/nope not found") {
		t.Fatalf("promote a missing Pipeline: exit %d\n%s", code, errOut)
	}
	code, out, errOut = runConvoy(t, "promote", "shop", "production", "--kubeconfig", kc)
	if code != 0 || out != "Approved stage production of Pipeline "+ns+"/shop for "+d2+".\n" {
		t.Fatalf("promote: exit %d\n%s\n%s", code, out, errOut)
	}
	var got v1alpha1.Pipeline
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "shop"}, &got); err != nil {
		t.Fatal(err)
	}
	// The approval names who gave it.
	me, err := ctl.WhoAmI(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Approvals) != 1 || got.Spec.Approvals[0] != (v1alpha1.StageApproval{Stage: "production", Digest: d2, ApprovedBy: me}) {
		t.Fatalf("approvals %+v", got.Spec.Approvals)
	}
}
