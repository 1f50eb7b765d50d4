package plan

import (
	"fmt"
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
	return out
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
		r := Replacement{Ref: o.Ref, Propagation: "background"}
		if o.Ref.Group == "apps" && o.Ref.Kind == "StatefulSet" {
			r.Propagation = "orphan"
			r.KeptClaims = facts.Claims[o.Ref]
			r.Note = "deleted with its pods and claims orphaned; the new StatefulSet adopts the pods; existing claims are never deleted and keep their size and storage class (a claim grows only if its storage class allows volume expansion and it is resized); new volumeClaimTemplates apply to claims created from now on"
		}
		out = append(out, r)
	}
	return out
}

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
