package plan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// immutableSpecFields are, per group/kind, the fields the API server
// refuses to change on an update (besides a StatefulSet's, which are every
// spec field but statefulSetMutable): a change to one forces a replace.
var immutableSpecFields = map[string][]string{
	"apps/Deployment":                       {"spec.selector"},
	"apps/ReplicaSet":                       {"spec.selector"},
	"apps/DaemonSet":                        {"spec.selector"},
	"batch/Job":                             {"spec.selector", "spec.template", "spec.completionMode"},
	"/Service":                              {"spec.clusterIP", "spec.clusterIPs"},
	"/ReplicationController":                {"spec.selector"},
	"rbac.authorization.k8s.io/RoleBinding": {"roleRef"},
	"rbac.authorization.k8s.io/ClusterRoleBinding": {"roleRef"},
}

// immutableFields are the changed fields of a replaced object that forced
// its replacement, when convoy knows them: a StatefulSet's spec fields
// other than those an update may change (`spec.selector`,
// `spec.volumeClaimTemplates`), a Deployment's `spec.selector`, a Job's
// `spec.template`, ….
func immutableFields(o *ObjectChange) []string {
	var out []string
	add := func(f string) {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if o.Ref.Group == "apps" && o.Ref.Kind == "StatefulSet" {
		for _, c := range changes(o) {
			parts := strings.SplitN(c.Path, ".", 3)
			if len(parts) < 2 || parts[0] != "spec" {
				continue
			}
			key := parts[1]
			if i := strings.IndexByte(key, '['); i >= 0 {
				key = key[:i]
			}
			if !statefulSetMutable[key] {
				add("spec." + key)
			}
		}
		return out
	}
	fields := immutableSpecFields[o.Ref.Group+"/"+o.Ref.Kind]
	for _, c := range changes(o) {
		for _, f := range fields {
			if HasPrefix(c.Path, f) {
				add(f)
			}
		}
	}
	return out
}

// maxWhyChanges is how many changed leaves of each immutable field
// ReplaceWhy quotes.
const maxWhyChanges = 3

// ReplaceWhy says why o, an object the plan replaces, cannot be updated:
// "spec.selector is immutable and changes: app.kubernetes.io/instance
// redis → cache", for each immutable field convoy knows of that changes;
// otherwise the API server's refusal (o.Reason). Values are as the diff
// holds them: masked when sensitive.
func ReplaceWhy(o *ObjectChange) string {
	fields := immutableFields(o)
	if len(fields) == 0 {
		return o.Reason
	}
	var parts []string
	for _, f := range fields {
		var leaves []string
		n := 0
		for _, c := range changes(o) {
			if !HasPrefix(c.Path, f) {
				continue
			}
			n++
			if n <= maxWhyChanges {
				leaves = append(leaves, leafChange(f, c))
			}
		}
		if n > maxWhyChanges {
			leaves = append(leaves, fmt.Sprintf("and %d more", n-maxWhyChanges))
		}
		parts = append(parts, fmt.Sprintf("%s is immutable and changes: %s", f, strings.Join(leaves, ", ")))
	}
	return strings.Join(parts, "; ")
}

// leafChange is one change below field f, for people:
// "app.kubernetes.io/instance redis → cache".
func leafChange(f string, c *Change) string {
	rel := strings.TrimPrefix(c.Path, f)
	if f == "spec.selector" {
		rel = strings.TrimPrefix(rel, ".matchLabels")
	}
	rel = readablePath(rel)
	before, after := "(none)", "(none)"
	if c.Op != FieldAdd {
		before = valueText(c.Before)
	}
	if c.Op != FieldRemove {
		after = valueText(c.After)
	}
	if rel == "" {
		return before + " → " + after
	}
	return rel + " " + before + " → " + after
}

// readablePath turns a diff path's quoted keys into plain ones:
// `["app.kubernetes.io/instance"]` → `app.kubernetes.io/instance`.
func readablePath(p string) string {
	var b strings.Builder
	for p != "" {
		i := strings.Index(p, `["`)
		if i < 0 {
			b.WriteString(p)
			break
		}
		b.WriteString(p[:i])
		rest := p[i+1:]
		end := strings.Index(rest, `"]`)
		if end < 0 {
			b.WriteString(p[i:])
			break
		}
		key, err := strconv.Unquote(rest[:end+1])
		if err != nil {
			b.WriteString(p[i : i+end+3])
		} else {
			b.WriteString("." + key)
		}
		p = rest[end+2:]
	}
	return strings.TrimPrefix(b.String(), ".")
}

func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	j, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(j)
}
