package plan_test

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/plantest"
	"github.com/convoy-sh/convoy/internal/plan/view"
)

// impactScene is a row of docs/impact.md's table: what convoy saw (a
// release's object changes, and the claims the cluster has) and, in the
// doc, what the plan's impact line says of it.
type impactScene struct {
	objs  []*plan.ObjectChange
	facts plan.ImpactFacts
}

func impactScenes(t *testing.T) map[string]impactScene {
	set := func(m map[string]any, path string, v any) map[string]any {
		keys := strings.Split(path, ".")
		cur := m
		for _, k := range keys[:len(keys)-1] {
			cur = cur[k].(map[string]any)
		}
		cur[keys[len(keys)-1]] = v
		return m
	}
	web := func(replicas int, image, cpu string) map[string]any {
		return deployment(t, replicas, image, cpu, "a", "")
	}
	pdb := obj(t, `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"web","namespace":"shop"},"spec":{"maxUnavailable":1,"selector":{"matchLabels":{"app":"web"}}},"status":{"disruptionsAllowed":1}}`)
	svc := obj(t, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"shop"},"spec":{"selector":{"app":"web"},"ports":[{"port":80}]}}`)
	svcRef := plan.ObjectRef{Version: "v1", Kind: "Service", Namespace: "shop", Name: "web"}
	sts := func(image string, replicas, partition int, strategy string) map[string]any {
		return obj(t, `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"shop"},
		  "spec":{"replicas":`+itoa(replicas)+`,"updateStrategy":{"type":"`+strategy+`","rollingUpdate":{"partition":`+itoa(partition)+`}},
		    "persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Delete","whenScaled":"Retain"},
		    "template":{"metadata":{"labels":{"app":"db"}},"spec":{"containers":[{"name":"db","image":"`+image+`","resources":{"requests":{"cpu":"250m","memory":"256Mi"}}}]}},
		    "volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"resources":{"requests":{"storage":"1Gi"}}}}]}}`)
	}
	cron := func(image string) map[string]any {
		return obj(t, `{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"backup","namespace":"shop"},
		  "spec":{"schedule":"0 3 * * *","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"OnFailure","containers":[{"name":"b","image":"`+image+`"}]}}}}}}`)
	}
	cronRef := plan.ObjectRef{Group: "batch", Version: "v1", Kind: "CronJob", Namespace: "shop", Name: "backup"}
	grown := redis(t, true)
	set(grown, "spec.volumeClaimTemplates", []any{obj(t, `{"metadata":{"name":"redis-data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"10Gi"}}}}`)})
	rule := func(name string) *plan.ObjectChange {
		ref := plan.ObjectRef{Group: "monitoring.coreos.com", Version: "v1", Kind: "PrometheusRule", Namespace: "shop", Name: name}
		return change(ref, plan.ObjectCreate, nil, obj(t, `{"spec":{"groups":[]}}`))
	}
	claims := plan.ImpactFacts{Claims: map[plan.ObjectRef][]string{dbRef: {"redis-data-db-0"}}}
	return map[string]impactScene{
		"rolling-update": {objs: []*plan.ObjectChange{change(webRef, plan.ObjectUpdate, web(3, "web:1", "100m"), web(3, "web:2", "100m"))}},
		"rolling-update-budget": {objs: []*plan.ObjectChange{
			change(webRef, plan.ObjectUpdate, web(3, "web:1", "100m"), web(3, "web:2", "100m")),
			change(pdbRef, plan.ObjectNoOp, pdb, pdb)}},
		"recreate": {objs: []*plan.ObjectChange{change(webRef, plan.ObjectUpdate,
			set(web(2, "web:1", "100m"), "spec.strategy", map[string]any{"type": "Recreate"}),
			set(web(2, "web:2", "100m"), "spec.strategy", map[string]any{"type": "Recreate"}))}},
		"partition":   {objs: []*plan.ObjectChange{change(dbRef, plan.ObjectUpdate, sts("pg:15", 3, 2, "RollingUpdate"), sts("pg:16", 3, 2, "RollingUpdate"))}},
		"on-delete":   {objs: []*plan.ObjectChange{change(dbRef, plan.ObjectUpdate, sts("pg:15", 1, 0, "OnDelete"), sts("pg:16", 1, 0, "OnDelete"))}},
		"cronjob":     {objs: []*plan.ObjectChange{change(cronRef, plan.ObjectUpdate, cron("b:1"), cron("b:2"))}},
		"job-rerun":   {objs: []*plan.ObjectChange{change(jobRef, plan.ObjectReplace, obj(t, `{"spec":{"template":{"spec":{"containers":[{"name":"m","image":"m:1"}]}}}}`), obj(t, `{"spec":{"template":{"spec":{"containers":[{"name":"m","image":"m:2"}]}}}}`))}},
		"requests":    {objs: []*plan.ObjectChange{change(webRef, plan.ObjectUpdate, web(2, "web:1", "100m"), web(3, "web:1", "100m"))}},
		"new-release": {objs: []*plan.ObjectChange{change(webRef, plan.ObjectCreate, nil, web(2, "web:1", "100m"))}},
		"stale-config-volume": {objs: []*plan.ObjectChange{
			change(cfgRef, plan.ObjectUpdate, configMap(t, "a"), configMap(t, "b")),
			change(webRef, plan.ObjectNoOp, web(1, "web:1", "100m"), web(1, "web:1", "100m"))}},
		"stale-config-env": {objs: []*plan.ObjectChange{
			change(cfgRef, plan.ObjectUpdate, configMap(t, "a"), configMap(t, "b")),
			change(webRef, plan.ObjectNoOp,
				deployment(t, 1, "web:1", "100m", "a", `,"envFrom":[{"configMapRef":{"name":"web-cfg"}}]`),
				deployment(t, 1, "web:1", "100m", "a", `,"envFrom":[{"configMapRef":{"name":"web-cfg"}}]`))}},
		"scaled-to-zero": {objs: []*plan.ObjectChange{
			change(webRef, plan.ObjectUpdate, web(2, "web:1", "100m"), web(0, "web:1", "100m")),
			change(svcRef, plan.ObjectNoOp, svc, svc)}},
		"scaled-to-zero-alone": {objs: []*plan.ObjectChange{change(webRef, plan.ObjectUpdate, web(1, "web:1", "100m"), web(0, "web:1", "100m"))}},
		"claim-deleted":        {objs: []*plan.ObjectChange{change(pvcRef, plan.ObjectDelete, uploads(t), nil)}},
		"statefulset-deleted": {objs: []*plan.ObjectChange{change(dbRef, plan.ObjectDelete, sts("pg:15", 1, 0, "RollingUpdate"), nil)},
			facts: plan.ImpactFacts{Claims: map[plan.ObjectRef][]string{dbRef: {"data-db-0"}}}},
		"crd-deleted":       {objs: []*plan.ObjectChange{change(crdRef, plan.ObjectDelete, obj(t, `{}`), nil)}},
		"namespace-deleted": {objs: []*plan.ObjectChange{change(nsRef, plan.ObjectDelete, obj(t, `{}`), nil)}},
		"persistence-off":   {objs: []*plan.ObjectChange{change(dbRef, plan.ObjectReplace, redis(t, true), redis(t, false))}, facts: claims},
		"persistence-on":    {objs: []*plan.ObjectChange{change(dbRef, plan.ObjectReplace, redis(t, false), redis(t, true))}, facts: claims},
		"storage-grown":     {objs: []*plan.ObjectChange{change(dbRef, plan.ObjectReplace, redis(t, true), grown)}, facts: claims},
		"claim-unmounted": {objs: []*plan.ObjectChange{change(webRef, plan.ObjectUpdate,
			withVolume(t, `"persistentVolumeClaim":{"claimName":"shared"}`), withVolume(t, `"emptyDir":{}`))}},
		"claim-unreferenced": {objs: []*plan.ObjectChange{
			change(webRef, plan.ObjectUpdate, withVolume(t, `"persistentVolumeClaim":{"claimName":"uploads"}`), withVolume(t, `"emptyDir":{}`)),
			change(pvcRef, plan.ObjectNoOp, uploads(t), uploads(t))}},
		"custom-resource": {objs: []*plan.ObjectChange{change(smRef, plan.ObjectUpdate, obj(t, `{"spec":{"interval":"30s"}}`), obj(t, `{"spec":{"interval":"10s"}}`))}},
		"custom-resources-many": {objs: []*plan.ObjectChange{rule("a"), rule("b"), rule("c"), rule("d"),
			change(smRef, plan.ObjectCreate, nil, obj(t, `{"spec":{}}`))}},
	}
}

