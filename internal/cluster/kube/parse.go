package kube

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/convoy-sh/convoy/internal/yamldoc"
)

// Parse splits a multi-document manifest into objects, in order. Empty
// documents (only comments or whitespace) are skipped and v1 Lists are
// flattened. Namespaced objects without a namespace get defaultNamespace;
// cluster-scoped objects lose any namespace they were given (the API server
// would reject it and their identity has none). Scope comes from the
// RESTMapper, so every kind must be known to the cluster: install CRDs first.
//
// Errors name the document by position and by its "# Source:" comment when
// Helm's renderer wrote one, and the object when it could be decoded.
func (c *Client) Parse(manifest string, defaultNamespace string) ([]*unstructured.Unstructured, error) {
	return parse(manifest, func(u *unstructured.Unstructured) error { return c.scope(u, defaultNamespace) })
}

// ParseWith is Parse with each object passed to before first, ahead of
// the RESTMapper: it may change the object's API version (a stored
// revision's removed version read as its successor), leave the object out
// (ErrSkipObject) or refuse it.
func (c *Client) ParseWith(manifest, defaultNamespace string, before func(*unstructured.Unstructured) error) ([]*unstructured.Unstructured, error) {
	return parse(manifest, func(u *unstructured.Unstructured) error {
		if err := before(u); err != nil {
			return err
		}
		return c.scope(u, defaultNamespace)
	})
}

// ErrSkipObject, returned by ParseWith's before, leaves the object out.
var ErrSkipObject = errors.New("skip this object")

// ParseUnmapped splits a manifest into objects like Parse, without the
// RESTMapper: for kinds the cluster does not serve yet, whose scope is not
// known. Objects keep the namespace they were given.
func ParseUnmapped(manifest string) ([]*unstructured.Unstructured, error) {
	return parse(manifest, func(*unstructured.Unstructured) error { return nil })
}

// parse splits a manifest into objects, each passed to check.
func parse(manifest string, check func(*unstructured.Unstructured) error) ([]*unstructured.Unstructured, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	var objs []*unstructured.Unstructured
	for n := 1; ; n++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("manifest document %d: %w", n, err)
		}
		found, err := decodeDocument(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", docName(n, doc), err)
		}
		for _, u := range found {
			if err := check(u); errors.Is(err, ErrSkipObject) {
				continue
			} else if err != nil {
				return nil, fmt.Errorf("%s: %w", docName(n, doc), err)
			}
			objs = append(objs, u)
		}
	}
}

// Served reports whether the cluster serves the kind (its API discovery
// knows it; the mapper is refreshed once when it does not).
func (c *Client) Served(gvk schema.GroupVersionKind) bool {
	_, err := c.mapping(gvk)
	return err == nil
}

// decodeDocument turns one YAML document into zero or more objects.
func decodeDocument(doc []byte) ([]*unstructured.Unstructured, error) {
	data, err := yamldoc.Checked(doc, checkDocument)
	if err != nil {
		return nil, err
	}
	if isEmpty(data) {
		return nil, nil
	}
	decoded, err := runtime.Decode(unstructured.UnstructuredJSONScheme, data)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	switch o := decoded.(type) {
	case *unstructured.Unstructured:
		objs = append(objs, o)
	case *unstructured.UnstructuredList:
		for i := range o.Items {
			objs = append(objs, &o.Items[i])
		}
	default:
		return nil, fmt.Errorf("unexpected object type %T", decoded)
	}
	for _, u := range objs {
		if u.GetName() == "" {
			return nil, fmt.Errorf("%s %s: metadata.name is required (server-side apply cannot use generateName)", u.GetAPIVersion(), u.GetKind())
		}
	}
	return objs, nil
}

// isEmpty reports whether data, a document as JSON, is an empty document.
func isEmpty(data []byte) bool {
	return len(data) == 0 || string(data) == "null"
}

// checkDocument checks that data, a non-empty YAML document as JSON, is an
// object with an apiVersion, a kind and string metadata.
func checkDocument(data []byte) error {
	if isEmpty(data) {
		return nil
	}
	var head struct {
		APIVersion any `json:"apiVersion"`
		Kind       any `json:"kind"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return errors.New("not a Kubernetes object (expected a mapping)")
	}
	if s, ok := head.APIVersion.(string); !ok || s == "" {
		return errors.New("apiVersion is missing or not a string")
	}
	if s, ok := head.Kind.(string); !ok || s == "" {
		return errors.New("kind is missing or not a string")
	}
	return metadataStrings(data, head.APIVersion.(string)+" "+head.Kind.(string))
}

// metadataStrings refuses metadata fields that must be strings and are
// not, as helm does ("json: cannot unmarshal bool into Go struct field
// ObjectMeta.metadata.name of type string"), but saying why: YAML 1.1
// reads an unquoted n, no, off, y, yes, on, true, false, null or number
// as such, so a release named "n" in an unquoted {{ .Release.Name }}
// renders metadata.name: false. (Decoded as it is, the name was lost and
// the error said that none was given.)
func metadataStrings(data []byte, what string) error {
	var obj struct {
		Metadata map[string]any `json:"metadata"`
	}
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil // not an object with a metadata mapping: the decoder says
	}
	notString := func(field string, v any) error {
		var kind string
		switch v.(type) {
		case string:
			return nil
		case nil:
			kind = "null"
		case bool:
			kind = "a boolean"
		case float64, json.Number:
			kind = "a number"
		default:
			return fmt.Errorf("%s: %s is not a string", what, field)
		}
		shown, _ := json.Marshal(v)
		return fmt.Errorf("%s: %s is %s (%s), not a string: YAML reads an unquoted y, n, yes, no, on, off, true, false or number so "+
			"(a release named \"n\" in {{ .Release.Name }}), and helm refuses it too; quote it in the template ({{ .Release.Name | quote }}) or choose another name",
			what, field, shown, kind)
	}
	for _, field := range []string{"name", "generateName", "namespace"} {
		if v, ok := obj.Metadata[field]; ok && v != nil {
			if err := notString("metadata."+field, v); err != nil {
				return err
			}
		}
	}
	for _, field := range []string{"labels", "annotations"} {
		m, ok := obj.Metadata[field].(map[string]any)
		if !ok {
			continue
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if m[k] == nil {
				continue // helm reads null as ""
			}
			if err := notString(fmt.Sprintf("metadata.%s[%q]", field, k), m[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// scope sets or clears u's namespace according to its kind's scope.
func (c *Client) scope(u *unstructured.Unstructured, defaultNamespace string) error {
	namespaced, err := c.IsNamespaced(u.GroupVersionKind())
	if err != nil {
		return objectError(RefOf(u), err)
	}
	switch {
	case namespaced && u.GetNamespace() == "":
		u.SetNamespace(defaultNamespace)
	case !namespaced && u.GetNamespace() != "":
		u.SetNamespace("")
	}
	return nil
}

// docName names a document for errors, with the template Helm rendered it
// from when the "# Source:" comment is there.
func docName(n int, doc []byte) string {
	for line := range strings.SplitSeq(string(doc), "\n") {
		if src, ok := strings.CutPrefix(strings.TrimSpace(line), "# Source: "); ok {
			return fmt.Sprintf("manifest document %d (%s)", n, strings.TrimSpace(src))
		}
	}
	return fmt.Sprintf("manifest document %d", n)
}
