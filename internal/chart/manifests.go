package chart

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"github.com/convoy-sh/convoy/internal/chart/util"
	"github.com/convoy-sh/convoy/internal/yamldoc"
)

// HookEvent is a value of the helm.sh/hook annotation.
type HookEvent string

// Hook events, as Helm names them.
const (
	HookPreInstall   HookEvent = "pre-install"
	HookPostInstall  HookEvent = "post-install"
	HookPreDelete    HookEvent = "pre-delete"
	HookPostDelete   HookEvent = "post-delete"
	HookPreUpgrade   HookEvent = "pre-upgrade"
	HookPostUpgrade  HookEvent = "post-upgrade"
	HookPreRollback  HookEvent = "pre-rollback"
	HookPostRollback HookEvent = "post-rollback"
	HookTest         HookEvent = "test"
)

var hookEvents = map[string]HookEvent{
	"pre-install": HookPreInstall, "post-install": HookPostInstall,
	"pre-delete": HookPreDelete, "post-delete": HookPostDelete,
	"pre-upgrade": HookPreUpgrade, "post-upgrade": HookPostUpgrade,
	"pre-rollback": HookPreRollback, "post-rollback": HookPostRollback,
	"test": HookTest, "test-success": HookTest,
}

// HookDeletePolicy is a value of helm.sh/hook-delete-policy.
type HookDeletePolicy string

// Hook delete policies.
const (
	HookSucceeded          HookDeletePolicy = "hook-succeeded"
	HookFailed             HookDeletePolicy = "hook-failed"
	HookBeforeHookCreation HookDeletePolicy = "before-hook-creation"
)

// Hook annotations.
const (
	HookAnnotation          = "helm.sh/hook"
	HookWeightAnnotation    = "helm.sh/hook-weight"
	HookDeleteAnnotation    = "helm.sh/hook-delete-policy"
	HookOutputLogAnnotation = "helm.sh/hook-output-log-policy"
)

// Hook is one hook document. JSON tags match Helm's release.Hook.
type Hook struct {
	Name              string             `json:"name,omitempty"`
	Kind              string             `json:"kind,omitempty"`
	Path              string             `json:"path,omitempty"`
	Manifest          string             `json:"manifest,omitempty"`
	Events            []HookEvent        `json:"events,omitempty"`
	Weight            int                `json:"weight,omitempty"`
	DeletePolicies    []HookDeletePolicy `json:"delete_policies,omitempty"`
	OutputLogPolicies []string           `json:"output_log_policies,omitempty"`
}

// Manifest is one release resource document.
type Manifest struct {
	// Path is the template that produced it ("chart/templates/x.yaml").
	Path       string
	Content    string
	APIVersion string
	Kind       string
	Name       string
	Namespace  string
}

// Document is the manifest as the release manifest holds it: its content
// and the newline that follows each document there. Helm applies the
// objects it parses from the release manifest, so a block scalar with keep
// chomping (|+) that ends the document keeps that newline in its value:
// objects are parsed from Document, never from Content alone.
func (m Manifest) Document() string { return m.Content + "\n" }

// ManifestError is a rendered document that is not valid YAML.
type ManifestError struct {
	Template string
	Err      error
}

