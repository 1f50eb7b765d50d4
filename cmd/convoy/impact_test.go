package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// impactStack is a stack of one release of the impact chart with values.
// It does not wait: without a volume provisioner, the claims stay Pending
// and the StatefulSet's pods unscheduled.
func impactStack(chart, ns, values string) string {
	return fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "shop" {
  chart  = %[1]q
  values = [{ %[3]s }]
  wait   = false
}
`, chart, ns, values)
}

// impactDoc is the part of the --json document impact tests read.
type impactDoc struct {
	Releases []struct {
		Address string `json:"address"`
		Objects []struct {
			Ref    string `json:"ref"`
			Action string `json:"action"`
			Reason string `json:"reason"`
		} `json:"objects"`
		Impact *struct {
			Rollouts []struct {
				Ref      string   `json:"ref"`
				Replicas int      `json:"replicas"`
				Causes   []string `json:"causes"`
				Budgets  []struct {
					Ref string `json:"ref"`
				} `json:"budgets"`
			} `json:"rollouts"`
			StaleConfig []struct {
				Ref       string `json:"ref"`
				Consumers []struct {
					Ref     string `json:"ref"`
					Via     string `json:"via"`
					PicksUp string `json:"picks_up"`
				} `json:"consumers"`
			} `json:"stale_config"`
			DataLoss []struct {
				Ref    string `json:"ref"`
				Action string `json:"action"`
			} `json:"data_loss"`
			Replacements []struct {
				Ref         string   `json:"ref"`
				Propagation string   `json:"propagation"`
				KeptClaims  []string `json:"kept_claims"`
			} `json:"replacements"`
			Requests struct {
				CPU struct {
					Before string `json:"before"`
					After  string `json:"after"`
				} `json:"cpu"`
			} `json:"requests"`
		} `json:"impact"`
	} `json:"releases"`
}

// impactPlan writes the stack with values and plans it as JSON and text.
func impactPlan(t *testing.T, dir, ns, values string) (impactDoc, string) {
	t.Helper()
	kc := cluster.Kubeconfig()
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(impactStack(testChart(t, "impact"), ns, values)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--json")
	var doc impactDoc
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Releases) != 1 {
		t.Fatalf("plan --json: exit %d\n%s\n%s", code, out, errOut)
	}
	code, text, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc)
	if code != 0 {
		t.Fatalf("plan: exit %d\n%s\n%s", code, text, errOut)
	}
	if doc.Releases[0].Impact == nil {
		t.Fatalf("no impact:\n%s", out)
	}
	return doc, text
}

func TestImpactOfChanges(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	dir := writeStack(t, impactStack(testChart(t, "impact"), ns, ""))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	web := "apps/v1 Deployment " + ns + "/web"

	t.Run("image change rolls the Deployment", func(t *testing.T) {
		doc, text := impactPlan(t, dir, ns, `image = "nginx:1.28"`)
		imp := doc.Releases[0].Impact
		if len(imp.Rollouts) != 1 || imp.Rollouts[0].Ref != web || imp.Rollouts[0].Replicas != 3 ||
			!slices.Contains(imp.Rollouts[0].Causes, "spec.template.spec.containers[name=web].image") ||
			len(imp.Rollouts[0].Budgets) != 1 {
			t.Errorf("rollouts = %+v", imp.Rollouts)
		}
		if !strings.Contains(text, "      impact: Deployment web rolls (3 pods, maxUnavailable 25%, maxSurge 25%, PodDisruptionBudget web") ||
			!strings.Contains(text, "Impact: 1 workload rolls (3 pods).") {
			t.Errorf("text plan:\n%s", text)
		}
	})
	t.Run("config change without a checksum is stale", func(t *testing.T) {
		doc, text := impactPlan(t, dir, ns, `config = "level = debug"`)
		imp := doc.Releases[0].Impact
		if len(imp.Rollouts) != 0 || len(imp.StaleConfig) != 1 || imp.StaleConfig[0].Ref != "v1 ConfigMap "+ns+"/web-cfg" ||
			len(imp.StaleConfig[0].Consumers) != 1 || imp.StaleConfig[0].Consumers[0].Ref != web || imp.StaleConfig[0].Consumers[0].PicksUp != "eventually" {
			t.Errorf("impact = %+v", imp)
		}
		if !strings.Contains(text, "impact: ConfigMap web-cfg changes but its consumers do not restart (Deployment web: volume, eventually)") {
			t.Errorf("text plan:\n%s", text)
		}
	})
	t.Run("config change with a checksum rolls", func(t *testing.T) {
		// The checksum annotation itself changes the template: apply it
		// first, then change the config.
		if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(impactStack(testChart(t, "impact"), ns, "checksum = true")), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
			t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
		}
		doc, _ := impactPlan(t, dir, ns, `checksum = true, config = "level = debug"`)
		imp := doc.Releases[0].Impact
		if len(imp.StaleConfig) != 0 || len(imp.Rollouts) != 1 || imp.Rollouts[0].Ref != web ||
			!slices.Contains(imp.Rollouts[0].Causes, `spec.template.metadata.annotations["checksum/config"]`) {
			t.Errorf("impact = %+v", imp)
		}
	})
	t.Run("CPU request totals", func(t *testing.T) {
		doc, _ := impactPlan(t, dir, ns, `checksum = true, cpu = "300m"`)
		// web's 3 replicas at 100m before (db asks for memory only), as
		// the acceptance states it.
		cpu := doc.Releases[0].Impact.Requests.CPU
		if cpu.Before != "300m" || cpu.After != "900m" {
			t.Errorf("requests.cpu = %+v, want 300m → 900m", cpu)
		}
	})
	t.Run("removed PVC loses data", func(t *testing.T) {
		doc, _ := impactPlan(t, dir, ns, `checksum = true, pvc = false`)
		imp := doc.Releases[0].Impact
		if len(imp.DataLoss) != 1 || imp.DataLoss[0].Ref != "v1 PersistentVolumeClaim "+ns+"/uploads" || imp.DataLoss[0].Action != "delete" {
			t.Errorf("data_loss = %+v", imp.DataLoss)
		}
	})
}

func TestImpactStatefulSetStorageReplace(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	ctx := context.Background()
	dir := writeStack(t, impactStack(testChart(t, "impact"), ns, ""))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	// The StatefulSet controller creates the claims with the pods.
	claims := waitClaims(t, ns, 3) // data-db-0, data-db-1, uploads
	before, err := cluster.Client().AppsV1().StatefulSets(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(impactStack(testChart(t, "impact"), ns, `storage = "2Gi"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "-/+ apps/v1 StatefulSet "+ns+"/db (") || !strings.Contains(out, "updates to statefulset spec for fields other than") ||
		!strings.Contains(out, "StatefulSet db: spec.volumeClaimTemplates cannot change; replaced, its pods orphaned and adopted by the new one; claims kept unchanged: data-db-0, data-db-1 (volumeClaimTemplates data: 1Gi → 2Gi: a StatefulSet never resizes its claims; expand_claims does)") {
		t.Fatalf("plan --detailed-exitcode: exit %d\n%s\n%s", code, out, errOut)
	}
	doc, _ := impactPlan(t, dir, ns, `storage = "2Gi"`)
	var action string
	for _, o := range doc.Releases[0].Objects {
		if o.Ref == "apps/v1 StatefulSet "+ns+"/db" {
			action = o.Action
		}
	}
	imp := doc.Releases[0].Impact
	if action != "replace" || len(imp.Replacements) != 1 || imp.Replacements[0].Propagation != "orphan" || len(imp.DataLoss) != 0 {
		t.Fatalf("action %q, impact %+v", action, imp)
	}

	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	after, err := cluster.Client().AppsV1().StatefulSets(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.UID == before.UID {
		t.Errorf("the StatefulSet was not replaced")
	}
	if got := after.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().String(); got != "2Gi" {
		t.Errorf("new template requests %s, want 2Gi", got)
	}
	for _, c := range claims {
		got, err := cluster.Client().CoreV1().PersistentVolumeClaims(ns).Get(ctx, c.name, metav1.GetOptions{})
		if err != nil || string(got.UID) != c.uid || got.DeletionTimestamp != nil {
			t.Errorf("claim %s: %v (deleted: %v)", c.name, err, got != nil && got.DeletionTimestamp != nil)
		}
	}
	// Planned again, nothing changes.
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
		t.Errorf("plan after apply: exit %d\n%s\n%s", code, out, errOut)
	}
}

type claim struct{ name, uid string }

// waitClaims waits until ns holds n PersistentVolumeClaims.
func waitClaims(t *testing.T, ns string, n int) []claim {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		list, err := cluster.Client().CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) >= n {
			var out []claim
			for _, c := range list.Items {
				out = append(out, claim{c.Name, string(c.UID)})
			}
			return out
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d claims in %s, want %d", len(list.Items), ns, n)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
