package config

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	sigsyaml "sigs.k8s.io/yaml"
)

// Patch is one element of a release's patches: a patch applied to the
// rendered objects that Target selects, before planning and applying.
type Patch struct {
	// Name identifies the patch in messages: "patches[0]".
	Name   string
	Target PatchTarget
	// Patch is the patch document as JSON: a JSON 6902 operation list
	// (JSON6902) or a strategic-merge patch object.
	Patch    string
	JSON6902 bool
	Range    hcl.Range
}

// PatchTarget selects the objects a patch applies to. Empty fields match
// everything; Name is a glob (path.Match syntax); every label must match.
type PatchTarget struct {
	Kind, Name, Namespace string
	Labels                map[string]string
}

func (t PatchTarget) String() string {
	var parts []string
	for _, kv := range [][2]string{{"kind", t.Kind}, {"name", t.Name}, {"namespace", t.Namespace}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+" "+kv[1])
		}
	}
	for _, k := range sortedKeys(t.Labels) {
		parts = append(parts, fmt.Sprintf("label %s=%s", k, t.Labels[k]))
	}
	if len(parts) == 0 {
		return "every object"
	}
	return strings.Join(parts, ", ")
}

// PostRenderer is Helm's exec post-renderer: the rendered manifests go to
// the command's standard input, and what it prints replaces them.
type PostRenderer struct {
	Command string
	Args    []string
}

const patchesExample = `patches = [{ target = { kind = "Deployment", name = "web" }, patch = yamlencode({ spec = { replicas = 2 } }) }]`

// patches reads patches: a list of { target = {kind, name, namespace,
// labels}, patch = text or value }. A patch that is a list is a JSON 6902
// patch; otherwise a strategic-merge patch.
func patches(val cty.Value, expr hcl.Expression) ([]Patch, hcl.Diagnostics) {
	bad := func(rng hcl.Range, detail string) hcl.Diagnostics {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid patches", Detail: detail + " For example: " + patchesExample, Subject: rng.Ptr()}}
	}
	if val.ContainsMarked() {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Sensitive value not allowed",
			Detail: `"patches" cannot be sensitive: patched objects are shown in plans. Pass secrets through values or set_sensitive.`, Subject: expr.Range().Ptr()}}
	}
	if !val.IsWhollyKnown() {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Value known only after apply",
			Detail: `"patches" must be known before apply.`, Subject: expr.Range().Ptr()}}
	}
	if val.IsNull() {
		return nil, nil
	}
	ty := val.Type()
	if !ty.IsTupleType() && !ty.IsListType() {
		return nil, bad(expr.Range(), fmt.Sprintf("patches must be a list of objects, not %s.", ty.FriendlyName()))
	}
	elemExprs := literalList(expr, val.LengthInt())
	var out []Patch
	var diags hcl.Diagnostics
	i := 0
	for it := val.ElementIterator(); it.Next(); i++ {
		_, elem := it.Element()
		rng := expr.Range()
		if elemExprs != nil {
			rng = elemExprs[i].Range()
		}
		p := Patch{Name: fmt.Sprintf("patches[%d]", i), Range: rng}
		if !elem.Type().IsObjectType() && !elem.Type().IsMapType() {
			diags = append(diags, bad(rng, fmt.Sprintf("%s must be an object with target and patch.", p.Name))...)
			continue
		}
		attrs := elem.AsValueMap()
		for k := range attrs {
			if k != "target" && k != "patch" {
				diags = append(diags, bad(rng, fmt.Sprintf("%s has an unknown attribute %q: only target and patch.", p.Name, k))...)
			}
		}
		if t, ok := attrs["target"]; ok && !t.IsNull() {
			target, err := patchTarget(t)
			if err != nil {
				diags = append(diags, bad(rng, fmt.Sprintf("%s: %s.", p.Name, err))...)
				continue
			}
			p.Target = target
		}
		doc, ok := attrs["patch"]
		if !ok || doc.IsNull() {
			diags = append(diags, bad(rng, fmt.Sprintf("%s has no patch.", p.Name))...)
			continue
		}
		js, err := patchJSON(doc)
		if err != nil {
			diags = append(diags, bad(rng, fmt.Sprintf("%s: %s.", p.Name, err))...)
			continue
		}
		p.Patch = js
		p.JSON6902 = strings.HasPrefix(js, "[")
		if !p.JSON6902 && !strings.HasPrefix(js, "{") {
			diags = append(diags, bad(rng, fmt.Sprintf("%s: a patch is a strategic-merge object or a JSON 6902 list of operations.", p.Name))...)
			continue
		}
		out = append(out, p)
	}
	return out, diags
}

