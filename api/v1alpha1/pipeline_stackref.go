package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// In the CRD's schema an item is untyped (a structural schema cannot type
// it "string or object"), which no marker says: crd-patches.yaml takes the
// type off and adds the checks of the string form and of the object's keys.
// +kubebuilder:pruning:PreserveUnknownFields

// PipelineStackRef names a Stack of a Pipeline's stage. In YAML it is
// either a plain name (a Stack of the Pipeline's namespace) or an object
// {namespace, name} (namespace optional: the Pipeline's):
//
//	stacks: [staging-app, {namespace: team-a-prod, name: app}]
type PipelineStackRef struct {
	// Namespace is the Stack's namespace ("": the Pipeline's).
	//
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
	// Name is the Stack's name.
	//
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`

	// raw is an item that is neither a string nor an object of namespace
	// and name, kept as written: decoding never fails on it (one bad
	// Pipeline must not fail a list of them), Invalid reports it, and
	// encoding writes it back unchanged.
	raw json.RawMessage
}

// StackRefs are plain names as references: Stacks of the Pipeline's
// namespace.
func StackRefs(names ...string) []PipelineStackRef {
	out := make([]PipelineStackRef, len(names))
	for i, n := range names {
		out[i] = PipelineStackRef{Name: n}
	}
	return out
}

// In is the Stack the reference names for a Pipeline of namespace ns.
func (r PipelineStackRef) In(ns string) types.NamespacedName {
	if r.Namespace != "" {
		ns = r.Namespace
	}
	return types.NamespacedName{Namespace: ns, Name: r.Name}
}

// String is the reference as written: "name" or "namespace/name".
func (r PipelineStackRef) String() string {
	if r.raw != nil {
		return string(r.raw)
	}
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// Invalid says why the item is not a Stack reference ("": it is one).
// The CRD's schema refuses such items; a Pipeline stored before it did
// reaches the controller, which reports this.
func (r PipelineStackRef) Invalid() string {
	if r.raw != nil {
		return fmt.Sprintf("%s is neither a Stack name nor {namespace, name}", r.raw)
	}
	if r.Name == "" {
		return "no name"
	}
	return ""
}

// MarshalJSON writes a plain name as a string, else {namespace, name}.
func (r PipelineStackRef) MarshalJSON() ([]byte, error) {
	if r.raw != nil {
		return r.raw, nil
	}
	if r.Namespace == "" {
		return json.Marshal(r.Name)
	}
	type plain PipelineStackRef
	return json.Marshal(plain(r))
}

// UnmarshalJSON reads a string or an object of name and namespace; any
// other value is kept (Invalid), never an error.
func (r *PipelineStackRef) UnmarshalJSON(b []byte) error {
	*r = PipelineStackRef{}
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		if err := json.Unmarshal(b, &r.Name); err == nil {
			return nil
		}
	case len(b) > 0 && b[0] == '{':
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(b, &fields); err == nil && onlyKeys(fields, "namespace", "name") {
			type plain PipelineStackRef
			var p plain
			if err := json.Unmarshal(b, &p); err == nil {
				*r = PipelineStackRef(p)
				return nil
			}
		}
	}
	r.raw = slices.Clone(json.RawMessage(b))
	return nil
}

func onlyKeys(m map[string]json.RawMessage, keys ...string) bool {
	for k := range m {
		if !slices.Contains(keys, k) {
			return false
		}
	}
	return true
}

// PipelineOwner is the Pipeline a Stack's convoy.dev/pipeline annotation
// names: "NAME" is a Pipeline of the Stack's namespace, "NAMESPACE/NAME"
// one of another. ok is false without the annotation.
func PipelineOwner(st *Stack) (owner types.NamespacedName, ok bool) {
	v := st.Annotations[PipelineAnnotation]
	if v == "" {
		return types.NamespacedName{}, false
	}
	if ns, name, cut := strings.Cut(v, "/"); cut {
		return types.NamespacedName{Namespace: ns, Name: name}, true
	}
	return types.NamespacedName{Namespace: st.Namespace, Name: v}, true
}

// PipelineAnnotationValue is the value of the convoy.dev/pipeline
// annotation a Pipeline of namespace ns named name writes on a Stack of
// namespace stackNS: the name alone in its own namespace (as before
// Pipelines reached other namespaces), else namespace/name.
func PipelineAnnotationValue(ns, name, stackNS string) string {
	if ns == stackNS {
		return name
	}
	return ns + "/" + name
}
