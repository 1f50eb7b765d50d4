package kube

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// The dynamic client's lists read as client-go's: the same request (path
// and query), the same list, or the same error, over HTTP from a server
// answering what an API server could.
func TestDynamicListsAsClientGo(t *testing.T) {
	bodies := map[string]struct {
		status int
		body   string
	}{
		// A built-in kind's list: items without kind or apiVersion.
		"configmaps": {200, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"42","continue":"next"},
			"items":[{"metadata":{"name":"a","namespace":"ns","labels":{"x":"y"}},"data":{"k":"v\u00e9\n"}},
			{"metadata":{"name":"b","namespace":"ns"},"binaryData":null}]}`},
		// A custom resource's: items with their own, numbers of every shape.
		"widgets": {200, `{"kind":"WidgetList","apiVersion":"example.com/v1","metadata":{},
			"items":[{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},
			"spec":{"int":3,"neg":-7,"float":1.5,"whole":2.0,"exp":1e3,"big":9223372036854775807,"huge":18446744073709551616,
			"list":[1,"two",true,null,{"n":{}}],"empty":[],"obj":{}}},
			{"kind":"Other","metadata":{"name":"kind-only"}}]}`},
		"empty":     {200, `{"kind":"SecretList","apiVersion":"v1","metadata":{},"items":[]}`},
		"nullitems": {200, `{"kind":"SecretList","apiVersion":"v1","metadata":{},"items":null}`},
		"noitems":   {200, `{"kind":"SecretList","apiVersion":"v1","metadata":{}}`},
		"nokind":    {200, `{"apiVersion":"v1","metadata":{},"items":[]}`},
		"notalist":  {200, `{"kind":"SecretList","apiVersion":"v1","items":{"a":1}}`},
		"badjson":   {200, `{"kind":"SecretList","apiVersion":"v1","items":[}`},
		"forbidden": {403, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"secrets is forbidden: User \"u\" cannot list","reason":"Forbidden","details":{"kind":"secrets"},"code":403}`},
	}
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.RequestURI())
		resource := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
		b, ok := bodies[resource]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(b.status)
		_, _ = w.Write([]byte(b.body))
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL, QPS: -1}
	theirs, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := newDynamicForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	opts := metav1.ListOptions{LabelSelector: "a=b", FieldSelector: "type!=helm.sh/release.v1", Limit: 500, Continue: "c", ResourceVersion: "0"}
	for resource := range bodies {
		for _, gvr := range []schema.GroupVersionResource{{Version: "v1", Resource: resource}, {Group: "example.com", Version: "v1", Resource: resource}} {
			for _, ns := range []string{"ns", ""} {
				paths = nil
				var want, got *unstructured.UnstructuredList
				var wantErr, gotErr error
				if ns == "" {
					want, wantErr = theirs.Resource(gvr).List(ctx, opts)
					got, gotErr = ours.Resource(gvr).List(ctx, opts)
				} else {
					want, wantErr = theirs.Resource(gvr).Namespace(ns).List(ctx, opts)
					got, gotErr = ours.Resource(gvr).Namespace(ns).List(ctx, opts)
				}
				if len(paths) != 2 || paths[0] != paths[1] {
					t.Fatalf("%s in %q: requests %q", gvr, ns, paths)
				}
				if (gotErr == nil) != (wantErr == nil) {
					t.Fatalf("%s in %q: err %v, client-go's %v", gvr, ns, gotErr, wantErr)
				}
				if wantErr != nil {
					if apierrors.ReasonForError(gotErr) != apierrors.ReasonForError(wantErr) {
						t.Fatalf("%s in %q: err %v (%s), client-go's %v (%s)", gvr, ns, gotErr, apierrors.ReasonForError(gotErr), wantErr, apierrors.ReasonForError(wantErr))
					}
					continue
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s in %q:\n got %#v\nwant %#v", gvr, ns, got, want)
				}
			}
		}
	}
	// A status error keeps what callers test for.
	_, err = ours.Resource(schema.GroupVersionResource{Version: "v1", Resource: "forbidden"}).Namespace("ns").List(ctx, opts)
	var status apierrors.APIStatus
	if !apierrors.IsForbidden(err) || !errors.As(err, &status) {
		t.Fatalf("forbidden: %v, want a Forbidden status error", err)
	}
}

// FuzzUnstructuredListOf: no panic, and whenever client-go's scheme
// decodes a list, unstructuredListOf decodes the same (or refuses an item
// that is not an object, which client-go reads as an empty one when null).
func FuzzUnstructuredListOf(f *testing.F) {
	for _, s := range []string{
		`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"a"}}]}`,
		`{"kind":"XList","items":[{"kind":"Y"},{"apiVersion":"v2"},{}]}`,
		`{"kind":"List","apiVersion":"v1","items":[null]}`,
		`{"kind":"List","items":null,"n":1.0}`,
		`{"kind":1,"items":[]}`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := unstructuredListOf(data)
		var want unstructured.UnstructuredList
		_, _, wantErr := unstructured.UnstructuredJSONScheme.Decode(data, nil, &want)
		if wantErr != nil {
			if err == nil {
				t.Fatalf("%q: decoded, client-go's scheme refuses it: %v", data, wantErr)
			}
			return
		}
		if err != nil {
			if strings.Contains(err.Error(), "is not an object") {
				return
			}
			t.Fatalf("%q: %v, client-go's scheme decodes it", data, err)
		}
		if !reflect.DeepEqual(*got, want) {
			t.Fatalf("%q:\n got %#v\nwant %#v", data, *got, want)
		}
	})
}
