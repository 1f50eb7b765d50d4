package release

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ObjectsAnnotation lists, on the records convoy writes, the identity and
// template of each object of the revision, in the order of its manifest
// (what RecordObjects parses from it): a plan proves a release unchanged
// from the record's metadata and the live objects' metadata, without
// parsing the manifest (docs/performance.md). Helm ignores it. A record
// without it (written by helm or an older convoy) is read as before.
const ObjectsAnnotation = "convoy.dev/objects"

// objectsGzipPrefix marks an ObjectsAnnotation value compressed because
// its JSON was longer than objectsGzipOver.
const (
	objectsGzipPrefix = "gzip:"
	objectsGzipOver   = 1024
)

// RecordObject is an object of a revision as ObjectsAnnotation lists it.
type RecordObject struct {
	Ref kube.Ref
	// Template is the chart template that rendered it.
	Template string
}

// setRecordObjects annotates rel with its objects (ObjectsAnnotation); a
// revision whose manifest does not parse (kinds not served) goes without.
func (e *Engine) setRecordObjects(rel *Release) {
	objs, paths, err := e.RecordObjects(rel)
	if err != nil {
		return
	}
	list := make([]RecordObject, len(objs))
	for i, o := range objs {
		list[i] = RecordObject{Ref: kube.RefOf(o), Template: paths[i]}
	}
	annotateRecordObjects(rel, list)
}

// setRecordObjectsBuilt is setRecordObjects of a revision whose objects
// were built from its rendering (objs, in its manifest's order, src their
// templates), without parsing its manifest again: a large release's
// objects are not held twice while its record is written. A rendering
// with two objects of one identity (src names one template for both)
// is parsed as setRecordObjects does.
func (e *Engine) setRecordObjectsBuilt(rel *Release, objs []*unstructured.Unstructured, src sources) {
	list := make([]RecordObject, len(objs))
	seen := make(map[identity]bool, len(objs))
	for i, o := range objs {
		ref := kube.RefOf(o)
		path, ok := src[idOf(ref)]
		if !ok || seen[idOf(ref)] {
			e.setRecordObjects(rel)
			return
		}
		seen[idOf(ref)] = true
		list[i] = RecordObject{Ref: ref, Template: path}
	}
	annotateRecordObjects(rel, list)
}

// annotateRecordObjects sets rel's ObjectsAnnotation to list; one that
// does not encode leaves rel without it.
func annotateRecordObjects(rel *Release, list []RecordObject) {
	v, err := encodeRecordObjects(list)
	if err != nil {
		return
	}
	if rel.Annotations == nil {
		rel.Annotations = map[string]string{}
	}
	rel.Annotations[ObjectsAnnotation] = v
}

// encodeRecordObjects is the ObjectsAnnotation value of objs: a JSON array
// of [template, apiVersion, kind, namespace, name], gzipped and base64
// encoded when long.
func encodeRecordObjects(objs []RecordObject) (string, error) {
	rows := make([][5]string, len(objs))
	for i, o := range objs {
		rows[i] = [5]string{o.Template, o.Ref.APIVersion(), o.Ref.Kind, o.Ref.Namespace, o.Ref.Name}
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return "", err
	}
	if len(b) <= objectsGzipOver {
		return string(b), nil
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return objectsGzipPrefix + base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// RecordObjectsOf reads rec's ObjectsAnnotation; false when it has none
// or it does not decode (RecordObjects then parses the manifest).
func RecordObjectsOf(rec *Release) ([]RecordObject, bool) {
	v, ok := rec.Annotations[ObjectsAnnotation]
	if !ok {
		return nil, false
	}
	if m := rec.objects; m != nil {
		m.once.Do(func() {
			m.src = v
			m.objs, m.err = decodeRecordObjects(v)
		})
		if m.src == v {
			if m.err != nil {
				return nil, false
			}
			return slices.Clone(m.objs), true
		}
	}
	objs, err := decodeRecordObjects(v)
	if err != nil {
		return nil, false
	}
	return objs, true
}

// recordObjectsMemo keeps a record's ObjectsAnnotation decoded: a plan
// reads it several times per release (the lists it prefetches, the
// release's proof, its outputs). Records read from metadata have one;
// it answers only for the annotation it decoded.
type recordObjectsMemo struct {
	once sync.Once
	src  string
	objs []RecordObject
	err  error
}

func decodeRecordObjects(v string) ([]RecordObject, error) {
	if rest, ok := strings.CutPrefix(v, objectsGzipPrefix); ok {
		z, err := base64.StdEncoding.DecodeString(rest)
		if err != nil {
			return nil, err
		}
		zr, err := gzip.NewReader(bytes.NewReader(z))
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(io.LimitReader(zr, 4<<20))
		if err != nil {
			return nil, err
		}
		v = string(b)
	}
	rows, ok := plainRows(v)
	if !ok {
		if err := json.Unmarshal([]byte(v), &rows); err != nil {
			return nil, err
		}
	}
	out := make([]RecordObject, len(rows))
	for i, r := range rows {
		ref, err := refOf(r[1], r[2], r[3], r[4])
		if err != nil {
			return nil, err
		}
		out[i] = RecordObject{Ref: ref, Template: r[0]}
	}
	return out, nil
}

// plainRows reads the JSON of an ObjectsAnnotation, an array of arrays of
// five strings, as encoding/json does, when its strings are plain (no
// escapes, valid UTF-8, as identities and template paths are): the rows'
// strings are v's own, without a copy each. ok is false for anything
// else, which encoding/json then reads (or refuses).
func plainRows(v string) (rows [][5]string, ok bool) {
	i := 0
	space := func() {
		for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r') {
			i++
		}
	}
	next := func(c byte) bool {
		space()
		if i < len(v) && v[i] == c {
			i++
			return true
		}
		return false
	}
	str := func() (string, bool) {
		if !next('"') {
			return "", false
		}
		start := i
		ascii := true
		for i < len(v) && v[i] != '"' {
			c := v[i]
			if c == '\\' || c < 0x20 {
				return "", false
			}
			if c >= utf8.RuneSelf {
				ascii = false
			}
			i++
		}
		if i == len(v) {
			return "", false
		}
		s := v[start:i]
		i++
		if !ascii && !utf8.ValidString(s) {
			return "", false
		}
		return s, true
	}
	if !next('[') {
		return nil, false
	}
	rows = make([][5]string, 0, strings.Count(v, "]")) // an upper bound
	if !next(']') {
		for {
			if !next('[') {
				return nil, false
			}
			var row [5]string
			for k := range row {
				if k > 0 && !next(',') {
					return nil, false
				}
				var ok bool
				if row[k], ok = str(); !ok {
					return nil, false
				}
			}
			if !next(']') {
				return nil, false
			}
			rows = append(rows, row)
			if next(']') {
				break
			}
			if !next(',') {
				return nil, false
			}
		}
	}
	space()
	return rows, i == len(v)
}

func refOf(apiVersion, kind, namespace, name string) (kube.Ref, error) {
	if apiVersion == "" || kind == "" || name == "" {
		return kube.Ref{}, errors.New("an object without apiVersion, kind or name")
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return kube.Ref{}, err
	}
	return kube.Ref{Group: gv.Group, Version: gv.Version, Kind: kind, Namespace: namespace, Name: name}, nil
}
