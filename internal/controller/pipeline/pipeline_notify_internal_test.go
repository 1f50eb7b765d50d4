package pipeline

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A stage's notice is sent once per stage and digest, to the
// notifications that subscribe to it, with the failed gate named.
func TestPipelineNoticesOncePerStageAndDigest(t *testing.T) {
	r := &Reconciler{}
	p := &v1alpha1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "apps"},
		Spec: v1alpha1.PipelineSpec{
			Source: "oci://r/stacks/app",
			Notifications: []v1alpha1.Notification{
				{URL: "http://all.example"},
				{URL: "http://failures.example", Events: []v1alpha1.NotificationEvent{v1alpha1.EventStageFailed}, Format: v1alpha1.FormatSlack},
			},
		},
		Status: v1alpha1.PipelineStatus{
			Latest: &v1alpha1.Artifact{Tag: "1.1.0", Digest: d2},
			Stages: []v1alpha1.StageStatus{{Name: "staging", Digest: d2, Phase: v1alpha1.PhaseFailed, FailedGate: &v1alpha1.FailedGate{Gate: "spec.stages[0].gates[0] (test)"}}},
		},
	}
	notices := []stageNotice{
		{v1alpha1.EventStageVerified, "staging", d1, "verified"},
		{v1alpha1.EventStageFailed, "staging", d2, "gate failed"},
	}
	ds := r.recordNotices(p, notices, time.Unix(0, 0))
	if len(ds) != 3 {
		t.Fatalf("%d deliveries, want 3 (verified: 1, failed: 2)", len(ds))
	}
	if again := r.recordNotices(p, notices, time.Unix(1, 0)); len(again) != 0 || len(p.Status.Notified) != 2 {
		t.Fatalf("sent again: %d deliveries, notified %+v", len(again), p.Status.Notified)
	}
	// A new digest is a new notice.
	if ds := r.recordNotices(p, []stageNotice{{v1alpha1.EventStageVerified, "staging", d2, "verified"}}, time.Unix(2, 0)); len(ds) != 1 {
		t.Fatalf("%d deliveries for a new digest", len(ds))
	}
	var failedJSON, failedSlack []byte
	for _, d := range r.recordNotices(&v1alpha1.Pipeline{ObjectMeta: p.ObjectMeta, Spec: p.Spec, Status: v1alpha1.PipelineStatus{Latest: p.Status.Latest, Stages: p.Status.Stages}}, notices[1:], time.Unix(3, 0)) {
		b, err := d.Body(d.Target.Format)
		if err != nil {
			t.Fatal(err)
		}
		if d.Target.Format == v1alpha1.FormatSlack {
			failedSlack = b
		} else {
			failedJSON = b
		}
		if d.Namespace != "apps" {
			t.Errorf("namespace %q", d.Namespace)
		}
	}
	var pl map[string]any
	if err := json.Unmarshal(failedJSON, &pl); err != nil {
		t.Fatal(err)
	}
	if pl["pipeline"] != "app" || pl["stage"] != "staging" || pl["event"] != "StageFailed" || pl["digest"] != d2 || pl["tag"] != "1.1.0" || pl["gate"] != "spec.stages[0].gates[0] (test)" {
		t.Fatalf("json body %s", failedJSON)
	}
	if !strings.Contains(string(failedSlack), "*Pipeline apps/app, stage staging: StageFailed*") {
		t.Fatalf("slack body %s", failedSlack)
	}
}
