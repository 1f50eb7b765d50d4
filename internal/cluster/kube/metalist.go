package kube

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// NewMetadataForConfig is client-go's metadata client whose lists read
// the response into a buffer reused across lists. client-go reads a
// response with io.ReadAll, which starts at 512 bytes and grows by
// copying: a no-change plan of 1,000 releases (200 metadata lists, 6.6
// MB) spent a tenth of its CPU there, most of it clearing and copying
// the grown slices. Everything but List is client-go's, and both share
// cfg's rate limiter (one bucket, as one client has).
func NewMetadataForConfig(cfg *rest.Config) (metadata.Interface, error) {
	cfg = oneBucket(cfg)
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	// As metadata.NewForConfig builds its REST client.
	rc := metadata.ConfigFor(cfg)
	rc.GroupVersion = &schema.GroupVersion{}
	rc.APIPath = "/this-value-should-never-be-sent"
	lists, err := rest.RESTClientFor(rc)
	if err != nil {
		return nil, err
	}
	return &metadataLists{Interface: md, rest: lists}, nil
}

// oneBucket is a copy of cfg whose rate limiter is one bucket, for every
// client built from it: cfg's own, else a token bucket at its QPS and
// burst (each client would make one of its own).
func oneBucket(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	return cfg
}

type metadataLists struct {
	metadata.Interface
	rest *rest.RESTClient
}

func (m *metadataLists) Resource(gvr schema.GroupVersionResource) metadata.Getter {
	return &metadataResource{Getter: m.Interface.Resource(gvr), m: m, gvr: gvr}
}

// metadataResource is a resource cluster-wide; Namespace gives it in one
// namespace.
type metadataResource struct {
	metadata.Getter
	m   *metadataLists
	gvr schema.GroupVersionResource
}

func (r *metadataResource) Namespace(ns string) metadata.ResourceInterface {
	return &metadataNamespaced{ResourceInterface: r.Getter.Namespace(ns), r: r, namespace: ns}
}

func (r *metadataResource) List(ctx context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	return r.m.list(ctx, r.gvr, "", opts, r.Getter)
}

type metadataNamespaced struct {
	metadata.ResourceInterface
	r         *metadataResource
	namespace string
}

func (n *metadataNamespaced) List(ctx context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	return n.r.m.list(ctx, n.r.gvr, n.namespace, opts, n.ResourceInterface)
}

// listBuffers hold list responses while they are decoded; decoding copies
// what it keeps, so a buffer is reused as soon as its list is decoded.
var listBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// listBufferSize is what a buffer starts with: most lists of a namespace
// (30 KB on average in a plan of 1,000 releases) fit.
const listBufferSize = 64 << 10

// maxPooledListBuffer: a buffer grown past it (a list of a few thousand
// objects) is left to the collector rather than kept.
const maxPooledListBuffer = 8 << 20

// listParams encodes ListOptions as query parameters, as client-go's
// metadata client does (meta/v1's types in an unnamed group's v1).
var listParams = func() runtime.ParameterCodec {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return runtime.NewParameterCodec(s)
}()

// metadataListAccept is what client-go's metadata client asks for.
const metadataListAccept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1," +
	"application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"

