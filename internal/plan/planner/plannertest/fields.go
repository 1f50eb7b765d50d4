package plannertest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// owner is one entry of a live object's managedFields: a field manager,
// how it wrote (Apply for server-side apply, Update for the rest) and the
// leaves it owns by path (fieldsOf).
type owner struct {
	manager string
	op      metav1.ManagedFieldsOperationType
	fields  map[string]any
}

// forced are owners after manager took the leaves of fields from every
// other manager (a forced apply, or an update changing them), manager's
// entry first with fields added to those it owned (all it owns, replaced,
// when replace: an apply's set is the whole of what it applies).
func forced(owners []owner, manager string, op metav1.ManagedFieldsOperationType, fields map[string]any, replace bool) []owner {
	mine := owner{manager: manager, op: op, fields: map[string]any{}}
	var rest []owner
	for _, o := range owners {
		if o.manager == manager && o.op == op {
			if !replace {
				maps.Copy(mine.fields, o.fields)
			}
			continue
		}
		kept := maps.Clone(o.fields)
		for path := range fields {
			delete(kept, path)
		}
		if len(kept) > 0 {
			rest = append(rest, owner{manager: o.manager, op: o.op, fields: kept})
		}
	}
	maps.Copy(mine.fields, fields)
	return append([]owner{mine}, rest...)
}

// without are owners without the leaves of paths (removed from the
// object).
func without(owners []owner, paths []string) []owner {
	var out []owner
	for _, o := range owners {
		kept := maps.Clone(o.fields)
		for _, p := range paths {
			delete(kept, p)
		}
		if len(kept) > 0 {
			out = append(out, owner{manager: o.manager, op: o.op, fields: kept})
		}
	}
	return out
}

// write stores u as live, with a new resourceVersion (and uid when it is
// new) and the managedFields of owners.
func (v *View) write(ctx context.Context, u *unstructured.Unstructured, owners []owner) (*unstructured.Unstructured, error) {
	ref := kube.RefOf(u)
	res, err := v.resource(ref)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	v.serial++
	serial := v.serial
	v.owners[ref] = owners
	v.mu.Unlock()
	u = u.DeepCopy()
	u.SetResourceVersion(strconv.Itoa(serial))
	var mf []metav1.ManagedFieldsEntry
	for _, o := range owners {
		mf = append(mf, managedEntry(o, u.GetAPIVersion()))
	}
	u.SetManagedFields(mf)
	existing, err := res.Get(ctx, u.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		u.SetUID(types.UID(fmt.Sprintf("uid-%d", serial)))
		return res.Create(ctx, u, metav1.CreateOptions{})
	case err != nil:
		return nil, err
	}
	u.SetUID(existing.GetUID())
	return res.Update(ctx, u, metav1.UpdateOptions{})
}

// ownersOf are the owners of a live object.
func (v *View) ownersOf(ref kube.Ref) []owner {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.owners[ref]
}

// managedEntry is the managedFields entry of o: its leaves as a FieldsV1
// set ({"f:spec":{"f:replicas":{}}}), as the API server writes it.
func managedEntry(o owner, apiVersion string) metav1.ManagedFieldsEntry {
	set := map[string]any{}
	for path := range o.fields {
		m := set
		for _, key := range splitPath(path) {
			sub, ok := m["f:"+key].(map[string]any)
			if !ok {
				sub = map[string]any{}
				m["f:"+key] = sub
			}
			m = sub
		}
	}
	raw, _ := json.Marshal(set) // sorted keys: the same fields, the same bytes
	return metav1.ManagedFieldsEntry{Manager: o.manager, Operation: o.op, APIVersion: apiVersion, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}}
}

// pathEscaper escapes a key as a JSON pointer's token.
var pathEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// pathUnescaper reverses pathEscaper.
var pathUnescaper = strings.NewReplacer("~1", "/", "~0", "~")

// splitPath is the keys of a path of fieldsOf.
func splitPath(path string) []string {
	keys := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i, k := range keys {
		keys[i] = pathUnescaper.Replace(k)
	}
	return keys
}

// fieldsOf are the leaves of an object's content by path (a JSON pointer),
// without the identity and bookkeeping fields. Lists are leaves.
func fieldsOf(obj map[string]any) map[string]any {
	out := map[string]any{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, val := range m {
			path := prefix + "/" + pathEscaper.Replace(k)
			switch path {
			case "/apiVersion", "/kind", "/status", "/metadata/name", "/metadata/namespace", "/metadata/uid", "/metadata/resourceVersion",
				"/metadata/managedFields", "/metadata/creationTimestamp", "/metadata/generation":
				continue
			}
			if sub, ok := val.(map[string]any); ok && len(sub) > 0 {
				walk(path, sub)
				continue
			}
			out[path] = val
		}
	}
	walk("", obj)
	return out
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
