package plan

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// CRDChange is how a CustomResourceDefinition of a chart's crds/ changes
// when a release replaces it (crds = "create_replace"), in short: a whole
// schema diff of a real CRD runs to hundreds of lines. It lists the
// versions added and removed, the served and storage flags that change,
// and per version the outermost properties added, removed or retyped.
type CRDChange struct {
	Versions []CRDVersionChange `json:"versions,omitempty"`
	// StoredVersions is the live CRD's status.storedVersions: the versions
	// objects may be stored in.
	StoredVersions []string `json:"stored_versions,omitempty"`
	// Other are the fields outside the versions' schemas and flags that
	// change (`spec.names`, `versions[v1].additionalPrinterColumns`).
	Other []string `json:"other,omitempty"`
}

// CRDVersionChange is one version of a CRD that changes.
type CRDVersionChange struct {
	Name string `json:"name"`
	// Action is "added", "removed" or "changed".
	Action string `json:"action"`
	// Served and Storage are set when the flag changes (for an added
	// version: Before false; for a removed one: After false).
	Served  *FlagChange `json:"served,omitempty"`
	Storage *FlagChange `json:"storage,omitempty"`
	// Properties are the outermost properties of its schema added, removed
	// or retyped.
	Properties []PropertyChange `json:"properties,omitempty"`
	// SchemaDetails: the schema changes otherwise too (descriptions,
	// defaults, validations, deeper properties of a changed one).
	SchemaDetails bool `json:"schema_details,omitempty"`
}

// FlagChange is a boolean that changes.
type FlagChange struct {
	Before bool `json:"before"`
	After  bool `json:"after"`
}

// PropertyChange is a property of a version's schema that changes.
type PropertyChange struct {
	// Path is the property's path in the objects (`spec.replicas`).
	Path string `json:"path"`
	// Action is "added", "removed" or "retyped".
	Action string `json:"action"`
	// Before and After are its types (`string`, `object`, `array`).
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	// Pruned: a removed property whose values the API server prunes from
	// the objects (its parent does not preserve unknown fields).
	Pruned bool `json:"pruned,omitempty"`
}

// Empty reports whether nothing changes.
func (c *CRDChange) Empty() bool {
	return c == nil || len(c.Versions) == 0 && len(c.Other) == 0
}

// maxPropertyChanges bounds the properties listed per version.
const maxPropertyChanges = 20