func patchTarget(v cty.Value) (PatchTarget, error) {
	var t PatchTarget
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		return t, fmt.Errorf("target must be an object with kind, name, namespace and labels")
	}
	for k, a := range v.AsValueMap() {
		if a.IsNull() {
			continue
		}
		var dst *string
		switch k {
		case "kind":
			dst = &t.Kind
		case "name":
			dst = &t.Name
		case "namespace":
			dst = &t.Namespace
		case "labels":
			m, err := convert.Convert(a, cty.Map(cty.String))
			if err != nil {
				return t, fmt.Errorf("target labels must be a map of strings")
			}
			t.Labels = map[string]string{}
			for lk, lv := range m.AsValueMap() {
				t.Labels[lk] = lv.AsString()
			}
			continue
		default:
			return t, fmt.Errorf("target has an unknown attribute %q: only kind, name, namespace and labels", k)
		}
		s, err := convert.Convert(a, cty.String)
		if err != nil {
			return t, fmt.Errorf("target %s must be a string", k)
		}
		*dst = s.AsString()
	}
	return t, nil
}

// patchJSON is the patch as compact JSON: a string is YAML (or JSON) text
// (yamlencode(...), jsonencode([...]), file("patch.yaml")); a value is
// taken as it is.
func patchJSON(v cty.Value) (string, error) {
	var js []byte
	if v.Type() == cty.String {
		b, err := sigsyaml.YAMLToJSON([]byte(v.AsString()))
		if err != nil {
			return "", fmt.Errorf("the patch is not YAML or JSON: %v", err)
		}
		js = b
	} else {
		b, err := ctyjson.Marshal(v, v.Type())
		if err != nil {
			return "", err
		}
		js = b
	}
	return string(bytes.TrimSpace(js)), nil
}

// postRenderer reads post_renderer = { command, args }.
func postRenderer(val cty.Value, expr hcl.Expression) (*PostRenderer, hcl.Diagnostics) {
	bad := func(detail string) hcl.Diagnostics {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid post_renderer",
			Detail: detail + ` For example: post_renderer = { command = "./kustomize.sh", args = ["--env", "prod"] }`, Subject: expr.Range().Ptr()}}
	}
	if val.ContainsMarked() {
		return nil, bad("post_renderer cannot be sensitive: it is shown in plans.")
	}
	if !val.IsWhollyKnown() {
		return nil, bad("post_renderer must be known before apply.")
	}
	if val.IsNull() {
		return nil, nil
	}
	if !val.Type().IsObjectType() {
		return nil, bad("post_renderer is an object with command and args.")
	}
	pr := &PostRenderer{}
	for k, a := range val.AsValueMap() {
		switch k {
		case "command":
			s, err := convert.Convert(a, cty.String)
			if err != nil || s.IsNull() || s.AsString() == "" {
				return nil, bad("post_renderer.command must be a non-empty string.")
			}
			pr.Command = s.AsString()
		case "args":
			l, err := convert.Convert(a, cty.List(cty.String))
			if err != nil {
				return nil, bad("post_renderer.args must be a list of strings.")
			}
			if !l.IsNull() {
				for _, e := range l.AsValueSlice() {
					pr.Args = append(pr.Args, e.AsString())
				}
			}
		default:
			return nil, bad(fmt.Sprintf("post_renderer has an unknown attribute %q: only command and args.", k))
		}
	}
	if pr.Command == "" {
		return nil, bad("post_renderer.command is required.")
	}
	return pr, nil
}
