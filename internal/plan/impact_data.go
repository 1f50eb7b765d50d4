package plan

import (
	"fmt"
	"slices"
	"strings"
)

// dataLoss lists the deletions and replacements that lose data.
func (in *impactInput) dataLoss(facts ImpactFacts) []DataLoss {
	var out []DataLoss
	for _, o := range in.objects {
		if reason := lossOf(o, facts); reason != "" {
			out = append(out, DataLoss{Ref: o.Ref, Action: o.Action, Reason: reason})
		}
	}
	return append(out, in.unmounted(facts)...)
}

func lossOf(o *ObjectChange, facts ImpactFacts) string {
	gone := o.Action == ObjectDelete || o.Action == ObjectReplace
	switch o.Ref.Group + "/" + o.Ref.Kind {
	case "/PersistentVolumeClaim":
		if gone {
			return "the claim is deleted, and its volume with it when the volume's reclaim policy is Delete (the default of dynamically provisioned volumes)"
		}
	case "/PersistentVolume":
		if gone {
			return "the volume is deleted; its storage is deleted too when its reclaim policy is Delete"
		}
	case "/Namespace":
		if gone {
			return "every object in the namespace is deleted, also those not in this plan"
		}
	case "apiextensions.k8s.io/CustomResourceDefinition":
		if gone {
			what := o.Ref.Name
			return fmt.Sprintf("every %s custom resource in the cluster is deleted with it", what)
		}
		return strings.Join(crdLoss(o.CRD), "; ")
	case "apps/StatefulSet":
		return statefulSetLoss(o, facts)
	}
	return ""
}

// statefulSetLoss is what deleting or scaling down a StatefulSet deletes of
// its claims (persistentVolumeClaimRetentionPolicy). A replaced StatefulSet
// is deleted with its pods and claims orphaned: it loses nothing.
func statefulSetLoss(o *ObjectChange, facts ImpactFacts) string {
	obj := current(o)
	if vct, _ := field(obj, "spec", "volumeClaimTemplates").([]any); len(vct) == 0 {
		return ""
	}
	claims := ""
	if cs := facts.Claims[o.Ref]; len(cs) > 0 {
		claims = " (" + strings.Join(cs, ", ") + ")"
	}
	switch o.Action {
	case ObjectDelete:
		if field(o.Before, "spec", "persistentVolumeClaimRetentionPolicy", "whenDeleted") == "Delete" {
			return "its persistentVolumeClaimRetentionPolicy.whenDeleted is Delete: its claims are deleted with it" + claims
		}
	case ObjectUpdate:
		before, okB := intField(o.Before, "spec", "replicas")
		after, okA := intField(o.After, "spec", "replicas")
		if okB && okA && after < before && field(o.After, "spec", "persistentVolumeClaimRetentionPolicy", "whenScaled") == "Delete" {
			return fmt.Sprintf("scaled from %d to %d replicas with persistentVolumeClaimRetentionPolicy.whenScaled Delete: the claims of the removed pods are deleted", before, after)
		}
	}
	return ""
}

// replacements says how each replaced object is replaced.
func (in *impactInput) replacements(facts ImpactFacts) []Replacement {
	var out []Replacement
	for _, o := range in.objects {
		if o.Action != ObjectReplace {
			continue
		}
		r := Replacement{Ref: o.Ref, Propagation: "background", Immutable: immutableFields(o), Why: ReplaceWhy(o)}
		switch {
		case o.Ref.Group == "apps" && o.Ref.Kind == "StatefulSet":
			r.Propagation = "orphan"
			r.KeptClaims = facts.Claims[o.Ref]
			r.StorageChanges = templateStorageChanges(o.Before, o.After)
			why := statefulSetRecreates(o.Before, o.After)
			r.RecreatesPods = why != ""
			r.Note = "deleted with its pods and claims orphaned; the new StatefulSet adopts the pods; existing claims are never deleted, and a StatefulSet never resizes them nor changes their storage class (expand_claims resizes them); new volumeClaimTemplates apply to claims created from now on"
			if r.RecreatesPods {
				for _, t := range templateNames(o.After) {
					r.RemountedClaims = append(r.RemountedClaims, templateClaims(r.KeptClaims, t, o.Ref.Name)...)
				}
				r.Note = "deleted with its pods and claims orphaned; its pods are then deleted and waited for until gone, as the new StatefulSet cannot adopt them (" + why + "), and the new StatefulSet creates them again under the same names; existing claims are never deleted, and the new pods mount the claims of their names again"
			}
		case podOwner(o.Ref):
			r.Propagation = "foreground"
			r.Note = "deleted with foreground propagation, and apply waits until it and its pods are gone before creating it again: no pod of the old one is left behind"
		}
		out = append(out, r)
	}
	return out
}

