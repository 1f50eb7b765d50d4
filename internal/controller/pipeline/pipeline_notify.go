package pipeline

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/controller/notify"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pipelinePayload is the JSON body of a Pipeline's json-format
// notification.
type pipelinePayload struct {
	Pipeline  string    `json:"pipeline"`
	Namespace string    `json:"namespace"`
	Event     string    `json:"event"`
	Stage     string    `json:"stage"`
	Digest    string    `json:"digest"`
	Source    string    `json:"source"`
	Tag       string    `json:"tag,omitempty"`
	Message   string    `json:"message"`
	Gate      string    `json:"gate,omitempty"`
	Time      time.Time `json:"time"`
}

func (pl *pipelinePayload) body(format v1alpha1.NotificationFormat) ([]byte, error) {
	text := func(bold, code string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "%sPipeline %s/%s, stage %s: %s%s\n%s@%s%s%s", bold, pl.Namespace, pl.Pipeline, pl.Stage, pl.Event, bold, code, pl.Source, pl.Digest, code)
		if pl.Tag != "" {
			fmt.Fprintf(&b, " (%s)", pl.Tag)
		}
		fmt.Fprintf(&b, "\n%s", pl.Message)
		return b.String()
	}
	switch format {
	case v1alpha1.FormatSlack:
		return json.Marshal(map[string]string{"text": text("*", "`")})
	case v1alpha1.FormatMSTeams:
		card := map[string]any{
			"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
			"type":    "AdaptiveCard", "version": "1.4",
			"body": []map[string]any{
				{"type": "TextBlock", "weight": "Bolder", "size": "Medium", "wrap": true, "text": fmt.Sprintf("Pipeline %s/%s: %s", pl.Namespace, pl.Pipeline, pl.Event)},
				{"type": "TextBlock", "wrap": true, "text": text("**", "`")},
			},
		}
		return json.Marshal(map[string]any{
			"type":        "message",
			"attachments": []map[string]any{{"contentType": "application/vnd.microsoft.card.adaptive", "content": card}},
		})
	}
	return json.Marshal(pl)
}

func pipelineNotified(p *v1alpha1.Pipeline, n stageNotice) bool {
	return slices.ContainsFunc(p.Status.Notified, func(e v1alpha1.StageNotified) bool {
		return e.Event == n.Event && e.Stage == n.Stage && e.Digest == n.Digest
	})
}

// recordNotices records in status.notified the stage notices not sent
// before (each event once per stage and digest, also across restarts)
// and returns the deliveries of the notifications that subscribe to
// them; they are sent once the status is written.
func (r *Reconciler) recordNotices(p *v1alpha1.Pipeline, notices []stageNotice, now time.Time) []notify.Delivery {
	var out []notify.Delivery
	for _, n := range notices {
		if pipelineNotified(p, n) {
			continue
		}
		p.Status.Notified = append(p.Status.Notified, v1alpha1.StageNotified{Event: n.Event, Stage: n.Stage, Digest: n.Digest, Time: &metav1.Time{Time: now}})
		if extra := len(p.Status.Notified) - v1alpha1.MaxNotified; extra > 0 {
			p.Status.Notified = slices.Delete(p.Status.Notified, 0, extra)
		}
		pl := &pipelinePayload{
			Pipeline: p.Name, Namespace: p.Namespace, Event: string(n.Event), Stage: n.Stage, Digest: n.Digest,
			Source: p.Spec.Source, Message: n.Message, Time: now.UTC(),
		}
		if l := p.Status.Latest; l != nil && l.Digest == n.Digest {
			pl.Tag = l.Tag
		}
		for _, s := range p.Status.Stages {
			if s.Name == n.Stage && s.FailedGate != nil && n.Event == v1alpha1.EventStageFailed {
				pl.Gate = s.FailedGate.Gate
			}
		}
		snap := p.DeepCopy()
		for i, target := range p.Spec.Notifications {
			if len(target.Events) == 0 || slices.Contains(target.Events, n.Event) {
				out = append(out, notify.Delivery{
					Index: i, Target: target, Event: n.Event, Digest: n.Digest,
					What:      fmt.Sprintf("spec.notifications[%d] (%s of stage %s, digest %s)", i, n.Event, pl.Stage, pl.Digest),
					Namespace: pl.Namespace, Body: pl.body,
					Report: func(typ, reason, note string) { r.event(snap, typ, reason, "Notify", note) },
				})
			}
		}
	}
	return out
}
