package kube

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"slices"
	"time"
	"unsafe"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// AppliedState identifies what the client's field manager owns of objects
// as the cluster holds them: per object its identity, uid and the field
// set of the manager's apply entry. Changing a field the manager set moves
// it to another manager (an update takes the fields it changes; an apply
// that changes them must force), deleting and recreating an object changes
// its uid, and status writes and other managers' fields leave it as it is.
// So the state taken right after an apply, compared with the state now,
// says whether anyone touched what that apply set. A nil object (absent)
// counts as such. The result is 40 hex digits, fit for a label value.
func (c *Client) AppliedState(refs []Ref, objs []*unstructured.Unstructured) string {
	applied := make([]*Applied, len(objs))
	for i, o := range objs {
		if o != nil {
			applied[i] = AppliedOf(c.fieldManager, o)
		}
	}
	return AppliedStateOf(refs, applied)
}

// Applied is what AppliedState reads of one live object, all of it in the
// object's metadata: a plan proves objects unchanged from lists of
// metadata alone (ListApplied).
type Applied struct {
	UID, ResourceVersion string
	// Generation is metadata.generation: what a CRD's spec was replaced
	// to (release.CRDsAnnotation), not part of the applied state.
	Generation int64
	// Fields are the field sets of the manager's apply entries on the main
	// resource, each after its apiVersion.
	Fields string
}

// AppliedOf is what fieldManager applied of o, as AppliedState reads it.
func AppliedOf(fieldManager string, o metav1.Object) *Applied {
	a := &Applied{UID: string(o.GetUID()), ResourceVersion: o.GetResourceVersion(), Generation: o.GetGeneration()}
	u, decoded := o.(*unstructured.Unstructured)
	if decoded {
		if fields, ok := appliedFieldsOf(fieldManager, u); ok {
			a.Fields = fields
			return a
		}
	}
	for _, mf := range o.GetManagedFields() {
		if mf.Manager == fieldManager && mf.Operation == metav1.ManagedFieldsOperationApply && mf.Subresource == "" && mf.FieldsV1 != nil {
			raw := mf.FieldsV1.Raw
			if decoded {
				raw = serverFieldsOrder(raw)
			}
			a.Fields += mf.APIVersion + "\x00" + string(raw)
		}
	}
	return a
}

// appliedFieldsOf is AppliedOf's Fields of a decoded object, read from
// its managedFields as they are: GetManagedFields converts every entry
// (the controllers' too) through JSON, most of what AppliedOf cost in a
// full refresh. The field sets are encoding/json's of the entries' maps,
// as GetManagedFields makes them. Not ok, for GetManagedFields to judge,
// when an entry is not as the API server writes it.
func appliedFieldsOf(fieldManager string, u *unstructured.Unstructured) (string, bool) {
	md, _ := u.Object["metadata"].(map[string]any)
	v, found := md["managedFields"]
	if !found {
		return "", true
	}
	items, ok := v.([]any)
	if !ok {
		return "", false
	}
	var fields string
	for _, item := range items {
		m, ok := item.(map[string]any)
		if !ok || !plainEntry(m) {
			return "", false
		}
		fv := m["fieldsV1"]
		if m["manager"] != fieldManager || m["operation"] != string(metav1.ManagedFieldsOperationApply) || (m["subresource"] != nil && m["subresource"] != "") || fv == nil {
			continue
		}
		raw, err := json.Marshal(fv)
		if err != nil {
			return "", false
		}
		apiVersion, _ := m["apiVersion"].(string)
		fields += apiVersion + "\x00" + string(serverFieldsOrder(raw))
	}
	return fields, true
}

