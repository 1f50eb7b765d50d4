package plan

import (
	"slices"
	"strconv"
	"strings"
)

// Ways a pod consumes a ConfigMap or Secret (Consumer.Via).
const (
	ViaVolume          = "volume"
	ViaProjectedVolume = "projected-volume"
	ViaEnvFrom         = "env-from"
	ViaEnv             = "env"
)

// When a consumer sees a change without a restart (Consumer.PicksUp).
const (
	PicksUpEventually = "eventually"
	PicksUpNever      = "never"
)

// staleConfig lists the ConfigMaps and Secrets whose content changes with
// the consumers among the release's workloads that do not roll.
func (in *impactInput) staleConfig(rolling map[ObjectRef]bool) []StaleConfig {
	var out []StaleConfig
	for _, o := range in.objects {
		if (o.Ref.Kind != "ConfigMap" && o.Ref.Kind != "Secret") || o.Ref.Group != "" {
			continue
		}
		if o.Action != ObjectUpdate && o.Action != ObjectReplace {
			continue
		}
		keys, all := changedKeys(o)
		if !all && len(keys) == 0 {
			continue // only its metadata changes
		}
		var consumers []Consumer
		for _, w := range in.workloads {
			if rolling[w.change.Ref] || w.change.Action == ObjectDelete || w.change.Ref.Namespace != o.Ref.Namespace {
				continue
			}
			consumers = append(consumers, consumersOf(w, o.Ref, keys, all)...)
		}
		if len(consumers) > 0 {
			out = append(out, StaleConfig{Ref: o.Ref, Consumers: consumers})
		}
	}
	return out
}

// changedKeys are the data keys o's diff changes; all when the whole data
// map is added or removed.
func changedKeys(o *ObjectChange) (keys map[string]bool, all bool) {
	keys = map[string]bool{}
	for _, c := range changes(o) {
		for _, top := range []string{"data", "binaryData", "stringData"} {
			if !HasPrefix(c.Path, top) {
				continue
			}
			rest := c.Path[len(top):]
			switch {
			case rest == "":
				all = true
			case rest[0] == '.':
				key, _, _ := strings.Cut(rest[1:], ".")
				keys[key] = true
			case strings.HasPrefix(rest, `["`):
				if q, err := strconv.QuotedPrefix(rest[1:]); err == nil {
					if k, err := strconv.Unquote(q); err == nil {
						keys[k] = true
					}
				}
			}
		}
	}
	return keys, all
}

// consumersOf is how w's pods read the ConfigMap or Secret ref, for the
// keys that change.
func consumersOf(w workload, ref ObjectRef, keys map[string]bool, all bool) []Consumer {
	spec := w.podSpec(current(w.change))
	if spec == nil {
		return nil
	}
	kind := ref.Kind
	var out []Consumer
	add := func(via, picksUp string) {
		c := Consumer{Ref: w.change.Ref, Via: via, PicksUp: picksUp}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	containers := append(objectsIn(spec["initContainers"]), objectsIn(spec["containers"])...)
	for _, v := range objectsIn(spec["volumes"]) {
		name, _ := v["name"].(string)
		via := ""
		switch {
		case kind == "ConfigMap" && field(v, "configMap", "name") == ref.Name,
			kind == "Secret" && field(v, "secret", "secretName") == ref.Name:
			via = ViaVolume
		default:
			for _, s := range objectsIn(field(v, "projected", "sources")) {
				if (kind == "ConfigMap" && field(s, "configMap", "name") == ref.Name) || (kind == "Secret" && field(s, "secret", "name") == ref.Name) {
					via = ViaProjectedVolume
				}
			}
		}
		if via == "" {
			continue
		}
		// A volume mounted with subPath is a copy made at start.
		picksUp := PicksUpEventually
		for _, c := range containers {
			for _, m := range objectsIn(c["volumeMounts"]) {
				if m["name"] == name && (m["subPath"] != nil || m["subPathExpr"] != nil) {
					picksUp = PicksUpNever
				}
			}
		}
		add(via, picksUp)
	}
	refKey := map[string]string{"ConfigMap": "configMapRef", "Secret": "secretRef"}[kind]
	keyRef := map[string]string{"ConfigMap": "configMapKeyRef", "Secret": "secretKeyRef"}[kind]
	for _, c := range containers {
		for _, e := range objectsIn(c["envFrom"]) {
			if field(e, refKey, "name") == ref.Name {
				add(ViaEnvFrom, PicksUpNever)
			}
		}
		for _, e := range objectsIn(c["env"]) {
			kr, _ := field(e, "valueFrom", keyRef).(map[string]any)
			if kr == nil || kr["name"] != ref.Name {
				continue
			}
			if k, _ := kr["key"].(string); all || keys[k] {
				add(ViaEnv, PicksUpNever)
			}
		}
	}
	return out
}

// objectsIn are the elements of a list that are objects.
func objectsIn(v any) []map[string]any {
	l, _ := v.([]any)
	var out []map[string]any
	for _, e := range l {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
