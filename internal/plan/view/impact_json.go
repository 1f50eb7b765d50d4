package view

import (
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/sensitive"
)

// jsonImpact is a release's plan.Impact in the --json document: the same
// fields, objects named by their ref string as everywhere else.
type jsonImpact struct {
	Rollouts     []jsonRollout     `json:"rollouts"`
	StaleConfig  []jsonStaleConfig `json:"stale_config"`
	DataLoss     []jsonDataLoss    `json:"data_loss"`
	Replacements []jsonReplacement `json:"replacements,omitempty"`
	Requests     *plan.Resources   `json:"requests,omitempty"`
	Limits       *plan.Resources   `json:"limits,omitempty"`
	Unknown      []jsonUnknown     `json:"unknown"`
	ScaledToZero []jsonScaleToZero `json:"scaled_to_zero,omitempty"`
}

type jsonScaleToZero struct {
	Ref      string   `json:"ref"`
	From     int      `json:"from"`
	Services []string `json:"services,omitempty"`
}

type jsonRollout struct {
	Ref      string        `json:"ref"`
	Replicas int           `json:"replicas"`
	Strategy plan.Strategy `json:"strategy"`
	Causes   []string      `json:"causes"`
	Budgets  []jsonBudget  `json:"budgets,omitempty"`
}

type jsonBudget struct {
	Ref                string `json:"ref"`
	DisruptionsAllowed *int   `json:"disruptions_allowed,omitempty"`
}

type jsonStaleConfig struct {
	Ref       string         `json:"ref"`
	Consumers []jsonConsumer `json:"consumers"`
}

type jsonConsumer struct {
	Ref     string `json:"ref"`
	Via     string `json:"via"`
	PicksUp string `json:"picks_up"`
}

type jsonDataLoss struct {
	Ref    string            `json:"ref"`
	Action plan.ObjectAction `json:"action"`
	Reason string            `json:"reason"`
}

type jsonReplacement struct {
	Ref           string   `json:"ref"`
	Propagation   string   `json:"propagation"`
	KeptClaims    []string `json:"kept_claims,omitempty"`
	Immutable     []string `json:"immutable,omitempty"`
	RecreatesPods bool     `json:"recreates_pods,omitempty"`
	Remounted     []string `json:"remounted_claims,omitempty"`
	Storage       []string `json:"storage_changes,omitempty"`
	Why           string   `json:"why,omitempty"`
	Note          string   `json:"note,omitempty"`
}

type jsonUnknown struct {
	Ref    string            `json:"ref"`
	Action plan.ObjectAction `json:"action"`
}

func jsonImpactOf(imp *plan.Impact) *jsonImpact {
	if imp == nil {
		return nil
	}
	out := &jsonImpact{Rollouts: []jsonRollout{}, StaleConfig: []jsonStaleConfig{}, DataLoss: []jsonDataLoss{}, Unknown: []jsonUnknown{},
		Requests: imp.Requests, Limits: imp.Limits}
	for _, r := range imp.Rollouts {
		jr := jsonRollout{Ref: r.Ref.String(), Replicas: r.Replicas, Strategy: r.Strategy, Causes: r.Causes}
		for _, b := range r.Budgets {
			jr.Budgets = append(jr.Budgets, jsonBudget{Ref: b.Ref.String(), DisruptionsAllowed: b.DisruptionsAllowed})
		}
		out.Rollouts = append(out.Rollouts, jr)
	}
	for _, s := range imp.StaleConfig {
		js := jsonStaleConfig{Ref: s.Ref.String()}
		for _, c := range s.Consumers {
			js.Consumers = append(js.Consumers, jsonConsumer{Ref: c.Ref.String(), Via: c.Via, PicksUp: c.PicksUp})
		}
		out.StaleConfig = append(out.StaleConfig, js)
	}
	for _, d := range imp.DataLoss {
		out.DataLoss = append(out.DataLoss, jsonDataLoss{Ref: d.Ref.String(), Action: d.Action, Reason: d.Reason})
	}
	for _, r := range imp.Replacements {
		out.Replacements = append(out.Replacements, jsonReplacement{Ref: r.Ref.String(), Propagation: r.Propagation, KeptClaims: r.KeptClaims,
			Immutable: r.Immutable, RecreatesPods: r.RecreatesPods, Remounted: r.RemountedClaims, Storage: r.StorageChanges, Why: r.Why, Note: r.Note})
	}
	for _, u := range imp.Unknown {
		out.Unknown = append(out.Unknown, jsonUnknown{Ref: u.Ref.String(), Action: u.Action})
	}
	for _, z := range imp.ScaledToZero {
		jz := jsonScaleToZero{Ref: z.Ref.String(), From: z.From}
		for _, s := range z.Services {
			jz.Services = append(jz.Services, s.String())
		}
		out.ScaledToZero = append(out.ScaledToZero, jz)
	}
	return out
}

// redactImpact masks sensitive values in the names the impact quotes.
func redactImpact(imp *jsonImpact, red *sensitive.Redactor) {
	if imp == nil {
		return
	}
	for i := range imp.Rollouts {
		r := &imp.Rollouts[i]
		r.Ref = red.Text(r.Ref)
		for j := range r.Causes {
			r.Causes[j] = red.Text(r.Causes[j])
		}
	}
	for i := range imp.StaleConfig {
		imp.StaleConfig[i].Ref = red.Text(imp.StaleConfig[i].Ref)
	}
	for i := range imp.DataLoss {
		imp.DataLoss[i].Ref, imp.DataLoss[i].Reason = red.Text(imp.DataLoss[i].Ref), red.Text(imp.DataLoss[i].Reason)
	}
	for i := range imp.Replacements {
		imp.Replacements[i].Ref, imp.Replacements[i].Why = red.Text(imp.Replacements[i].Ref), red.Text(imp.Replacements[i].Why)
	}
	for i := range imp.ScaledToZero {
		z := &imp.ScaledToZero[i]
		z.Ref = red.Text(z.Ref)
		for j := range z.Services {
			z.Services[j] = red.Text(z.Services[j])
		}
	}
}
