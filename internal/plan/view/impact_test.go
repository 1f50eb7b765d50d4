package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/plantest"
)

func impactPlan() *plan.Plan {
	one := 1
	web := plantest.Ref("apps/v1 Deployment shop/web")
	cfg := plantest.Ref("v1 ConfigMap shop/web-cfg")
	return &plan.Plan{FormatVersion: plan.FormatVersion, Stack: "shop", Releases: []*plan.ReleaseChange{{
		Addr: plantest.Addr("web"), Name: "web", Namespace: "shop", Action: plan.ActionUpgrade,
		Objects: []*plan.ObjectChange{{Ref: web, Action: plan.ObjectUpdate}},
		Impact: &plan.Impact{
			Rollouts: []plan.Rollout{{Ref: web, Replicas: 3, Strategy: plan.Strategy{Type: "RollingUpdate", MaxUnavailable: "25%", MaxSurge: "25%"},
				Causes:  []string{"spec.template.spec.containers[name=web].image"},
				Budgets: []plan.Budget{{Ref: plantest.Ref("policy/v1 PodDisruptionBudget shop/web"), DisruptionsAllowed: &one}}}},
			StaleConfig: []plan.StaleConfig{{Ref: cfg, Consumers: []plan.Consumer{{Ref: plantest.Ref("apps/v1 Deployment shop/worker"), Via: plan.ViaEnv, PicksUp: plan.PicksUpNever}}}},
			DataLoss:    []plan.DataLoss{{Ref: plantest.Ref("v1 PersistentVolumeClaim shop/uploads"), Action: plan.ObjectDelete, Reason: "the claim is deleted"}},
			Requests:    &plan.Resources{CPU: plan.Quantities{Before: "300m", After: "900m"}, Memory: plan.Quantities{Before: "192Mi", After: "192Mi"}},
			Unknown:     []plan.UnknownImpact{{Ref: plantest.Ref("monitoring.coreos.com/v1 ServiceMonitor shop/web"), Action: plan.ObjectUpdate}},
		},
	}}}
}

func TestImpactText(t *testing.T) {
	for _, detail := range []Detail{Full, Compact} {
		var b bytes.Buffer
		if err := TextWith(&b, impactPlan(), TextOptions{Detail: detail}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{
			"      impact: Deployment web rolls (3 pods, maxUnavailable 25%, maxSurge 25%, PodDisruptionBudget web allows 1 disruption now); " +
				"ConfigMap web-cfg changes but its consumers do not restart (Deployment worker: env, never); " +
				"data loss: PersistentVolumeClaim uploads (delete): the claim is deleted; requests +600m CPU; unknown impact: ServiceMonitor web\n",
			"Plan: 0 to install, 1 to upgrade, 0 to uninstall, 0 unchanged.\nImpact: 1 workload rolls (3 pods), 1 config change not picked up without a restart, 1 object loses data, 1 object of unknown impact, requests +600m CPU.\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("detail %d: text lacks %q:\n%s", detail, want, out)
			}
		}
		// The impact line opens the release.
		if lines := strings.Split(out, "\n"); !strings.HasPrefix(lines[3], "      impact: ") {
			t.Errorf("impact is not the release's first line:\n%s", out)
		}
	}
}

