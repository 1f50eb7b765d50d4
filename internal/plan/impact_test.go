package plan_test

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/convoy-sh/convoy/internal/plan"
)

// obj decodes a JSON object, for readable fixtures.
func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("fixture %s: %v", s, err)
	}
	return m
}

// change is an object change as the planner makes it: the diff between
// before and after without status.
func change(ref plan.ObjectRef, action plan.ObjectAction, before, after map[string]any) *plan.ObjectChange {
	strip := func(m map[string]any) map[string]any {
		if m == nil {
			return map[string]any{}
		}
		m = maps.Clone(m)
		delete(m, "status")
		return m
	}
	ch := &plan.ObjectChange{Ref: ref, Action: action, Before: before, After: after}
	if action == plan.ObjectUpdate || action == plan.ObjectReplace || action == plan.ObjectCreate {
		ch.Diff = plan.Compare(strip(before), strip(after))
	}
	return ch
}

var (
	webRef = plan.ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	cfgRef = plan.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "web-cfg"}
	pdbRef = plan.ObjectRef{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget", Namespace: "shop", Name: "web"}
	hpaRef = plan.ObjectRef{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler", Namespace: "shop", Name: "web"}
	dbRef  = plan.ObjectRef{Group: "apps", Version: "v1", Kind: "StatefulSet", Namespace: "shop", Name: "db"}
	pvcRef = plan.ObjectRef{Version: "v1", Kind: "PersistentVolumeClaim", Namespace: "shop", Name: "uploads"}
	crdRef = plan.ObjectRef{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: "widgets.example.com"}
	nsRef  = plan.ObjectRef{Version: "v1", Kind: "Namespace", Name: "scratch"}
	smRef  = plan.ObjectRef{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor", Namespace: "shop", Name: "web"}
	jobRef = plan.ObjectRef{Group: "batch", Version: "v1", Kind: "Job", Namespace: "shop", Name: "migrate"}
)

// deployment is the web Deployment with replicas, an image, a CPU
// request, a pod annotation and a pod spec tail (volumes, env).
func deployment(t *testing.T, replicas int, image, cpu, annotation, podTail string) map[string]any {
	t.Helper()
	return obj(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},
	  "spec":{"replicas":`+itoa(replicas)+`,"selector":{"matchLabels":{"app":"web"}},
	    "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}},
	    "template":{"metadata":{"labels":{"app":"web"},"annotations":{"checksum/config":"`+annotation+`"}},
	      "spec":{"containers":[{"name":"web","image":"`+image+`","resources":{"requests":{"cpu":"`+cpu+`","memory":"64Mi"}}`+podTail+`}],
	        "volumes":[{"name":"cfg","configMap":{"name":"web-cfg"}}]}}},
	  "status":{"replicas":`+itoa(replicas)+`}}`)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func configMap(t *testing.T, conf string) map[string]any {
	return obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web-cfg","namespace":"shop"},"data":{"app.conf":"`+conf+`","other":"x"}}`)
}

func release(objs ...*plan.ObjectChange) *plan.ReleaseChange {
	return &plan.ReleaseChange{Action: plan.ActionUpgrade, Objects: objs}
}