// impactRow is `| name | what convoy saw | what the plan says |`, the
// last cell in backticks.
var impactRow = regexp.MustCompile("^\\| `([a-z0-9-]+)` \\| .* \\| `(.*)` \\|$")

// TestImpactSentencesAsDocumented is item 8 of issue 55: every sentence
// of a plan's impact line is reviewed in docs/impact.md's table, and each
// row is checked here: its scene, planned, says what the table says.
func TestImpactSentencesAsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "impact.md"))
	if err != nil {
		t.Fatal(err)
	}
	said := map[string]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		if m := impactRow.FindStringSubmatch(line); m != nil {
			said[m[1]] = m[2]
		}
	}
	scenes := impactScenes(t)
	for _, name := range slices.Sorted(maps.Keys(scenes)) {
		t.Run(name, func(t *testing.T) {
			sc := scenes[name]
			rc := release(sc.objs...)
			rc.Addr, rc.Name, rc.Namespace = plantest.Addr("web"), "web", "shop"
			rc.Impact = plan.ComputeImpact(rc, sc.facts)
			got := impactLineOf(t, rc)
			want, ok := said[name]
			if !ok {
				t.Fatalf("docs/impact.md has no row %q; the plan says:\n%s", name, got)
			}
			if got != want {
				t.Errorf("the plan says:\n%s\ndocs/impact.md says:\n%s", got, want)
			}
		})
	}
	for name := range said {
		if _, ok := scenes[name]; !ok {
			t.Errorf("docs/impact.md's row %q has no scene here", name)
		}
	}
}

// impactLineOf is the release's impact line as the text plan prints it.
func impactLineOf(t *testing.T, rc *plan.ReleaseChange) string {
	t.Helper()
	var b bytes.Buffer
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Stack: "shop", Releases: []*plan.ReleaseChange{rc}}
	if err := view.TextWith(&b, p, view.TextOptions{Detail: view.Compact}); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if s, ok := strings.CutPrefix(line, "      impact: "); ok {
			return s
		}
	}
	return ""
}
