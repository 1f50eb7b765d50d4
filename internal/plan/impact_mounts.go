package plan

import (
	"fmt"
	"slices"
	"strings"
)

// unmounted lists the data a release's pods stop mounting: a workload
// whose pod template no longer mounts a claim (the volume removed, or
// switched to emptyDir or anything else), a StatefulSet losing a
// volumeClaimTemplates entry, and a claim of the release no workload of
// it mounts any more. The claims stay with their data, but the pods run
// without it: for a database, an empty one. Each loss is reported on the
// object holding the data: a claim of the release on itself, any other
// claim (a StatefulSet's, an existing claim) on the workload.
func (in *impactInput) unmounted(facts ImpactFacts) []DataLoss {
	own := map[string]bool{} // namespace/name of the release's claims
	for _, o := range in.objects {
		if o.Ref.Group == "" && o.Ref.Kind == "PersistentVolumeClaim" {
			own[o.Ref.Namespace+"/"+o.Ref.Name] = true
		}
	}
	var out []DataLoss
	mountedAfter := map[string]bool{}
	mountedBefore := map[string]ObjectRef{}
	for _, w := range in.workloads {
		o := w.change
		ns := o.Ref.Namespace
		if o.Action != ObjectDelete {
			for c := range claimVolumes(w.podSpec(current(o))) {
				mountedAfter[ns+"/"+c] = true
			}
		}
		if o.Before == nil {
			continue
		}
		before := claimVolumes(w.podSpec(o.Before))
		for c := range before {
			if _, ok := mountedBefore[ns+"/"+c]; !ok {
				mountedBefore[ns+"/"+c] = o.Ref
			}
		}
		if o.Action != ObjectUpdate && o.Action != ObjectReplace {
			continue
		}
		// Each clause says what goes and how: "its pods no longer mount
		// claim shared (volume data removed)", "volumeClaimTemplates entry
		// data is removed: its pods no longer mount claim data-db-0
		// (volume data now emptyDir)".
		var lost []string
		after := claimVolumes(w.podSpec(o.After))
		afterVolumes := volumesByName(w.podSpec(o.After))
		for _, c := range sortedKeys(before) {
			if _, ok := after[c]; ok || own[ns+"/"+c] {
				continue
			}
			lost = append(lost, fmt.Sprintf("its pods no longer mount claim %s (volume %s %s)", c, before[c], nowText(afterVolumes[before[c]])))
		}
		if o.Ref.Group == "apps" && o.Ref.Kind == "StatefulSet" {
			kept := templateNames(o.After)
			for _, t := range templateNames(o.Before) {
				if slices.Contains(kept, t) {
					continue
				}
				lost = append(lost, fmt.Sprintf("volumeClaimTemplates entry %s is removed: its pods no longer mount %s (volume %s %s)",
					t, claimsText(templateClaims(facts.Claims[o.Ref], t, o.Ref.Name)), t, nowText(afterVolumes[t])))
			}
		}
		if len(lost) > 0 {
			out = append(out, DataLoss{Ref: o.Ref, Action: o.Action,
				Reason: strings.Join(lost, "; ") + "; the claims keep their data, but the pods run without it"})
		}
	}
	for _, o := range in.objects {
		key := o.Ref.Namespace + "/" + o.Ref.Name
		by, was := mountedBefore[key]
		if o.Ref.Group != "" || o.Ref.Kind != "PersistentVolumeClaim" || o.Action == ObjectDelete || !was || mountedAfter[key] {
			continue
		}
		out = append(out, DataLoss{Ref: o.Ref, Action: o.Action,
			Reason: fmt.Sprintf("no workload of the release mounts it any more (%s %s did): the claim and its data stay, unused", by.Kind, by.Name)})
	}
	return out
}

// claimVolumes are a pod spec's claims, each with the volume naming it.
func claimVolumes(spec map[string]any) map[string]string {
	out := map[string]string{}
	for name, v := range volumesByName(spec) {
		if c, ok := field(v, "persistentVolumeClaim", "claimName").(string); ok && c != "" {
			out[c] = name
		}
	}
	return out
}

func volumesByName(spec map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	vs, _ := spec["volumes"].([]any)
	for _, v := range vs {
		if m, ok := v.(map[string]any); ok {
			if name, ok := m["name"].(string); ok {
				out[name] = m
			}
		}
	}
	return out
}

// nowText says what a volume is after apply: "removed", "now emptyDir".
func nowText(v map[string]any) string {
	for _, k := range sortedKeys(v) {
		if k != "name" {
			return "now " + k
		}
	}
	return "removed"
}

// templateNames are a StatefulSet's volumeClaimTemplates' names.
func templateNames(sts map[string]any) []string {
	var out []string
	ts, _ := field(sts, "spec", "volumeClaimTemplates").([]any)
	for _, t := range ts {
		m, _ := t.(map[string]any)
		if name, ok := field(m, "metadata", "name").(string); ok {
			out = append(out, name)
		}
	}
	return out
}

// templateClaims are the claims among claims made from template t of
// StatefulSet sts: <t>-<sts>-<ordinal>.
func templateClaims(claims []string, t, sts string) []string {
	var out []string
	for _, c := range claims {
		if rest, ok := strings.CutPrefix(c, t+"-"+sts+"-"); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			out = append(out, c)
		}
	}
	return out
}

// claimsText names a template's claims: "claim data-db-0", "claims
// data-db-0, data-db-1", "its claims" when none is known.
func claimsText(claims []string) string {
	switch len(claims) {
	case 0:
		return "its claims"
	case 1:
		return "claim " + claims[0]
	}
	return "claims " + strings.Join(claims, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