func TestComputeImpact(t *testing.T) {
	pdb := obj(t, `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"web","namespace":"shop"},"spec":{"maxUnavailable":1,"selector":{"matchLabels":{"app":"web"}}},"status":{"disruptionsAllowed":1}}`)
	one := 1
	two := 2
	sts := func(storage, image, retention string, replicas, partition int) map[string]any {
		return obj(t, `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"shop"},
		  "spec":{"replicas":`+itoa(replicas)+`,"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":`+itoa(partition)+`}},
		    "persistentVolumeClaimRetentionPolicy":{"whenDeleted":"`+retention+`","whenScaled":"Retain"},
		    "template":{"metadata":{"labels":{"app":"db"}},"spec":{"containers":[{"name":"db","image":"`+image+`","resources":{"requests":{"cpu":"250m","memory":"256Mi"}}}]}},
		    "volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"resources":{"requests":{"storage":"`+storage+`"}}}}]}}`)
	}
	tests := []struct {
		name  string
		rc    *plan.ReleaseChange
		facts plan.ImpactFacts
		check func(t *testing.T, imp *plan.Impact)
	}{
		{
			name: "image change rolls with strategy, replicas and the PDB",
			rc: release(
				change(webRef, plan.ObjectUpdate, deployment(t, 3, "web:1", "100m", "a", ""), deployment(t, 3, "web:2", "100m", "a", "")),
				change(pdbRef, plan.ObjectNoOp, pdb, pdb),
			),
			check: func(t *testing.T, imp *plan.Impact) {
				want := []plan.Rollout{{Ref: webRef, Replicas: 3,
					Strategy: plan.Strategy{Type: "RollingUpdate", MaxUnavailable: "25%", MaxSurge: "25%"},
					Causes:   []string{"spec.template.spec.containers[name=web].image"},
					Budgets:  []plan.Budget{{Ref: pdbRef, DisruptionsAllowed: &one}}}}
				diffT(t, want, imp.Rollouts)
				if len(imp.StaleConfig) != 0 || len(imp.Unknown) != 0 || imp.Requests.Changed() {
					t.Errorf("only a rollout expected, got %+v", imp)
				}
			},
		},
		{
			name: "config change without checksum is stale for its volume consumer",
			rc: release(
				change(webRef, plan.ObjectNoOp, deployment(t, 3, "web:1", "100m", "a", ""), deployment(t, 3, "web:1", "100m", "a", "")),
				change(cfgRef, plan.ObjectUpdate, configMap(t, "v1"), configMap(t, "v2")),
			),
			check: func(t *testing.T, imp *plan.Impact) {
				diffT(t, []plan.StaleConfig{{Ref: cfgRef, Consumers: []plan.Consumer{{Ref: webRef, Via: plan.ViaVolume, PicksUp: plan.PicksUpEventually}}}}, imp.StaleConfig)
				diffT(t, []plan.Rollout(nil), imp.Rollouts)
			},
		},
		{
			name: "env consumers never pick it up; another key's consumer is not one",
			rc: release(
				change(webRef, plan.ObjectNoOp,
					deployment(t, 1, "web:1", "100m", "a", `,"env":[{"name":"A","valueFrom":{"configMapKeyRef":{"name":"web-cfg","key":"app.conf"}}},{"name":"B","valueFrom":{"configMapKeyRef":{"name":"web-cfg","key":"other"}}}],"envFrom":[{"configMapRef":{"name":"web-cfg"}}],"volumeMounts":[{"name":"cfg","mountPath":"/etc/app.conf","subPath":"app.conf"}]`),
					deployment(t, 1, "web:1", "100m", "a", `,"env":[{"name":"A","valueFrom":{"configMapKeyRef":{"name":"web-cfg","key":"app.conf"}}},{"name":"B","valueFrom":{"configMapKeyRef":{"name":"web-cfg","key":"other"}}}],"envFrom":[{"configMapRef":{"name":"web-cfg"}}],"volumeMounts":[{"name":"cfg","mountPath":"/etc/app.conf","subPath":"app.conf"}]`)),
				change(cfgRef, plan.ObjectUpdate, configMap(t, "v1"), configMap(t, "v2")),
			),
			check: func(t *testing.T, imp *plan.Impact) {
				diffT(t, []plan.StaleConfig{{Ref: cfgRef, Consumers: []plan.Consumer{
					{Ref: webRef, Via: plan.ViaVolume, PicksUp: plan.PicksUpNever},
					{Ref: webRef, Via: plan.ViaEnvFrom, PicksUp: plan.PicksUpNever},
					{Ref: webRef, Via: plan.ViaEnv, PicksUp: plan.PicksUpNever},
				}}}, imp.StaleConfig)
			},
		},
		{
			name: "a checksum annotation rolls the consumer instead",
			rc: release(
				change(webRef, plan.ObjectUpdate, deployment(t, 3, "web:1", "100m", "a", ""), deployment(t, 3, "web:1", "100m", "b", "")),
				change(cfgRef, plan.ObjectUpdate, configMap(t, "v1"), configMap(t, "v2")),
			),
			check: func(t *testing.T, imp *plan.Impact) {
				if len(imp.Rollouts) != 1 || imp.Rollouts[0].Causes[0] != `spec.template.metadata.annotations["checksum/config"]` {
					t.Errorf("rollouts = %+v", imp.Rollouts)
				}
				diffT(t, []plan.StaleConfig(nil), imp.StaleConfig)
			},
		},
		{
			name: "CPU request totals over replicas",
			rc: release(
				change(webRef, plan.ObjectUpdate, deployment(t, 3, "web:1", "100m", "a", ""), deployment(t, 3, "web:1", "300m", "a", "")),
			),
			check: func(t *testing.T, imp *plan.Impact) {
				diffT(t, &plan.Resources{CPU: plan.Quantities{Before: "300m", After: "900m"}, Memory: plan.Quantities{Before: "192Mi", After: "192Mi"}}, imp.Requests)
				if d := imp.Requests.CPU.Delta(); d != "+600m" {
					t.Errorf("delta = %q", d)
				}
			},
		},
		{
			name: "autoscaled replicas come from the live object",
			rc: release(
				change(webRef, plan.ObjectUpdate, deployment(t, 5, "web:1", "100m", "a", ""), deployment(t, 1, "web:2", "100m", "a", "")),
				change(hpaRef, plan.ObjectNoOp, nil, obj(t, `{"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"}}}`)),
			),
			check: func(t *testing.T, imp *plan.Impact) {
				if imp.Rollouts[0].Replicas != 5 {
					t.Errorf("replicas = %d, want the live 5", imp.Rollouts[0].Replicas)
				}
				diffT(t, plan.Quantities{Before: "500m", After: "500m"}, imp.Requests.CPU)
			},
		},
		{
			name: "init containers count as Kubernetes counts them",
			rc: release(change(webRef, plan.ObjectCreate, nil, obj(t, `{"spec":{"replicas":2,"template":{"spec":{
				"initContainers":[{"name":"migrate","resources":{"requests":{"cpu":"1","memory":"1Gi"}}},{"name":"proxy","restartPolicy":"Always","resources":{"requests":{"cpu":"100m","memory":"32Mi"}}}],
				"containers":[{"name":"web","resources":{"limits":{"cpu":"200m","memory":"128Mi"}}}]}}}}`))),
			check: func(t *testing.T, imp *plan.Impact) {
				// max(init 1 CPU, app 200m (request from limit) + sidecar 100m) × 2
				diffT(t, &plan.Resources{CPU: plan.Quantities{Before: "0", After: "2"}, Memory: plan.Quantities{Before: "0", After: "2Gi"}}, imp.Requests)
				diffT(t, plan.Quantities{Before: "0", After: "400m"}, imp.Limits.CPU)
				diffT(t, []plan.Rollout(nil), imp.Rollouts)
			},
		},
		{
			name: "StatefulSet rollout with its partition",
			rc:   release(change(dbRef, plan.ObjectUpdate, sts("1Gi", "pg:15", "Retain", 3, 2), sts("1Gi", "pg:16", "Retain", 3, 2))),
			check: func(t *testing.T, imp *plan.Impact) {
				diffT(t, []plan.Rollout{{Ref: dbRef, Replicas: 3, Strategy: plan.Strategy{Type: "RollingUpdate", MaxUnavailable: "1", Partition: &two},
					Causes: []string{"spec.template.spec.containers[name=db].image"}}}, imp.Rollouts)
			},
		},
		{
			name:  "replaced StatefulSet keeps its claims and loses nothing",
			rc:    release(change(dbRef, plan.ObjectReplace, sts("1Gi", "pg:15", "Delete", 2, 0), sts("2Gi", "pg:15", "Delete", 2, 0))),
			facts: plan.ImpactFacts{Claims: map[plan.ObjectRef][]string{dbRef: {"data-db-0", "data-db-1"}}},
			check: func(t *testing.T, imp *plan.Impact) {
				if len(imp.Replacements) != 1 || imp.Replacements[0].Propagation != "orphan" || len(imp.Replacements[0].KeptClaims) != 2 {
					t.Errorf("replacements = %+v", imp.Replacements)
				}
				diffT(t, []plan.DataLoss(nil), imp.DataLoss)
				diffT(t, []plan.Rollout(nil), imp.Rollouts)
			},
		},
		{
			name: "deletions that lose data",
			rc: release(
				change(pvcRef, plan.ObjectDelete, obj(t, `{"kind":"PersistentVolumeClaim"}`), nil),
				change(dbRef, plan.ObjectDelete, sts("1Gi", "pg:15", "Delete", 2, 0), nil),
				change(plan.ObjectRef{Group: "apps", Version: "v1", Kind: "StatefulSet", Namespace: "shop", Name: "kept"}, plan.ObjectDelete, sts("1Gi", "pg:15", "Retain", 2, 0), nil),
				change(crdRef, plan.ObjectDelete, obj(t, `{}`), nil),
				change(nsRef, plan.ObjectDelete, obj(t, `{}`), nil),
			),
			facts: plan.ImpactFacts{Claims: map[plan.ObjectRef][]string{dbRef: {"data-db-0"}}},
			check: func(t *testing.T, imp *plan.Impact) {
				var got []string
				for _, d := range imp.DataLoss {
					got = append(got, d.Ref.Kind+"/"+d.Ref.Name)
				}
				diffT(t, []string{"PersistentVolumeClaim/uploads", "StatefulSet/db", "CustomResourceDefinition/widgets.example.com", "Namespace/scratch"}, got)
				diffT(t, &plan.Resources{CPU: plan.Quantities{Before: "1", After: "0"}, Memory: plan.Quantities{Before: "1Gi", After: "0"}}, imp.Requests)
			},
		},
		{
			name: "a replaced Job reruns",
			rc:   release(change(jobRef, plan.ObjectReplace, obj(t, `{"spec":{"template":{"spec":{"containers":[{"name":"m","image":"m:1"}]}}}}`), obj(t, `{"spec":{"template":{"spec":{"containers":[{"name":"m","image":"m:2"}]}}}}`))),
			check: func(t *testing.T, imp *plan.Impact) {
				diffT(t, []plan.Rollout{{Ref: jobRef, Replicas: 1, Strategy: plan.Strategy{Type: "Replace"}, Causes: []string{"spec.template.spec.containers[name=m].image"}}}, imp.Rollouts)
				diffT(t, []plan.Replacement{{Ref: jobRef, Propagation: "foreground", Immutable: []string{"spec.template"},
					Why:  "spec.template is immutable and changes: spec.containers[name=m].image m:1 → m:2",
					Note: "deleted with foreground propagation, and apply waits until it and its pods are gone before creating it again: no pod of the old one is left behind"}}, imp.Replacements)
				if imp.Requests != nil {
					t.Errorf("Jobs are not in the totals: %+v", imp.Requests)
				}
			},
		},
		{
			name: "custom resources are unknown",
			rc:   release(change(smRef, plan.ObjectUpdate, obj(t, `{"spec":{"interval":"30s"}}`), obj(t, `{"spec":{"interval":"10s"}}`))),
			check: func(t *testing.T, imp *plan.Impact) {
				diffT(t, []plan.UnknownImpact{{Ref: smRef, Action: plan.ObjectUpdate}}, imp.Unknown)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			imp := plan.ComputeImpact(tt.rc, tt.facts)
			if imp == nil {
				t.Fatal("no impact")
			}
			tt.check(t, imp)
		})
	}
}

