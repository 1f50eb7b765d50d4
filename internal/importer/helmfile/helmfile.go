// Package helmfile converts a helmfile.yaml into a convoy stack: the
// stack's HCL and the values files it reads, with a warning for everything
// it cannot carry over. It reads plain YAML only: a Go-templated helmfile
// is refused (render it with `helmfile build` first).
package helmfile

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"sigs.k8s.io/yaml"
)

// Result is a converted stack: files by path relative to the stack
// directory (stack.hcl and the copied values files), and what was not
// converted.
type Result struct {
	Files    map[string][]byte
	Warnings []string
}

type document struct {
	Repositories []struct {
		Name     string `json:"name"`
		URL      string `json:"url"`
		OCI      bool   `json:"oci"`
		Username string `json:"username"`
		Password string `json:"password"`
	} `json:"repositories"`
	HelmDefaults releaseSettings        `json:"helmDefaults"`
	Environments map[string]environment `json:"environments"`
	Releases     []release              `json:"releases"`
}

type environment struct {
	Values  []any    `json:"values"`
	Secrets []string `json:"secrets"`
}

type releaseSettings struct {
	Wait            *bool `json:"wait"`
	WaitForJobs     *bool `json:"waitForJobs"`
	Timeout         *int  `json:"timeout"`
	Atomic          *bool `json:"atomic"`
	CleanupOnFail   *bool `json:"cleanupOnFail"`
	HistoryMax      *int  `json:"historyMax"`
	DisableHooks    *bool `json:"disableHooks"`
	CreateNamespace *bool `json:"createNamespace"`
}

type release struct {
	releaseSettings
	Name                  string            `json:"name"`
	Namespace             string            `json:"namespace"`
	Chart                 string            `json:"chart"`
	Version               string            `json:"version"`
	Values                []any             `json:"values"`
	Secrets               []string          `json:"secrets"`
	Set                   []setValue        `json:"set"`
	Labels                map[string]string `json:"labels"`
	Needs                 []string          `json:"needs"`
	Installed             *bool             `json:"installed"`
	KubeContext           string            `json:"kubeContext"`
	StrategicMergePatches []map[string]any  `json:"strategicMergePatches"`
	JSONPatches           []struct {
		Target map[string]any `json:"target"`
		Patch  []any          `json:"patch"`
	} `json:"jsonPatches"`
	Condition string `json:"condition"`
	Hooks     []any  `json:"hooks"`
}

type setValue struct {
	Name  string `json:"name"`
	Value any    `json:"value"`
	File  string `json:"file"`
}

var template = regexp.MustCompile(`\{\{`)

// Convert reads the helmfile at path.
func Convert(path string) (*Result, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(path, ".gotmpl") || template.Match(src) {
		return nil, fmt.Errorf("%s is a Go template: convoy imports plain YAML; render it first with `helmfile build > helmfile.rendered.yaml`", path)
	}
	var doc document
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var top map[string]any
	_ = yaml.Unmarshal(src, &top)
	c := &converter{dir: filepath.Dir(path), res: &Result{Files: map[string][]byte{}}}
	for _, k := range slices.Sorted(maps.Keys(top)) {
		switch k {
		case "repositories", "helmDefaults", "environments", "releases":
		default:
			c.warn("top-level %q is not imported", k)
		}
	}
	f := hclwrite.NewEmptyFile()
	body := f.Body()
	c.environments(body, doc.Environments)
	for _, r := range doc.Repositories {
		b := body.AppendNewBlock("repository", []string{ident(r.Name)}).Body()
		url := r.URL
		if r.OCI && !strings.HasPrefix(url, "oci://") {
			url = "oci://" + url
		} else if !strings.Contains(url, "://") {
			url = "https://" + url
		}
		b.SetAttributeValue("url", cty.StringVal(url))
		if r.Username != "" || r.Password != "" {
			c.warn("repository %s: credentials are not imported: set username and password (from a sensitive variable)", r.Name)
		}
		body.AppendNewline()
	}
	labels := c.releaseLabels(doc.Releases)
	for i, r := range doc.Releases {
		if r.Installed != nil && !*r.Installed {
			c.warn("release %s: installed: false, not imported (a release absent from the stack is uninstalled)", r.Name)
			continue
		}
		c.release(body, labels[i], r, doc.HelmDefaults, labels, doc.Releases)
		body.AppendNewline()
	}
	c.res.Files["stack.hcl"] = hclwrite.Format(f.Bytes())
	return c.res, nil
}