// templateStorageChanges are the volumeClaimTemplates entries kept from
// before to after whose storage request changes: "data: 8Gi → 10Gi".
func templateStorageChanges(before, after map[string]any) []string {
	storage := func(sts map[string]any) map[string]string {
		out := map[string]string{}
		ts, _ := field(sts, "spec", "volumeClaimTemplates").([]any)
		for _, t := range ts {
			m, _ := t.(map[string]any)
			if name, ok := field(m, "metadata", "name").(string); ok {
				out[name] = fmt.Sprint(field(m, "spec", "resources", "requests", "storage"))
			}
		}
		return out
	}
	was, now := storage(before), storage(after)
	var out []string
	for _, name := range sortedKeys(now) {
		if old, ok := was[name]; ok && old != now[name] {
			out = append(out, fmt.Sprintf("%s: %s → %s", name, old, now[name]))
		}
	}
	return out
}

// podOwner: ref's kind owns pods that its deletion with foreground
// propagation deletes first (kube.Client's replace).
func podOwner(ref ObjectRef) bool {
	switch ref.Group + "/" + ref.Kind {
	case "apps/Deployment", "apps/ReplicaSet", "apps/DaemonSet", "batch/Job":
		return true
	}
	return false
}

// StatefulSetAdoptsPods reports whether a StatefulSet replaced by after
// adopts the pods before made (statefulSetRecreates says why not).
// (kube.Client's replace decides the same when it deletes the orphaned
// pods.)
func StatefulSetAdoptsPods(before, after map[string]any) bool {
	return statefulSetRecreates(before, after) == ""
}

// statefulSetRecreates says why a StatefulSet replaced by after cannot
// adopt the pods before made, "" when it can. The StatefulSet controller
// adopts an orphaned pod only if its selector selects the pod's labels
// (those of before's template), and keeps it only if it mounts a claim of
// every one of the new volumeClaimTemplates: it cannot add one to a
// running pod (pod updates may not change volumes), and a pod mounts the
// claims of the templates it was made from. So after's selector must
// select before's template labels, and every template of after must be
// one of before's.
func statefulSetRecreates(before, after map[string]any) string {
	var why []string
	had := templateNames(before)
	for _, t := range templateNames(after) {
		if !slices.Contains(had, t) {
			why = append(why, "they do not mount its new volumeClaimTemplates, and the API server refuses to add volumes to a pod")
			break
		}
	}
	sel, _ := field(after, "spec", "selector").(map[string]any)
	labels, _ := field(before, "spec", "template", "metadata", "labels").(map[string]any)
	if sel != nil && !selects(sel, labels) {
		why = append(why, "its new spec.selector does not select their labels")
	}
	return strings.Join(why, "; ")
}

// statefulSetMutable are the fields of a StatefulSet's spec an update may
// change (apps/v1 validation); any other forces a replacement.
var statefulSetMutable = map[string]bool{"replicas": true, "ordinals": true, "template": true, "updateStrategy": true,
	"persistentVolumeClaimRetentionPolicy": true, "minReadySeconds": true, "revisionHistoryLimit": true}

// unknown lists the changing objects of kinds whose effect convoy cannot
// tell.
func (in *impactInput) unknown() []UnknownImpact {
	var out []UnknownImpact
	for _, o := range in.objects {
		if o.Action == ObjectNoOp || knownKind(o.Ref) {
			continue
		}
		if _, ok := podTemplatePath(o); ok {
			continue
		}
		out = append(out, UnknownImpact{Ref: o.Ref, Action: o.Action})
	}
	return out
}

// knownGroups are the API groups whose every kind convoy understands well
// enough: built-in kinds without an effect on running pods beyond what
// impact reports.
var knownGroups = map[string]bool{
	"": true, "apps": true, "batch": true, "rbac.authorization.k8s.io": true, "policy": true, "autoscaling": true,
	"networking.k8s.io": true, "apiextensions.k8s.io": true, "admissionregistration.k8s.io": true,
	"scheduling.k8s.io": true, "storage.k8s.io": true, "discovery.k8s.io": true, "coordination.k8s.io": true,
	"apiregistration.k8s.io": true, "certificates.k8s.io": true, "node.k8s.io": true, "flowcontrol.apiserver.k8s.io": true,
}

func knownKind(r ObjectRef) bool { return knownGroups[r.Group] }