// list is client-go's metadata List (same request, same decoding of
// protobuf or JSON), reading the body into a pooled buffer. A response
// that does not decode as a PartialObjectMetadataList (a server that
// ignored the Accept header's as=) is listed again by client-go, whose
// fallbacks handle it.
func (m *metadataLists) list(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions, fallback metadata.ResourceInterface) (*metav1.PartialObjectMetadataList, error) {
	list := &metav1.PartialObjectMetadataList{}
	var decoded bool
	err := m.read(ctx, gvr, namespace, opts, func(data []byte) (err error) {
		decoded, err = decodeList(gvr, data, list)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !decoded {
		return fallback.List(ctx, opts)
	}
	return list, nil
}

// listApplied adds to *into (made for the page when nil) what
// fieldManager applied of each object of one page of a list (ListApplied),
// and returns the page's continue token and how many objects it held. A
// protobuf response is read for the fields Applied keeps alone: an
// object's labels, annotations and other managers' field sets (most of a
// list's bytes) are skipped, not decoded. Anything else is decoded as
// list does.
func (m *metadataLists) listApplied(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions, fieldManager string, into *map[string]*Applied) (cont string, items int, err error) {
	var list *metav1.PartialObjectMetadataList
	undecoded := false
	err = m.read(ctx, gvr, namespace, opts, func(data []byte) error {
		if raw, ok := protobufListOf(data); ok {
			if *into == nil {
				*into = make(map[string]*Applied, max(countItems(raw), 0))
			}
			var err error
			if cont, items, err = appliedOfList(raw, fieldManager, *into); err != nil {
				return fmt.Errorf("decode the list of %s: %w", gvr.String(), err)
			}
			return nil
		}
		list = &metav1.PartialObjectMetadataList{}
		decoded, err := decodeList(gvr, data, list)
		undecoded = !decoded
		return err
	})
	if err != nil {
		return "", 0, err
	}
	if undecoded {
		// Not a list of metadata: client-go's fallbacks handle it.
		if list, err = m.Resource(gvr).Namespace(namespace).List(ctx, opts); err != nil {
			return "", 0, err
		}
	}
	if list != nil {
		if *into == nil {
			*into = make(map[string]*Applied, len(list.Items))
		}
		for i := range list.Items {
			(*into)[list.Items[i].Name] = AppliedOf(fieldManager, &list.Items[i])
		}
		cont, items = list.Continue, len(list.Items)
	}
	return cont, items, nil
}

// read gets a list's response into a pooled buffer and gives it to decode,
// which must copy what it keeps: the buffer is reused once decode returns.
func (m *metadataLists) read(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions, decode func([]byte) error) error {
	body, err := m.rest.Get().AbsPath(metadataPath(gvr, namespace)...).
		SetHeader("Accept", metadataListAccept).
		SpecificallyVersionedParams(&opts, listParams, schema.GroupVersion{Version: "v1"}).
		Stream(ctx)
	if err != nil {
		return err
	}
	buf := listBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledListBuffer {
			buf.Reset()
			listBuffers.Put(buf)
		}
	}()
	buf.Grow(listBufferSize) // pooled buffers come back reset
	_, err = buf.ReadFrom(body)
	body.Close()
	if err != nil {
		return err
	}
	return decode(buf.Bytes())
}

// decodeList decodes a list response, protobuf or JSON, into list;
// decoded is false for a response that is neither a
// PartialObjectMetadataList.
func decodeList(gvr schema.GroupVersionResource, data []byte, list *metav1.PartialObjectMetadataList) (decoded bool, err error) {
	if raw, ok := protobufListOf(data); ok {
		if err := list.Unmarshal(raw); err != nil {
			return false, fmt.Errorf("decode the list of %s: %w", gvr.String(), err)
		}
		return true, nil
	}
	obj, _, err := metainternalversionscheme.Codecs.UniversalDeserializer().Decode(data, nil, list)
	if err != nil || obj != runtime.Object(list) {
		return false, nil
	}
	list.TypeMeta = metav1.TypeMeta{}
	return true, nil
}

// protobufListOf finds, in a protobuf response (the "k8s\x00" magic, then
// a runtime.Unknown), the raw bytes of the PartialObjectMetadataList it
// wraps, so that the list is decoded from the buffer directly: the
// protobuf serializer first copies the whole payload into
// runtime.Unknown.Raw. ok is false for anything else (JSON, another
// kind, an encoding given), which the serializer then decodes.
func protobufListOf(data []byte) (raw []byte, ok bool) {
	data, ok = bytes.CutPrefix(data, []byte("k8s\x00"))
	if !ok {
		return nil, false
	}
	var typeMeta []byte
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return nil, false
		}
		data = data[n:]
		if typ != protowire.BytesType {
			return nil, false
		}
		v, n := protowire.ConsumeBytes(data)
		if n < 0 {
			return nil, false
		}
		data = data[n:]
		switch num {
		case 1: // typeMeta
			typeMeta = v
		case 2: // raw
			raw = v
		default: // contentEncoding, contentType: none expected
			if len(v) > 0 {
				return nil, false
			}
		}
	}
	var tm runtime.TypeMeta
	if raw == nil || tm.Unmarshal(typeMeta) != nil || tm.APIVersion != "meta.k8s.io/v1" || tm.Kind != "PartialObjectMetadataList" {
		return nil, false
	}
	return raw, true
}

// metadataPath is the collection's path, as client-go's metadata client
// makes it.
func metadataPath(gvr schema.GroupVersionResource, namespace string) []string {
	var path []string
	if gvr.Group == "" {
		path = append(path, "api")
	} else {
		path = append(path, "apis", gvr.Group)
	}
	path = append(path, gvr.Version)
	if namespace != "" {
		path = append(path, "namespaces", namespace)
	}
	return append(path, gvr.Resource)
}