type converter struct {
	dir string
	res *Result
}

func (c *converter) warn(format string, args ...any) {
	c.res.Warnings = append(c.res.Warnings, fmt.Sprintf(format, args...))
}

// copyFile brings a file the helmfile reads into the stack directory, at
// the same relative path; it returns that path.
func (c *converter) copyFile(what, name string) (string, bool) {
	if filepath.IsAbs(name) || strings.HasPrefix(filepath.Clean(name), "..") {
		c.warn("%s: %s is outside the helmfile's directory: not copied; the stack refers to it as written", what, name)
		return name, true
	}
	b, err := os.ReadFile(filepath.Join(c.dir, name))
	if err != nil {
		c.warn("%s: %v", what, err)
		return "", false
	}
	rel := filepath.ToSlash(filepath.Clean(name))
	c.res.Files[rel] = b
	return rel, true
}

func (c *converter) environments(body *hclwrite.Body, envs map[string]environment) {
	if len(envs) == 0 {
		return
	}
	vars := map[string]bool{}
	type envOut struct {
		name string
		vals map[string]any
	}
	var outs []envOut
	for _, name := range slices.Sorted(maps.Keys(envs)) {
		e := envs[name]
		vals := map[string]any{}
		for _, v := range e.Values {
			switch v := v.(type) {
			case string:
				b, err := os.ReadFile(filepath.Join(c.dir, v))
				if err != nil {
					c.warn("environment %s: %v", name, err)
					continue
				}
				if template.Match(b) {
					c.warn("environment %s: %s is a Go template: not imported", name, v)
					continue
				}
				var m map[string]any
				if err := yaml.Unmarshal(b, &m); err != nil {
					c.warn("environment %s: %s: %v", name, v, err)
					continue
				}
				for k, x := range m {
					vals[k] = x
				}
			case map[string]any:
				for k, x := range v {
					vals[k] = x
				}
			}
		}
		for _, s := range e.Secrets {
			c.warn("environment %s: secrets %s: read it with sops_file() in vars (vars = { x = yamldecode(sops_file(%q)).x })", name, s, s)
		}
		for k := range vals {
			vars[k] = true
		}
		outs = append(outs, envOut{name, vals})
	}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		b := body.AppendNewBlock("variable", []string{ident(k)}).Body()
		b.SetAttributeValue("default", cty.NullVal(cty.DynamicPseudoType))
		b.SetAttributeValue("description", cty.StringVal("environment value "+k+" (from helmfile environments)"))
		body.AppendNewline()
	}
	for _, e := range outs {
		b := body.AppendNewBlock("environment", []string{ident(e.name)}).Body()
		if len(e.vals) > 0 {
			obj := map[string]cty.Value{}
			for k, v := range e.vals {
				obj[ident(k)] = toCty(v)
			}
			b.SetAttributeValue("vars", cty.ObjectVal(obj))
		}
		body.AppendNewline()
	}
	c.warn("environment values became variables (var.NAME): values files that used {{ .Values.x }} need var.x in their place")
}

// releaseLabels names the release blocks: the release name, made unique
// with the namespace when two releases share it.
func (c *converter) releaseLabels(rs []release) []string {
	count := map[string]int{}
	for _, r := range rs {
		count[r.Name]++
	}
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = ident(r.Name)
		if count[r.Name] > 1 {
			out[i] = ident(r.Namespace + "_" + r.Name)
		}
	}
	return out
}