// CompareCRDs summarises how the CRD before (the live one, with its
// status) changes into after (what the replace stores). Nil when their
// specs are equal.
func CompareCRDs(before, after map[string]any) *CRDChange {
	bspec, _ := field(before, "spec").(map[string]any)
	aspec, _ := field(after, "spec").(map[string]any)
	if reflect.DeepEqual(bspec, aspec) {
		return nil
	}
	c := &CRDChange{}
	if sv, ok := field(before, "status", "storedVersions").([]any); ok {
		for _, v := range sv {
			if s, ok := v.(string); ok {
				c.StoredVersions = append(c.StoredVersions, s)
			}
		}
	}
	for _, k := range unionKeys(bspec, aspec) {
		if k != "versions" && !reflect.DeepEqual(bspec[k], aspec[k]) {
			c.Other = append(c.Other, "spec."+k)
		}
	}
	bv, av := crdVersions(bspec), crdVersions(aspec)
	var names []string
	for n := range bv {
		names = append(names, n)
	}
	for n := range av {
		if _, ok := bv[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		b, a := bv[n], av[n]
		switch {
		case b == nil:
			c.Versions = append(c.Versions, CRDVersionChange{Name: n, Action: "added",
				Served: &FlagChange{After: flag(a, "served")}, Storage: &FlagChange{After: flag(a, "storage")}})
		case a == nil:
			c.Versions = append(c.Versions, CRDVersionChange{Name: n, Action: "removed",
				Served: &FlagChange{Before: flag(b, "served")}, Storage: &FlagChange{Before: flag(b, "storage")}})
		default:
			v := CRDVersionChange{Name: n, Action: "changed"}
			if flag(b, "served") != flag(a, "served") {
				v.Served = &FlagChange{Before: flag(b, "served"), After: flag(a, "served")}
			}
			if flag(b, "storage") != flag(a, "storage") {
				v.Storage = &FlagChange{Before: flag(b, "storage"), After: flag(a, "storage")}
			}
			bs, _ := field(b, "schema", "openAPIV3Schema").(map[string]any)
			as, _ := field(a, "schema", "openAPIV3Schema").(map[string]any)
			if !reflect.DeepEqual(bs, as) {
				v.Properties = compareSchemas("", bs, as, nil)
				v.SchemaDetails = !sameShape(bs, as, v.Properties)
			}
			for _, k := range unionKeys(b, a) {
				if k != "name" && k != "served" && k != "storage" && k != "schema" && !reflect.DeepEqual(b[k], a[k]) {
					c.Other = append(c.Other, fmt.Sprintf("versions[%s].%s", n, k))
				}
			}
			if v.Served != nil || v.Storage != nil || len(v.Properties) > 0 || v.SchemaDetails {
				c.Versions = append(c.Versions, v)
			}
		}
	}
	if c.Empty() {
		return nil
	}
	return c
}

func crdVersions(spec map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	vs, _ := spec["versions"].([]any)
	for _, v := range vs {
		if m, ok := v.(map[string]any); ok {
			if n, _ := m["name"].(string); n != "" {
				out[n] = m
			}
		}
	}
	return out
}

func flag(m map[string]any, name string) bool { b, _ := m[name].(bool); return b }

func unionKeys(a, b map[string]any) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// compareSchemas lists the outermost properties added, removed or
// retyped under path (an object's schema: its properties, and an array's
// items' properties as path[]).
func compareSchemas(path string, b, a map[string]any, out []PropertyChange) []PropertyChange {
	if bi, ai := schemaOf(b, "items"), schemaOf(a, "items"); bi != nil && ai != nil {
		out = compareSchemas(path+"[]", bi, ai, out)
	}
	bp, _ := b["properties"].(map[string]any)
	ap, _ := a["properties"].(map[string]any)
	pruning := !flag(b, "x-kubernetes-preserve-unknown-fields") && !flag(a, "x-kubernetes-preserve-unknown-fields")
	for _, k := range unionKeys(bp, ap) {
		p := k
		if path != "" {
			p = path + "." + k
		}
		bs, _ := bp[k].(map[string]any)
		as, _ := ap[k].(map[string]any)
		switch {
		case bs == nil:
			out = append(out, PropertyChange{Path: p, Action: "added", After: schemaType(as)})
		case as == nil:
			out = append(out, PropertyChange{Path: p, Action: "removed", Before: schemaType(bs), Pruned: pruning})
		case schemaType(bs) != schemaType(as):
			out = append(out, PropertyChange{Path: p, Action: "retyped", Before: schemaType(bs), After: schemaType(as)})
		case !reflect.DeepEqual(bs, as):
			out = compareSchemas(p, bs, as, out)
		}
	}
	return out
}

func schemaOf(m map[string]any, key string) map[string]any {
	s, _ := m[key].(map[string]any)
	return s
}

// schemaType is a property's type as its schema says it (`object`,
// `string`, `int-or-string`, `any` when open).
func schemaType(s map[string]any) string {
	if t, _ := s["type"].(string); t != "" {
		return t
	}
	if flag(s, "x-kubernetes-int-or-string") {
		return "int-or-string"
	}
	return "any"
}

// sameShape reports whether the property changes found explain every
// difference between two schemas: the schemas with those properties
// taken out are equal.
func sameShape(b, a map[string]any, changes []PropertyChange) bool {
	strip := func(s map[string]any) any {
		s = deepCopyMap(s)
		for _, c := range changes {
			removePath(s, c.Path)
		}
		return s
	}
	return reflect.DeepEqual(strip(b), strip(a))
}

func removePath(s map[string]any, path string) {
	parts := strings.Split(path, ".")
	cur := s
	for i, part := range parts {
		items := strings.Count(part, "[]")
		name := strings.TrimSuffix(part, strings.Repeat("[]", items))
		props, _ := cur["properties"].(map[string]any)
		if props == nil {
			return
		}
		if i == len(parts)-1 && items == 0 {
			delete(props, name)
			return
		}
		next, _ := props[name].(map[string]any)
		for range items {
			next = schemaOf(next, "items")
		}
		if next == nil {
			return
		}
		cur = next
	}
}

func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = deepCopyValue(v)
	}
	return out
}

func deepCopyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return deepCopyMap(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopyValue(e)
		}
		return out
	}
	return v
}

// Lines are the change as short lines for the text and markdown views.
func (c *CRDChange) Lines() []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, v := range c.Versions {
		var what []string
		switch v.Action {
		case "added":
			what = append(what, fmt.Sprintf("added (served %t, storage %t)", v.Served.After, v.Storage.After))
		case "removed":
			s := "removed"
			if slices.Contains(c.StoredVersions, v.Name) {
				s += " (listed in status.storedVersions)"
			}
			what = append(what, s)
		default:
			if v.Served != nil {
				what = append(what, fmt.Sprintf("served %t → %t", v.Served.Before, v.Served.After))
			}
			if v.Storage != nil {
				what = append(what, fmt.Sprintf("storage %t → %t", v.Storage.Before, v.Storage.After))
			}
		}
		if len(what) > 0 {
			out = append(out, fmt.Sprintf("version %s: %s", v.Name, strings.Join(what, ", ")))
		}
		for i, p := range v.Properties {
			if i == maxPropertyChanges {
				out = append(out, fmt.Sprintf("version %s: and %d more properties", v.Name, len(v.Properties)-i))
				break
			}
			switch p.Action {
			case "added":
				out = append(out, fmt.Sprintf("version %s: + %s (%s)", v.Name, p.Path, p.After))
			case "removed":
				s := fmt.Sprintf("version %s: - %s (%s)", v.Name, p.Path, p.Before)
				if p.Pruned {
					s += ", pruned from stored objects"
				}
				out = append(out, s)
			default:
				out = append(out, fmt.Sprintf("version %s: ~ %s (%s → %s)", v.Name, p.Path, p.Before, p.After))
			}
		}
		if v.SchemaDetails {
			out = append(out, fmt.Sprintf("version %s: schema details change (descriptions, defaults, validations)", v.Name))
		}
	}
	if len(c.Other) > 0 {
		out = append(out, "also: "+strings.Join(c.Other, ", "))
	}
	return out
}

// crdLoss is what replacing a CRD as c says can lose: versions objects
// may be stored in that are removed or no longer served, and properties
// whose values are pruned.
func crdLoss(c *CRDChange) []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, v := range c.Versions {
		stored := slices.Contains(c.StoredVersions, v.Name)
		switch {
		case v.Action == "removed" && stored:
			out = append(out, fmt.Sprintf("version %s is removed while status.storedVersions lists it: objects may be stored in it (the API server refuses the update until they are migrated and status.storedVersions no longer lists %s)", v.Name, v.Name))
		case v.Action == "changed" && stored && v.Served != nil && !v.Served.After:
			out = append(out, fmt.Sprintf("version %s is no longer served while status.storedVersions lists it: objects stored in it are read only through the other versions", v.Name))
		}
		var pruned []string
		for _, p := range v.Properties {
			if p.Action == "removed" && p.Pruned {
				pruned = append(pruned, p.Path)
			}
		}
		switch n := len(pruned); {
		case n == 1:
			out = append(out, fmt.Sprintf("version %s's schema drops %s: its values are pruned from the objects", v.Name, pruned[0]))
		case n > maxPrunedNamed:
			pruned = append(pruned[:maxPrunedNamed], fmt.Sprintf("%d more", n-maxPrunedNamed))
			fallthrough
		case n > 1:
			out = append(out, fmt.Sprintf("version %s's schema drops %s and %s: their values are pruned from the objects", v.Name, strings.Join(pruned[:len(pruned)-1], ", "), pruned[len(pruned)-1]))
		}
	}
	return out
}

// maxPrunedNamed bounds the pruned properties a loss names per version.
const maxPrunedNamed = 5