func TestComputeImpactNoOp(t *testing.T) {
	rc := release()
	rc.Action = plan.ActionNoOp
	if imp := plan.ComputeImpact(rc, plan.ImpactFacts{}); imp != nil {
		t.Errorf("impact of a no-op: %+v", imp)
	}
}

func diffT(t *testing.T, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// A workload scaled to 0 says that its pods all stop and which of the
// release's Services select them (issue 55, item 8: it said only
// "-100m CPU, -64Mi memory").
func TestComputeImpactScaledToZero(t *testing.T) {
	svcRef := plan.ObjectRef{Version: "v1", Kind: "Service", Namespace: "shop", Name: "web"}
	svc := obj(t, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"shop"},"spec":{"selector":{"app":"web"},"ports":[{"port":80}]}}`)
	other := obj(t, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"api","namespace":"shop"},"spec":{"selector":{"app":"api"},"ports":[{"port":80}]}}`)
	otherRef := svcRef
	otherRef.Name = "api"
	imp := plan.ComputeImpact(release(
		change(webRef, plan.ObjectUpdate, deployment(t, 2, "web:1", "100m", "a", ""), deployment(t, 0, "web:1", "100m", "a", "")),
		change(svcRef, plan.ObjectNoOp, svc, svc),
		change(otherRef, plan.ObjectNoOp, other, other),
	), plan.ImpactFacts{})
	want := []plan.ScaleToZero{{Ref: webRef, From: 2, Services: []plan.ObjectRef{svcRef}}}
	diffT(t, want, imp.ScaledToZero)
	if imp.Empty() {
		t.Error("a scale to 0 is an empty impact")
	}
	// Scaled down but not to 0, or up from 0: not said.
	for _, tc := range []struct{ from, to int }{{3, 1}, {0, 2}} {
		imp := plan.ComputeImpact(release(change(webRef, plan.ObjectUpdate, deployment(t, tc.from, "web:1", "100m", "a", ""), deployment(t, tc.to, "web:1", "100m", "a", ""))), plan.ImpactFacts{})
		if imp != nil && len(imp.ScaledToZero) > 0 {
			t.Errorf("%d → %d: scaled to zero %+v", tc.from, tc.to, imp.ScaledToZero)
		}
	}
	if s := (&plan.Plan{Releases: []*plan.ReleaseChange{{Impact: imp}}}).ImpactSummary().String(); !strings.Contains(s, "1 workload scales to 0") {
		t.Errorf("summary %q", s)
	}
}