func (c *converter) release(body *hclwrite.Body, label string, r release, def releaseSettings, labels []string, all []release) {
	b := body.AppendNewBlock("release", []string{label}).Body()
	if label != r.Name {
		b.SetAttributeValue("name", cty.StringVal(r.Name))
	}
	if r.Namespace != "" {
		b.SetAttributeValue("namespace", cty.StringVal(r.Namespace))
	}
	chart := r.Chart
	if strings.HasPrefix(chart, "/") || strings.HasPrefix(chart, ".") {
		c.warn("release %s: the local chart %s is relative to the helmfile's directory: copy it into the stack directory or adjust the path", r.Name, chart)
	} else if !strings.Contains(chart, "/") {
		c.warn("release %s: chart %q is neither a path nor repo/name", r.Name, chart)
	}
	b.SetAttributeValue("chart", cty.StringVal(chart))
	if r.Version != "" {
		b.SetAttributeValue("version", cty.StringVal(r.Version))
	}
	var layers []hclwrite.Tokens
	for _, v := range r.Values {
		switch v := v.(type) {
		case string:
			if p, ok := c.copyFile("release "+r.Name, v); ok {
				layers = append(layers, hclwrite.TokensForFunctionCall("file", hclwrite.TokensForValue(cty.StringVal(p))))
			}
		case map[string]any:
			layers = append(layers, hclwrite.TokensForValue(toCty(v)))
		}
	}
	for _, s := range r.Secrets {
		if p, ok := c.copyFile("release "+r.Name, s); ok {
			layers = append(layers, hclwrite.TokensForFunctionCall("sops_file", hclwrite.TokensForValue(cty.StringVal(p))))
		}
	}
	if len(layers) > 0 {
		b.SetAttributeRaw("values", hclwrite.TokensForTuple(layers))
	}
	if len(r.Set) > 0 {
		var attrs []hclwrite.ObjectAttrTokens
		for _, s := range r.Set {
			val := hclwrite.TokensForValue(toCty(s.Value))
			if s.File != "" {
				p, ok := c.copyFile("release "+r.Name, s.File)
				if !ok {
					continue
				}
				val = hclwrite.TokensForFunctionCall("file", hclwrite.TokensForValue(cty.StringVal(p)))
			}
			attrs = append(attrs, hclwrite.ObjectAttrTokens{Name: hclwrite.TokensForValue(cty.StringVal(s.Name)), Value: val})
		}
		b.SetAttributeRaw("set", hclwrite.TokensForObject(attrs))
	}
	if len(r.Labels) > 0 {
		m := map[string]cty.Value{}
		for k, v := range r.Labels {
			m[k] = cty.StringVal(v)
		}
		b.SetAttributeValue("labels", cty.MapVal(m))
	}
	if len(r.Needs) > 0 {
		var deps []hclwrite.Tokens
		for _, n := range r.Needs {
			target := n
			if i := strings.LastIndex(n, "/"); i >= 0 {
				target = n[i+1:]
			}
			found := ""
			for i, o := range all {
				if o.Name == target && (n == target || strings.HasPrefix(n, o.Namespace+"/") || strings.HasSuffix(strings.TrimSuffix(n, "/"+target), "/"+o.Namespace)) {
					found = labels[i]
					break
				}
			}
			if found == "" {
				c.warn("release %s: needs %s: no such release in the helmfile", r.Name, n)
				continue
			}
			deps = append(deps, hclwrite.TokensForTraversal(hcl.Traversal{hcl.TraverseRoot{Name: "release"}, hcl.TraverseAttr{Name: found}}))
		}
		if len(deps) > 0 {
			b.SetAttributeRaw("depends_on", hclwrite.TokensForTuple(deps))
		}
	}
	boolean := func(attr string, v, d *bool) {
		if v == nil {
			v = d
		}
		if v != nil {
			b.SetAttributeValue(attr, cty.BoolVal(*v))
		}
	}
	boolean("create_namespace", r.CreateNamespace, def.CreateNamespace)
	boolean("wait", r.Wait, def.Wait)
	boolean("wait_for_jobs", r.WaitForJobs, def.WaitForJobs)
	boolean("atomic", r.Atomic, def.Atomic)
	boolean("cleanup_on_fail", r.CleanupOnFail, def.CleanupOnFail)
	boolean("disable_hooks", r.DisableHooks, def.DisableHooks)
	if t := firstInt(r.Timeout, def.Timeout); t != nil {
		b.SetAttributeValue("timeout", cty.StringVal(fmt.Sprintf("%ds", *t)))
	}
	if h := firstInt(r.HistoryMax, def.HistoryMax); h != nil {
		b.SetAttributeValue("history_max", cty.NumberIntVal(int64(*h)))
	}
	var patches []hclwrite.Tokens
	for _, p := range r.StrategicMergePatches {
		target := map[string]cty.Value{}
		if k, ok := p["kind"].(string); ok {
			target["kind"] = cty.StringVal(k)
		}
		if md, ok := p["metadata"].(map[string]any); ok {
			if n, ok := md["name"].(string); ok {
				target["name"] = cty.StringVal(n)
			}
		}
		patches = append(patches, hclwrite.TokensForObject([]hclwrite.ObjectAttrTokens{
			{Name: hclwrite.TokensForIdentifier("target"), Value: hclwrite.TokensForValue(cty.ObjectVal(target))},
			{Name: hclwrite.TokensForIdentifier("patch"), Value: hclwrite.TokensForFunctionCall("yamlencode", hclwrite.TokensForValue(toCty(p)))},
		}))
	}
	for _, p := range r.JSONPatches {
		target := map[string]cty.Value{}
		for _, k := range []string{"kind", "name", "namespace"} {
			if s, ok := p.Target[k].(string); ok {
				target[k] = cty.StringVal(s)
			}
		}
		patches = append(patches, hclwrite.TokensForObject([]hclwrite.ObjectAttrTokens{
			{Name: hclwrite.TokensForIdentifier("target"), Value: hclwrite.TokensForValue(cty.ObjectVal(target))},
			{Name: hclwrite.TokensForIdentifier("patch"), Value: hclwrite.TokensForFunctionCall("jsonencode", hclwrite.TokensForValue(toCty(p.Patch)))},
		}))
	}
	if len(patches) > 0 {
		b.SetAttributeRaw("patches", hclwrite.TokensForTuple(patches))
	}
	if r.KubeContext != "" {
		c.warn("release %s: kubeContext %s: declare cluster %q { context = %q } and set cluster = cluster.NAME", r.Name, r.KubeContext, ident(r.KubeContext), r.KubeContext)
	}
	if r.Condition != "" {
		c.warn("release %s: condition %s is not imported: use count = var.x ? 1 : 0", r.Name, r.Condition)
	}
	if len(r.Hooks) > 0 {
		c.warn("release %s: helmfile hooks are not imported", r.Name)
	}
}

