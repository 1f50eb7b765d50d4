package kube

import (
	"path"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// IgnoreRule names fields that apply leaves to other field managers (an
// autoscaler's replicas): objects of Kind whose name matches Name get
// their rendered value of Paths applied only when they are created, and
// never compared.
type IgnoreRule struct {
	Kind string `json:"kind"`
	// Name is a glob (path.Match); "" matches every name.
	Name  string    `json:"name,omitempty"`
	Paths []Pointer `json:"paths"`
}

// Matches reports whether the rule applies to the object ref names.
func (r IgnoreRule) Matches(ref Ref) bool {
	if r.Kind != ref.Kind {
		return false
	}
	if r.Name == "" {
		return true
	}
	ok, err := path.Match(r.Name, ref.Name)
	return ok && err == nil
}

// IgnoreRules are a release's rules; an object is subject to every rule
// that matches it.
type IgnoreRules []IgnoreRule

// For lists the ignored paths of the object ref names.
func (rs IgnoreRules) For(ref Ref) []Pointer {
	var out []Pointer
	for _, r := range rs {
		if r.Matches(ref) {
			out = append(out, r.Paths...)
		}
	}
	return out
}

// Strip returns obj without the fields the rules leave to others (obj
// itself when none applies): the part of obj that convoy owns.
func (rs IgnoreRules) Strip(obj *unstructured.Unstructured) *unstructured.Unstructured {
	paths := rs.For(RefOf(obj))
	if len(paths) == 0 {
		return obj
	}
	out := obj.DeepCopy()
	for _, p := range paths {
		remove(out.Object, p)
	}
	return out
}

// leave returns the object to apply for obj when paths are left to other
// managers, given the live object (nil when absent: a new object is
// created as rendered, as Terraform's ignore_changes). A field another
// manager owns, or that nobody does, is left out: applying without it
// changes nothing. A field only ours owns (set at creation, or before it
// was ignored) is applied with its live value: left out, server-side apply
// would delete it.
func (c *Client) leave(obj, live *unstructured.Unstructured, paths []Pointer) *unstructured.Unstructured {
	if len(paths) == 0 || live == nil {
		return obj
	}
	out := obj.DeepCopy()
	for _, p := range paths {
		if _, set := lookup(out.Object, p); !set {
			continue
		}
		if v, ok := lookup(live.Object, p); ok && c.soleOwner(live, p) {
			if replace(out.Object, p, runtime.DeepCopyJSONValue(v)) == nil {
				continue
			}
		}
		remove(out.Object, p)
	}
	return out
}

// soleOwner reports whether our manager (or one it inherits from) owns the
// field at p of live and no other manager does.
func (c *Client) soleOwner(live *unstructured.Unstructured, p Pointer) bool {
	ours := false
	for _, o := range OwnersOf(live, p) {
		if !c.IsOwn(o) {
			return false
		}
		ours = true
	}
	return ours
}
