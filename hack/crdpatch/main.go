// Command crdpatch applies JSON patches (RFC 6902: add, remove, replace,
// test) to the CRDs controller-gen wrote, in place: the few schema parts
// no kubebuilder marker can say (make generate runs it after
// controller-gen).
//
//	crdpatch PATCHES CRD_DIR
//
// PATCHES is a YAML list of {crd: FILE, why: TEXT, patch: [OPERATIONS]},
// FILE a name in CRD_DIR; an operation's path walks through lists but
// changes only objects' members. An operation that does not apply (a path
// that is gone, a member to add that exists, a test that fails) is an
// error: the Go types changed under the patch, and the patch must be looked
// at again. The CRDs are written back as controller-gen writes them (keys
// sorted, sigs.k8s.io/yaml).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

type patchSet struct {
	CRD   string      `json:"crd"`
	Why   string      `json:"why"`
	Patch []operation `json:"patch"`
}

type operation struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: crdpatch PATCHES CRD_DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "crdpatch:", err)
		os.Exit(1)
	}
}

func run(patchesFile, dir string) error {
	b, err := os.ReadFile(patchesFile)
	if err != nil {
		return err
	}
	var sets []patchSet
	if err := yaml.UnmarshalStrict(b, &sets); err != nil {
		return fmt.Errorf("%s: %w", patchesFile, err)
	}
	byFile := map[string][]patchSet{}
	var order []string
	for _, s := range sets {
		if s.CRD == "" || filepath.Base(s.CRD) != s.CRD || s.Why == "" || len(s.Patch) == 0 {
			return fmt.Errorf("%s: each entry needs crd (a file name), why and patch", patchesFile)
		}
		if byFile[s.CRD] == nil {
			order = append(order, s.CRD)
		}
		byFile[s.CRD] = append(byFile[s.CRD], s)
	}
	for _, name := range order {
		if err := patchFile(filepath.Join(dir, name), byFile[name]); err != nil {
			return err
		}
	}
	return nil
}

func patchFile(path string, sets []patchSet) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc, err := decode(b)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, s := range sets {
		for i, op := range s.Patch {
			if err := apply(doc, op); err != nil {
				return fmt.Errorf("%s: patch %q, operation %d (%s %s): %w", path, s.Why, i, op.Op, op.Path, err)
			}
		}
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte("---\n"), out...), 0o644)
}

// decode reads YAML as JSON values (numbers kept exact, as controller-gen
// keeps them).
func decode(b []byte) (any, error) {
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// apply applies op to doc, in place. Unlike RFC 6902's, add refuses a
// member that exists: controller-gen writes it now, and the patch must be
// looked at again.
func apply(doc any, op operation) error {
	tokens, err := pointer(op.Path)
	if err != nil {
		return err
	}
	var value any
	switch op.Op {
	case "add", "replace", "test":
		if op.Value == nil {
			return errors.New("no value")
		}
		if value, err = decode(op.Value); err != nil {
			return err
		}
	case "remove":
	default:
		return fmt.Errorf("unknown op %q (want add, remove, replace or test)", op.Op)
	}
	if len(tokens) == 0 {
		return errors.New("the path names the whole document")
	}
	parent, err := lookup(doc, tokens[:len(tokens)-1])
	if err != nil {
		return err
	}
	p, ok := parent.(map[string]any)
	if !ok {
		// Lists are only walked through (/spec/versions/0/…): an
		// operation on a list item would shift with controller-gen's order.
		return fmt.Errorf("/%s is not an object", strings.Join(tokens[:len(tokens)-1], "/"))
	}
	last := tokens[len(tokens)-1]
	old, exists := p[last]
	switch {
	case op.Op == "add" && exists:
		return fmt.Errorf("%q exists already (%s)", last, show(old))
	case op.Op == "add":
		p[last] = value
	case !exists:
		return fmt.Errorf("no %q", last)
	case op.Op == "remove":
		delete(p, last)
	case op.Op == "replace":
		p[last] = value
	case op.Op == "test" && !equal(old, value):
		return fmt.Errorf("is %s, not %s", show(old), show(value))
	}
	return nil
}

// pointer splits a JSON pointer into its unescaped tokens.
func pointer(p string) ([]string, error) {
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("path %q does not start with /", p)
	}
	tokens := strings.Split(p[1:], "/")
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return tokens, nil
}

func lookup(v any, tokens []string) (any, error) {
	for n, t := range tokens {
		switch c := v.(type) {
		case map[string]any:
			next, ok := c[t]
			if !ok {
				return nil, fmt.Errorf("no %q at /%s", t, strings.Join(tokens[:n], "/"))
			}
			v = next
		case []any:
			i, err := index(t, len(c))
			if err != nil {
				return nil, fmt.Errorf("at /%s: %w", strings.Join(tokens[:n], "/"), err)
			}
			v = c[i]
		default:
			return nil, fmt.Errorf("/%s is neither an object nor a list", strings.Join(tokens[:n], "/"))
		}
	}
	return v, nil
}

// index is a list index token, 0 to n-1.
func index(t string, n int) (int, error) {
	i, err := strconv.Atoi(t)
	if err != nil || i < 0 || i >= n || strconv.Itoa(i) != t {
		return 0, fmt.Errorf("no index %q in a list of %d", t, n)
	}
	return i, nil
}

func equal(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return reflect.DeepEqual(a, b)
	}
	return bytes.Equal(ja, jb)
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