func firstInt(a, b *int) *int {
	if a != nil {
		return a
	}
	return b
}

var notIdent = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// ident makes a name usable as a block label or attribute name.
func ident(s string) string {
	s = notIdent.ReplaceAllString(s, "_")
	if s == "" || !(s[0] == '_' || s[0] >= 'A' && s[0] <= 'Z' || s[0] >= 'a' && s[0] <= 'z') {
		s = "_" + s
	}
	return s
}

// toCty turns a YAML value into a cty value, through JSON.
func toCty(v any) cty.Value {
	b, err := jsonMarshal(v)
	if err != nil {
		return cty.NullVal(cty.DynamicPseudoType)
	}
	ty, err := ctyjson.ImpliedType(b)
	if err != nil {
		return cty.NullVal(cty.DynamicPseudoType)
	}
	val, err := ctyjson.Unmarshal(b, ty)
	if err != nil {
		return cty.NullVal(cty.DynamicPseudoType)
	}
	return val
}

func jsonMarshal(v any) ([]byte, error) {
	y, err := yaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	j, err := yaml.YAMLToJSON(y)
	return bytes.TrimSpace(j), err
}

// Write writes the files under dir, which must not hold a stack.hcl yet.
func (r *Result) Write(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "stack.hcl")); err == nil {
		return fmt.Errorf("%s already holds a stack.hcl: choose an empty directory", dir)
	}
	for _, name := range slices.Sorted(maps.Keys(r.Files)) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, r.Files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}