func TestImpactJSON(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, impactPlan()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Releases []struct {
			Impact struct {
				Rollouts []struct {
					Ref      string `json:"ref"`
					Replicas int    `json:"replicas"`
					Strategy struct {
						Type           string `json:"type"`
						MaxUnavailable string `json:"max_unavailable"`
					} `json:"strategy"`
					Causes []string `json:"causes"`
				} `json:"rollouts"`
				StaleConfig []struct {
					Consumers []struct {
						Ref     string `json:"ref"`
						PicksUp string `json:"picks_up"`
					} `json:"consumers"`
				} `json:"stale_config"`
				DataLoss []struct {
					Ref string `json:"ref"`
				} `json:"data_loss"`
				Requests struct {
					CPU map[string]string `json:"cpu"`
				} `json:"requests"`
				Unknown []struct {
					Ref string `json:"ref"`
				} `json:"unknown"`
			} `json:"impact"`
		} `json:"releases"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	imp := doc.Releases[0].Impact
	if len(imp.Rollouts) != 1 || imp.Rollouts[0].Ref != "apps/v1 Deployment shop/web" || imp.Rollouts[0].Replicas != 3 || imp.Rollouts[0].Strategy.MaxUnavailable != "25%" {
		t.Errorf("rollouts = %+v", imp.Rollouts)
	}
	if imp.StaleConfig[0].Consumers[0].PicksUp != "never" || imp.DataLoss[0].Ref != "v1 PersistentVolumeClaim shop/uploads" || imp.Unknown[0].Ref == "" {
		t.Errorf("impact = %+v", imp)
	}
	if imp.Requests.CPU["before"] != "300m" || imp.Requests.CPU["after"] != "900m" {
		t.Errorf("requests.cpu = %v", imp.Requests.CPU)
	}
}

func TestImpactMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, impactPlan()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nImpact: 1 workload rolls (3 pods)", "impact: Deployment web rolls (3 pods"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b.String())
		}
	}
}

func TestImpactLineReplacements(t *testing.T) {
	job := plantest.Ref("batch/v1 Job shop/migrate")
	db := plantest.Ref("apps/v1 StatefulSet shop/db")
	imp := &plan.Impact{
		Rollouts: []plan.Rollout{{Ref: job, Replicas: 1, Strategy: plan.Strategy{Type: "Replace"}, Causes: []string{"spec.template.spec.containers[name=m].image"}}},
		Replacements: []plan.Replacement{{Ref: job, Propagation: "background"},
			{Ref: db, Propagation: "orphan", KeptClaims: []string{"data-db-0", "data-db-1"}, Immutable: []string{"spec.volumeClaimTemplates"}, StorageChanges: []string{"data: 8Gi → 10Gi"}}},
	}
	want := "Job migrate is deleted and created again (1 pod); " +
		"StatefulSet db: spec.volumeClaimTemplates cannot change; replaced, its pods orphaned and adopted by the new one; claims kept unchanged: data-db-0, data-db-1 (volumeClaimTemplates data: 8Gi → 10Gi: a StatefulSet never resizes its claims; expand_claims does)"
	if got := impactLine(imp); got != want {
		t.Errorf("impactLine =\n%s\nwant\n%s", got, want)
	}
	// Where no template's size changes (persistence off, a rename),
	// nothing is said of resizing (issue 55, item 8).
	imp.Replacements[1].StorageChanges = nil
	if got := impactLine(imp); strings.Contains(got, "resize") {
		t.Errorf("impactLine without a size change speaks of resizing:\n%s", got)
	}
}

// The claims expand_claims resizes are listed with the release's objects,
// in text and JSON.
func TestClaimExpansionsShown(t *testing.T) {
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Stack: "s", Releases: []*plan.ReleaseChange{{
		Addr: plantest.Addr("pg"), Name: "pg", Namespace: "db", Action: plan.ActionUpgrade,
		ClaimExpansions: []plan.ClaimExpansion{{Ref: plantest.Ref("v1 PersistentVolumeClaim db/data-pg-0"),
			StatefulSet: plantest.Ref("apps/v1 StatefulSet db/pg"), StorageClass: "fast", From: "8Gi", To: "10Gi"}},
	}}}
	var text, js bytes.Buffer
	if err := Text(&text, p); err != nil {
		t.Fatal(err)
	}
	if err := JSON(&js, p); err != nil {
		t.Fatal(err)
	}
	if want := "      ~ PersistentVolumeClaim data-pg-0: storage 8Gi → 10Gi (expand_claims)\n"; !strings.Contains(text.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, text.String())
	}
	if want := `"claim_expansions": [
        {
          "ref": "v1 PersistentVolumeClaim db/data-pg-0",
          "statefulset": "apps/v1 StatefulSet db/pg",
          "storage_class": "fast",
          "from": "8Gi",
          "to": "10Gi"`; !strings.Contains(js.String(), want) {
		t.Errorf("JSON lacks %s:\n%s", want, js.String())
	}
}

// A StatefulSet replaced under its name because its selector changes
// says why, and which claims its recreated pods mount again; a replaced
// Deployment's rollout says why it is replaced.
func TestImpactLineReplacedUnderItsName(t *testing.T) {
	db := plantest.Ref("apps/v1 StatefulSet shop/redis-master")
	web := plantest.Ref("apps/v1 Deployment shop/web")
	imp := &plan.Impact{
		Rollouts: []plan.Rollout{{Ref: web, Replicas: 2, Strategy: plan.Strategy{Type: "Replace"}}},
		Replacements: []plan.Replacement{
			{Ref: web, Propagation: "foreground", Immutable: []string{"spec.selector"}, Why: "spec.selector is immutable and changes: tier (none) → front"},
			{Ref: db, Propagation: "orphan", KeptClaims: []string{"redis-data-redis-master-0"}, Immutable: []string{"spec.selector"}, RecreatesPods: true,
				RemountedClaims: []string{"redis-data-redis-master-0"}, Why: "spec.selector is immutable and changes: app.kubernetes.io/instance redis → cache"}},
	}
	want := "Deployment web is deleted and created again (2 pods): spec.selector is immutable and changes: tier (none) → front; " +
		"StatefulSet redis-master is replaced under its name (spec.selector is immutable and changes: app.kubernetes.io/instance redis → cache): " +
		"deleted with its pods orphaned, which the new one cannot adopt, so they are deleted and created again by it; " +
		"the new pods mount their claims again: redis-data-redis-master-0 (data kept: the claim names do not change); " +
		"claims kept unchanged: redis-data-redis-master-0"
	if got := impactLine(imp); got != want {
		t.Errorf("impactLine =\n%s\nwant\n%s", got, want)
	}
}

// Objects of unknown impact are named by kind, a kind of many counted
// (issue 55, item 8: kube-prometheus-stack's first install printed one
// line of 46 objects).
func TestImpactLineGroupsUnknownByKind(t *testing.T) {
	var imp plan.Impact
	add := func(kind string, n int) {
		for i := range n {
			imp.Unknown = append(imp.Unknown, plan.UnknownImpact{Ref: plan.ObjectRef{Group: "monitoring.coreos.com", Version: "v1", Kind: kind, Namespace: "mon", Name: fmt.Sprintf("%s-%d", strings.ToLower(kind), i)}, Action: plan.ObjectCreate})
		}
	}
	add("PrometheusRule", 30)
	add("ServiceMonitor", 13)
	add("Alertmanager", 1)
	add("Prometheus", 2)
	want := "unknown impact: 30 PrometheusRules; 13 ServiceMonitors; Alertmanager alertmanager-0; Prometheus prometheus-0, prometheus-1"
	if got := impactLine(&imp); got != want {
		t.Errorf("impactLine =\n%s\nwant\n%s", got, want)
	}
	for kind, want := range map[string]string{"Ingress": "Ingresses", "NetworkPolicy": "NetworkPolicies", "Gateway": "Gateways", "HTTPRoute": "HTTPRoutes", "Sandbox": "Sandboxes"} {
		if got := pluralKind(kind); got != want {
			t.Errorf("pluralKind(%s) = %s, want %s", kind, got, want)
		}
	}
}

// A scale to 0 is said as what stops (issue 55, item 8).
func TestImpactLineScaledToZero(t *testing.T) {
	web := plantest.Ref("apps/v1 Deployment shop/web")
	for _, tc := range []struct {
		z    plan.ScaleToZero
		want string
	}{
		{plan.ScaleToZero{Ref: web, From: 2, Services: []plan.ObjectRef{plantest.Ref("v1 Service shop/web")}},
			"Deployment web scales to 0: its 2 pods stop, and Service web has no pod of it to send traffic to; requests -200m CPU"},
		{plan.ScaleToZero{Ref: web, From: 1}, "Deployment web scales to 0: its pod stops, and nothing of it runs; requests -200m CPU"},
		{plan.ScaleToZero{Ref: web, From: 3, Services: []plan.ObjectRef{plantest.Ref("v1 Service shop/web"), plantest.Ref("v1 Service shop/web-headless")}},
			"Deployment web scales to 0: its 3 pods stop, and Services web, web-headless have no pod of it to send traffic to; requests -200m CPU"},
	} {
		imp := &plan.Impact{ScaledToZero: []plan.ScaleToZero{tc.z}, Requests: &plan.Resources{CPU: plan.Quantities{Before: "200m", After: "0"}}}
		if got := impactLine(imp); got != tc.want {
			t.Errorf("impactLine =\n%s\nwant\n%s", got, tc.want)
		}
	}
}
