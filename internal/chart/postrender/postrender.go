// Package postrender changes a chart's rendered manifests before they are
// planned, applied and recorded, as helm --post-renderer does: patches
// (strategic-merge and JSON 6902, applied with kustomize's filters) and an
// exec post-renderer.
package postrender

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path"
	"strings"

	"github.com/convoy-sh/convoy/internal/chart"
	"sigs.k8s.io/kustomize/api/filters/patchjson6902"
	"sigs.k8s.io/kustomize/api/filters/patchstrategicmerge"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Spec is what to do to a release's rendered manifests.
type Spec struct {
	Patches []Patch `json:",omitempty"`
	// Exec runs after the patches; nil: none.
	Exec *Exec `json:",omitempty"`
}

// Empty says there is nothing to do.
func (s Spec) Empty() bool { return len(s.Patches) == 0 && s.Exec == nil }

// Patch is one patch and the objects it applies to.
type Patch struct {
	// Name identifies the patch in errors ("patches[0]").
	Name   string
	Target Target
	// Patch is the JSON document: an operation list when JSON6902, else a
	// strategic-merge patch.
	Patch    string
	JSON6902 bool `json:",omitempty"`
}

// Target selects objects: empty fields match anything; Name is a glob.
type Target struct {
	Kind      string            `json:",omitempty"`
	Name      string            `json:",omitempty"`
	Namespace string            `json:",omitempty"`
	Labels    map[string]string `json:",omitempty"`
}

// Exec is Helm's exec post-renderer.
type Exec struct {
	Command string
	Args    []string `json:",omitempty"`
}

// Apply changes r's manifests in place. namespace is the release's, the
// namespace of objects that set none. A patch that matches no object is an
// error naming the patch.
func Apply(ctx context.Context, r *chart.Rendered, namespace string, spec Spec) error {
	if spec.Empty() {
		return nil
	}
	for _, p := range spec.Patches {
		if err := applyPatch(r, namespace, p); err != nil {
			return err
		}
	}
	if spec.Exec != nil {
		return runExec(ctx, r, *spec.Exec)
	}
	return nil
}

func applyPatch(r *chart.Rendered, namespace string, p Patch) error {
	var filter interface {
		Filter([]*yaml.RNode) ([]*yaml.RNode, error)
	}
	if p.JSON6902 {
		filter = patchjson6902.Filter{Patch: p.Patch}
	} else {
		node, err := yaml.Parse(p.Patch)
		if err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
		filter = patchstrategicmerge.Filter{Patch: node}
	}
	matched := false
	for i := range r.Manifests {
		m := &r.Manifests[i]
		node, err := yaml.Parse(m.Content)
		if err != nil {
			return fmt.Errorf("%s: parse %s: %w", p.Name, m.Path, err)
		}
		if !matches(p.Target, node, namespace) {
			continue
		}
		matched = true
		out, err := filter.Filter([]*yaml.RNode{node})
		if err != nil {
			return fmt.Errorf("%s on %s %s: %w", p.Name, node.GetKind(), node.GetName(), err)
		}
		if len(out) != 1 {
			return fmt.Errorf("%s on %s %s: a patch may not delete the object", p.Name, node.GetKind(), node.GetName())
		}
		s, err := out[0].String()
		if err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
		m.Content = strings.TrimRight(s, "\n")
		m.APIVersion, m.Kind = out[0].GetApiVersion(), out[0].GetKind()
		m.Name, m.Namespace = out[0].GetName(), out[0].GetNamespace()
	}
	if !matched {
		return fmt.Errorf("%s matches no rendered object (target: %s)", p.Name, describe(p.Target))
	}
	return nil
}

func matches(t Target, node *yaml.RNode, namespace string) bool {
	if t.Kind != "" && t.Kind != node.GetKind() {
		return false
	}
	if t.Name != "" {
		if ok, _ := path.Match(t.Name, node.GetName()); !ok {
			return false
		}
	}
	if t.Namespace != "" {
		ns := node.GetNamespace()
		if ns == "" {
			ns = namespace
		}
		if t.Namespace != ns {
			return false
		}
	}
	labels := node.GetLabels()
	for k, v := range t.Labels {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func describe(t Target) string {
	var parts []string
	for _, kv := range [][2]string{{"kind", t.Kind}, {"name", t.Name}, {"namespace", t.Namespace}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+" "+kv[1])
		}
	}
	for k, v := range t.Labels {
		parts = append(parts, fmt.Sprintf("label %s=%s", k, v))
	}
	if len(parts) == 0 {
		return "every object"
	}
	return strings.Join(parts, ", ")
}

// runExec pipes the manifests through the command, as Helm's exec
// post-renderer: the output's documents replace them.
func runExec(ctx context.Context, r *chart.Rendered, e Exec) error {
	var in bytes.Buffer
	for _, m := range r.Manifests {
		fmt.Fprintf(&in, "---\n# Source: %s\n%s\n", m.Path, m.Content)
	}
	cmd := exec.CommandContext(ctx, e.Command, e.Args...)
	cmd.Stdin = &in
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("post_renderer %s: %w: %s", e.Command, err, strings.TrimSpace(stderr.String()))
	}
	ms, err := chart.SplitManifests("post-renderer", out.String())
	if err != nil {
		return fmt.Errorf("post_renderer %s: its output: %w", e.Command, err)
	}
	r.Manifests = ms
	return nil
}
