package plan_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
)

// redis is a bitnami-like StatefulSet: with persistence its data volume
// comes from a volumeClaimTemplates entry, without it is an emptyDir.
func redis(t *testing.T, persistence bool) map[string]any {
	t.Helper()
	vct, volumes := `[{"metadata":{"name":"redis-data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"8Gi"}}}}]`, `[]`
	if !persistence {
		vct, volumes = `[]`, `[{"name":"redis-data","emptyDir":{}}]`
	}
	return obj(t, `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"shop"},
	  "spec":{"replicas":1,"serviceName":"db","selector":{"matchLabels":{"app":"db"}},
	    "template":{"metadata":{"labels":{"app":"db"}},"spec":{"containers":[{"name":"redis","image":"redis:7",
	      "volumeMounts":[{"name":"redis-data","mountPath":"/data"}]}],"volumes":`+volumes+`}},
	    "volumeClaimTemplates":`+vct+`}}`)
}

// withVolume is the web Deployment mounting volume data as src.
func withVolume(t *testing.T, src string) map[string]any {
	d := deployment(t, 1, "web:1", "100m", "a", `,"volumeMounts":[{"name":"data","mountPath":"/data"}]`)
	spec := d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	if src != "" {
		spec["volumes"] = append(spec["volumes"].([]any), obj(t, `{"name":"data",`+src+`}`))
	}
	return d
}

func uploads(t *testing.T) map[string]any {
	return obj(t, `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"uploads","namespace":"shop"},"spec":{"resources":{"requests":{"storage":"1Gi"}}}}`)
}

// TestComputeImpactUnmountedData: each way a release's pods stop mounting
// their data is a data loss, on the object holding the data.
func TestComputeImpactUnmountedData(t *testing.T) {
	claim := `"persistentVolumeClaim":{"claimName":"uploads"}`
	external := `"persistentVolumeClaim":{"claimName":"shared"}`
	facts := plan.ImpactFacts{Claims: map[plan.ObjectRef][]string{dbRef: {"redis-data-db-0"}}}
	for _, tc := range []struct {
		name string
		objs []*plan.ObjectChange
		ref  plan.ObjectRef
		want string
	}{
		{"claim mount removed", []*plan.ObjectChange{change(webRef, plan.ObjectUpdate, withVolume(t, external), withVolume(t, ""))},
			webRef, "its pods no longer mount claim shared (volume data removed)"},
		{"claim volume to emptyDir", []*plan.ObjectChange{change(webRef, plan.ObjectUpdate, withVolume(t, external), withVolume(t, `"emptyDir":{}`))},
			webRef, "its pods no longer mount claim shared (volume data now emptyDir)"},
		{"volumeClaimTemplates entry removed", []*plan.ObjectChange{change(dbRef, plan.ObjectReplace, redis(t, true), redis(t, false))},
			dbRef, "volumeClaimTemplates entry redis-data is removed: its pods no longer mount claim redis-data-db-0 (volume redis-data now emptyDir); the claims keep their data, but the pods run without it"},
		{"claim of the release unreferenced", []*plan.ObjectChange{
			change(webRef, plan.ObjectUpdate, withVolume(t, claim), withVolume(t, `"emptyDir":{}`)),
			change(pvcRef, plan.ObjectNoOp, uploads(t), uploads(t))},
			pvcRef, "no workload of the release mounts it any more (Deployment web did)"},
		{"claim of the release, workload deleted", []*plan.ObjectChange{
			change(webRef, plan.ObjectDelete, withVolume(t, claim), nil),
			change(pvcRef, plan.ObjectNoOp, uploads(t), uploads(t))},
			pvcRef, "no workload of the release mounts it any more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			imp := plan.ComputeImpact(release(tc.objs...), facts)
			if imp == nil || len(imp.DataLoss) != 1 {
				t.Fatalf("data loss = %+v, want one on %s", imp, tc.ref)
			}
			if d := imp.DataLoss[0]; d.Ref != tc.ref || !strings.Contains(d.Reason, tc.want) {
				t.Errorf("data loss = %s: %s\nwant on %s: …%s…", d.Ref, d.Reason, tc.ref, tc.want)
			}
		})
	}
	// Still mounted: nothing lost.
	for _, tc := range []struct {
		name string
		objs []*plan.ObjectChange
	}{
		{"image change", []*plan.ObjectChange{change(webRef, plan.ObjectUpdate, withVolume(t, claim), withVolume(t, claim))}},
		{"volumeClaimTemplates entry added", []*plan.ObjectChange{change(dbRef, plan.ObjectReplace, redis(t, false), redis(t, true))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if imp := plan.ComputeImpact(release(tc.objs...), facts); imp != nil && len(imp.DataLoss) > 0 {
				t.Errorf("data loss = %+v, want none", imp.DataLoss)
			}
		})
	}
}

// TestStatefulSetReplacement: a StatefulSet whose volumeClaimTemplates
// change is replaced with its pods orphaned; the new one adopts them
// unless it adds a template, and then they are recreated.
func TestStatefulSetReplacement(t *testing.T) {
	grown := redis(t, true)
	grown["spec"].(map[string]any)["volumeClaimTemplates"].([]any)[0].(map[string]any)["spec"].(map[string]any)["resources"] = map[string]any{"requests": map[string]any{"storage": "10Gi"}}
	for _, tc := range []struct {
		name          string
		before, after map[string]any
		recreates     bool
		strategy      string
		storage       []string // the templates whose size changes
	}{
		{"persistence off", redis(t, true), redis(t, false), false, "RollingUpdate", nil},
		{"persistence on", redis(t, false), redis(t, true), true, "Replace", nil},
		{"storage grown", redis(t, true), grown, false, "", []string{"redis-data: 8Gi → 10Gi"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			imp := plan.ComputeImpact(release(change(dbRef, plan.ObjectReplace, tc.before, tc.after)), plan.ImpactFacts{})
			if len(imp.Replacements) != 1 {
				t.Fatalf("replacements = %+v", imp.Replacements)
			}
			r := imp.Replacements[0]
			if r.Propagation != "orphan" || r.RecreatesPods != tc.recreates || len(r.Immutable) != 1 || r.Immutable[0] != "spec.volumeClaimTemplates" {
				t.Errorf("replacement = %+v, want orphan, recreates_pods %v, immutable spec.volumeClaimTemplates", r, tc.recreates)
			}
			var got string
			if len(imp.Rollouts) > 0 {
				got = imp.Rollouts[0].Strategy.Type
			}
			if got != tc.strategy {
				t.Errorf("rollout strategy = %q, want %q (%+v)", got, tc.strategy, imp.Rollouts)
			}
			if !slices.Equal(r.StorageChanges, tc.storage) {
				t.Errorf("storage changes = %q, want %q", r.StorageChanges, tc.storage)
			}
		})
	}
}