func (e *ManifestError) Error() string {
	return fmt.Sprintf("YAML parse error on %s: %v", e.Template, e.Err)
}
func (e *ManifestError) Unwrap() error { return e.Err }

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*`)

// splitDocuments splits a rendered file into non-empty documents.
func splitDocuments(s string) []string {
	var out []string
	for _, d := range docSeparator.Split(strings.TrimLeftFunc(s, unicode.IsSpace), -1) {
		if strings.TrimSpace(d) == "" {
			continue
		}
		out = append(out, strings.TrimLeftFunc(d, unicode.IsSpace))
	}
	return out
}

// installOrder is Helm's kind install order.
var installOrder = []string{
	"PriorityClass", "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange",
	"PodSecurityPolicy", "PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList",
	"ConfigMap", "StorageClass", "PersistentVolume", "PersistentVolumeClaim",
	"CustomResourceDefinition", "ClusterRole", "ClusterRoleList", "ClusterRoleBinding",
	"ClusterRoleBindingList", "Role", "RoleList", "RoleBinding", "RoleBindingList",
	"Service", "DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment",
	"HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress",
	"APIService", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
}

var installRank = func() map[string]int {
	m := make(map[string]int, len(installOrder))
	for i, k := range installOrder {
		m[k] = i
	}
	return m
}()

func lessByKind(a, b string) bool {
	ra, aok := installRank[a]
	rb, bok := installRank[b]
	switch {
	case !aok && !bok:
		return a < b
	case !aok:
		return false
	case !bok:
		return true
	}
	return ra < rb
}

// sortManifests splits rendered files into hooks and resources, in Helm's
// order: files by name, documents in file order, then a stable sort by kind.
// Partials and empty files are skipped; documents with unknown hook events
// are dropped, as Helm drops them.
func sortManifests(files map[string]string, keep bool) ([]*Hook, []Manifest, error) {
	var hooks []*Hook
	var manifests []Manifest
	for _, p := range sortedKeys(files) {
		content := files[p]
		if strings.HasPrefix(baseName(p), "_") || strings.TrimSpace(content) == "" {
			continue
		}
		for _, doc := range splitDocuments(content) {
			h, err := headOf(doc, keep)
			if err != nil {
				return hooks, manifests, &ManifestError{Template: p, Err: err}
			}
			m := Manifest{Path: p, Content: doc, APIVersion: h.Version, Kind: h.Kind}
			if h.Metadata != nil {
				m.Name = h.Metadata.Name
				m.Namespace, _ = h.Metadata.Namespace.(string)
			}
			if h.Metadata == nil || len(h.Metadata.Annotations) == 0 {
				manifests = append(manifests, m)
				continue
			}
			events, ok := h.Metadata.Annotations[HookAnnotation]
			if !ok {
				manifests = append(manifests, m)
				continue
			}
			weight, err := strconv.Atoi(h.Metadata.Annotations[HookWeightAnnotation])
			if err != nil {
				weight = 0
			}
			hook := &Hook{
				Name: h.Metadata.Name, Kind: h.Kind, Path: p, Manifest: doc,
				Events: []HookEvent{}, Weight: weight,
				DeletePolicies: []HookDeletePolicy{}, OutputLogPolicies: []string{},
			}
			unknown := false
			for _, e := range strings.Split(events, ",") {
				ev, ok := hookEvents[strings.ToLower(strings.TrimSpace(e))]
				if !ok {
					unknown = true
					break
				}
				hook.Events = append(hook.Events, ev)
			}
			if unknown {
				continue
			}
			for _, v := range annotationValues(h.Metadata.Annotations, HookDeleteAnnotation) {
				hook.DeletePolicies = append(hook.DeletePolicies, HookDeletePolicy(v))
			}
			hook.OutputLogPolicies = append(hook.OutputLogPolicies, annotationValues(h.Metadata.Annotations, HookOutputLogAnnotation)...)
			hooks = append(hooks, hook)
		}
	}
	sort.SliceStable(hooks, func(i, j int) bool { return lessByKind(hooks[i].Kind, hooks[j].Kind) })
	sort.SliceStable(manifests, func(i, j int) bool { return lessByKind(manifests[i].Kind, manifests[j].Kind) })
	return hooks, manifests, nil
}

// headOf is the document's head as Helm's sorter reads it
// (yaml.Unmarshal into util.SimpleHead). It is read from the document's
// JSON as a manifest holds it (Manifest.Document: a line break after it),
// the JSON a plan's parse of the rendering, or of the deployed revision's
// manifest, reads too (yamldoc; kept for it when keep is set): the
// document is converted once. Where
// that could answer otherwise, the document is read as Helm reads it: when
// the JSON does not decode into the head (a number or a boolean where the
// head has a string, which yaml.Unmarshal turns into one; not a mapping),
// when a value of the head ends in a line break (a block scalar ending the
// document, whose value the line break after it changes), and when the
// last line is a document marker ("..." without a line break after it is
// an error), or the document is not UTF-8 (YAML reads UTF-16 too, whose
// characters take two bytes).
func headOf(doc string, keep bool) (util.SimpleHead, error) {
	var h util.SimpleHead
	last := doc[strings.LastIndexByte(doc, '\n')+1:]
	if !strings.HasPrefix(last, "---") && !strings.HasPrefix(last, "...") && utf8.ValidString(doc) {
		convert := yamldoc.Unkept
		if keep {
			convert = yamldoc.JSON
		}
		data, err := convert(append([]byte(doc), '\n'))
		if err == nil && json.Unmarshal(data, &h) == nil && !endsInLineBreak(&h) {
			return h, nil
		}
	}
	h = util.SimpleHead{}
	err := yaml.Unmarshal([]byte(doc), &h)
	return h, err
}

// endsInLineBreak reports whether a string of h ends in a line break.
func endsInLineBreak(h *util.SimpleHead) bool {
	nl := func(s string) bool { return strings.HasSuffix(s, "\n") || strings.HasSuffix(s, "\r") }
	if nl(h.Version) || nl(h.Kind) {
		return true
	}
	if h.Metadata == nil {
		return false
	}
	if ns, _ := h.Metadata.Namespace.(string); nl(h.Metadata.Name) || nl(ns) {
		return true
	}
	for k, v := range h.Metadata.Annotations {
		if nl(k) || nl(v) {
			return true
		}
	}
	return false
}

func annotationValues(ann map[string]string, key string) []string {
	v, ok := ann[key]
	if !ok {
		return nil
	}
	var out []string
	for _, p := range strings.Split(v, ",") {
		out = append(out, strings.ToLower(strings.TrimSpace(p)))
	}
	return out
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// HooksFor lists the hooks that run on event, in Helm's execution order:
// ascending weight, then name, otherwise kind order.
func HooksFor(hooks []*Hook, event HookEvent) []*Hook {
	var out []*Hook
	for _, h := range hooks {
		if slices.Contains(h.Events, event) {
			out = append(out, h)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Weight != out[j].Weight {
			return out[i].Weight < out[j].Weight
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// SplitManifests parses a stream of documents (a post-renderer's output)
// into resources in Helm's kind order, each recorded as coming from path.
// Documents that are hooks stay resources: post-rendering sees no hooks.
func SplitManifests(path, stream string) ([]Manifest, error) {
	hooks, manifests, err := sortManifests(map[string]string{path: stream}, false)
	if err != nil {
		return nil, err
	}
	for _, h := range hooks {
		manifests = append(manifests, Manifest{Path: path, Content: h.Manifest, Kind: h.Kind, Name: h.Name})
	}
	return manifests, nil
}