// plainEntry reports whether m, a managedFields entry, holds only what
// metav1.ManagedFieldsEntry does, of the types the API server writes.
func plainEntry(m map[string]any) bool {
	for k, v := range m {
		if v == nil {
			continue
		}
		switch k {
		case "manager", "operation", "apiVersion", "fieldsType", "subresource":
			if _, ok := v.(string); !ok {
				return false
			}
		case "time":
			s, ok := v.(string)
			if !ok {
				return false
			}
			if _, err := time.Parse(time.RFC3339, s); err != nil {
				return false
			}
		case "fieldsV1":
			if _, ok := v.(map[string]any); !ok {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// serverFieldsOrder is a field set in the order the API server writes it.
// An object decoded into a map (an apply's response, a list read whole)
// gives its field sets back re-encoded with their keys sorted as strings,
// where the server orders them by value: a Service's ports
// `k:{"port":80,…}` before `k:{"port":443,…}`, and sorted as strings 443
// comes first. A metadata list keeps the server's bytes. So that the state
// an apply records equals the state a plan reads from metadata (or
// traefik's and ingress-nginx's Services and Deployments, whose ports are
// 80 and 443, never prove unchanged), the set is parsed and written again
// as the server writes it (structured-merge-diff, which the server uses),
// unless it is in that order already (inServerOrder: most are).
func serverFieldsOrder(raw []byte) []byte {
	if inServerOrder(raw) {
		return raw
	}
	return rewriteFieldsOrder(raw)
}

// rewriteFieldsOrder is raw parsed and written again as the server writes
// it (raw itself when it does not parse).
func rewriteFieldsOrder(raw []byte) []byte {
	var set fieldpath.Set
	if err := set.FromJSON(bytes.NewReader(raw)); err != nil {
		return raw
	}
	out, err := set.ToJSON()
	if err != nil {
		return raw
	}
	return out
}

// AppliedStateOf is AppliedState of objects read as Applied (nil: absent).
func AppliedStateOf(refs []Ref, objs []*Applied) string {
	type entry struct {
		id, uid, fields string
	}
	entries := make([]entry, len(refs))
	for i, ref := range refs {
		e := entry{id: ref.Group + "/" + ref.Kind + "/" + ref.Namespace + "/" + ref.Name, uid: "absent"}
		if o := objs[i]; o != nil {
			e.uid, e.fields = o.UID, o.Fields
		}
		entries[i] = e
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.id, b.id) })
	h := sha256.New()
	for _, e := range entries {
		// The field sets are large: written as they are, not copied into
		// a concatenated string (most of what this allocated).
		writeString(h, e.id)
		h.Write([]byte{0})
		writeString(h, e.uid)
		h.Write([]byte{0})
		writeString(h, e.fields)
		h.Write([]byte{1})
	}
	return hex.EncodeToString(h.Sum(nil))[:40]
}

// DefaultListPageSize is how many objects ListApplied asks for per
// request: a page is decoded and reduced to what AppliedState needs before
// the next is read.
const DefaultListPageSize = 500

// ListApplied lists the objects of a kind in a namespace ("" for all, or a
// cluster-scoped kind) as metadata only (the metadata client, protobuf),
// page by page, keeping of each what the client's manager applied
// (Applied), by name. It reads no spec, no status and no other manager's
// fields beyond the page being decoded.
func (c *Client) ListApplied(ctx context.Context, apiVersion, kind, namespace string, opts metav1.ListOptions) (map[string]*Applied, error) {
	gvr, namespace, err := c.listTarget(apiVersion, kind, namespace)
	if err != nil {
		return nil, err
	}
	opts.Limit = c.listPageSize
	if m, ok := c.metadata.(*metadataLists); ok {
		var out map[string]*Applied
		for {
			cont, items, err := m.listApplied(ctx, gvr, namespace, opts, c.fieldManager, &out)
			if err != nil {
				return nil, Forbidden(err)
			}
			if cont == "" {
				return out, nil
			}
			if items == 0 {
				return nil, fmt.Errorf("list %s %s: an empty page with a continue token", apiVersion, kind)
			}
			opts.Continue = cont
		}
	}
	res := c.metadata.Resource(gvr).Namespace(namespace)
	out := map[string]*Applied{}
	for {
		l, err := res.List(ctx, opts)
		if err != nil {
			return nil, Forbidden(err)
		}
		for i := range l.Items {
			out[l.Items[i].Name] = AppliedOf(c.fieldManager, &l.Items[i])
		}
		if l.Continue == "" {
			return out, nil
		}
		if len(l.Items) == 0 {
			return nil, fmt.Errorf("list %s %s: an empty page with a continue token", apiVersion, kind)
		}
		opts.Continue = l.Continue
	}
}

// ListAppliedPage is ListApplied of one page at most: complete is false
// when the kind has more objects in the namespace than a page holds, and
// an object missing from the map may then exist. One request, whatever
// the namespace holds.
func (c *Client) ListAppliedPage(ctx context.Context, apiVersion, kind, namespace string) (applied map[string]*Applied, complete bool, err error) {
	gvr, namespace, err := c.listTarget(apiVersion, kind, namespace)
	if err != nil {
		return nil, false, err
	}
	if m, ok := c.metadata.(*metadataLists); ok {
		var out map[string]*Applied
		cont, _, err := m.listApplied(ctx, gvr, namespace, metav1.ListOptions{Limit: c.listPageSize}, c.fieldManager, &out)
		if err != nil {
			return nil, false, err
		}
		return out, cont == "", nil
	}
	l, err := c.metadata.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{Limit: c.listPageSize})
	if err != nil {
		return nil, false, err
	}
	out := make(map[string]*Applied, len(l.Items))
	for i := range l.Items {
		out[l.Items[i].Name] = AppliedOf(c.fieldManager, &l.Items[i])
	}
	return out, l.Continue == "", nil
}

// AnyExists reports whether the cluster holds any object of resource gvr
// (cluster-wide), reading at most one object's metadata. A resource the
// API server does not serve has none; no discovery is needed for that.
func (c *Client) AnyExists(ctx context.Context, gvr schema.GroupVersionResource) (bool, error) {
	l, err := c.metadata.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return len(l.Items) > 0, nil
}

// AdmissionGroups reads the admission webhooks or policies of gvr (a
// {Mutating,Validating}WebhookConfiguration or {Mutating,Validating}
// AdmissionPolicy resource) and returns the API groups their rules match;
// all is true when a rule matches every group ("*"), or a configuration
// has no rules it can read. A resource the server does not serve has none.
func (c *Client) AdmissionGroups(ctx context.Context, gvr schema.GroupVersionResource) (groups []string, all bool, err error) {
	l, err := c.dynamic.Resource(gvr).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	groups, all = admissionGroupsOf(l.Items)
	return groups, all, nil
}

// admissionGroupsOf is AdmissionGroups of the configurations read.
func admissionGroupsOf(items []unstructured.Unstructured) (groups []string, all bool) {
	seen := map[string]bool{}
	add := func(rules []any) bool {
		if len(rules) == 0 {
			return false
		}
		for _, r := range rules {
			rm, _ := r.(map[string]any)
			gs, _ := rm["apiGroups"].([]any)
			if len(gs) == 0 {
				return false
			}
			for _, g := range gs {
				s, _ := g.(string)
				if s == "*" {
					return false
				}
				seen[s] = true
			}
		}
		return true
	}
	for _, item := range items {
		obj := item.Object
		if hooks, ok := obj["webhooks"].([]any); ok {
			for _, h := range hooks {
				hm, _ := h.(map[string]any)
				rules, _ := hm["rules"].([]any)
				if !add(rules) {
					return nil, true
				}
			}
			continue
		}
		rules, _, _ := unstructured.NestedSlice(obj, "spec", "matchConstraints", "resourceRules")
		if !add(rules) {
			return nil, true
		}
	}
	if seen["extensions"] {
		// matchPolicy Equivalent (the default) matches the same resource
		// in the groups that took over extensions' kinds.
		seen["apps"], seen["networking.k8s.io"], seen["policy"] = true, true, true
	}
	for g := range seen {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	return groups, false
}

// writeString writes s to h without copying it: a hash reads what it is
// given and keeps none of it.
func writeString(h hash.Hash, s string) {
	h.Write(unsafe.Slice(unsafe.StringData(s), len(s)))
}
