package kube

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// appliedOfList reads a protobuf PartialObjectMetadataList (meta/v1's
// generated.proto) for what AppliedOf keeps of each object: its name,
// uid, resourceVersion, generation and fieldManager's apply entries on
// the main resource. Each object's Applied goes into into under its name,
// as AppliedOf of the decoded object would give it; the list's continue
// token and how many objects it held are returned. Nothing else is decoded: labels,
// annotations, owners and the other managers' field sets, which are most
// of a list's bytes, are skipped. Repeated and merged fields follow the
// generated decoder (a later scalar wins, repeated entries add up).
func appliedOfList(data []byte, fieldManager string, into map[string]*Applied) (cont string, items int, err error) {
	var o objectApplied // reused from one object to the next
	err = eachField(data, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch num {
		case 1: // metadata (ListMeta)
			if typ != protowire.BytesType {
				return wrongType("ListMeta", num)
			}
			return eachField(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
				if num != 3 { // continue
					return nil
				}
				if typ != protowire.BytesType {
					return wrongType("continue", num)
				}
				cont = string(v)
				return nil
			})
		case 2: // items (PartialObjectMetadata)
			if typ != protowire.BytesType {
				return wrongType("items", num)
			}
			o.reset()
			if err := eachField(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
				if num != 1 { // metadata (ObjectMeta)
					return nil
				}
				if typ != protowire.BytesType {
					return wrongType("ObjectMeta", num)
				}
				return o.read(v, fieldManager)
			}); err != nil {
				return err
			}
			into[string(o.name)] = o.applied()
			items++
		}
		return nil
	})
	return cont, items, err
}

// countItems is how many objects a protobuf PartialObjectMetadataList
// holds (-1: malformed), read from its top level alone.
func countItems(data []byte) int {
	n := 0
	if eachField(data, func(num protowire.Number, typ protowire.Type, _ []byte, _ uint64) error {
		if num == 2 && typ == protowire.BytesType {
			n++
		}
		return nil
	}) != nil {
		return -1
	}
	return n
}

// objectApplied is what appliedOfList keeps of one object's ObjectMeta,
// pointing into the list's bytes until applied copies it.
type objectApplied struct {
	name, uid, resourceVersion []byte
	generation                 int64
	// fields are the manager's apply entries: apiVersion, field set, ...
	fields [][]byte
}

func (o *objectApplied) reset() {
	*o = objectApplied{fields: o.fields[:0]}
}

// applied is o as AppliedOf gives it, copied out of the list's bytes.
func (o *objectApplied) applied() *Applied {
	a := &Applied{UID: string(o.uid), ResourceVersion: string(o.resourceVersion), Generation: o.generation}
	if len(o.fields) > 0 {
		n := 0
		for i, f := range o.fields {
			n += len(f)
			if i%2 == 0 {
				n++ // the separator after the apiVersion
			}
		}
		var b strings.Builder
		b.Grow(n)
		for i, f := range o.fields {
			b.Write(f)
			if i%2 == 0 {
				b.WriteByte(0)
			}
		}
		a.Fields = b.String()
	}
	return a
}

// read reads an ObjectMeta (merging into o, as the generated decoder
// merges a message given twice).
func (o *objectApplied) read(data []byte, fieldManager string) error {
	return eachField(data, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		switch num {
		case 1, 5, 6: // name, uid, resourceVersion
			if typ != protowire.BytesType {
				return wrongType("ObjectMeta", num)
			}
			switch num {
			case 1:
				o.name = v
			case 5:
				o.uid = v
			default:
				o.resourceVersion = v
			}
		case 7: // generation
			if typ != protowire.VarintType {
				return wrongType("generation", num)
			}
			o.generation = int64(n)
		case 17: // managedFields
			if typ != protowire.BytesType {
				return wrongType("managedFields", num)
			}
			return o.entry(v, fieldManager)
		}
		return nil
	})
}

// entry reads a ManagedFieldsEntry, keeping its field set when it is
// fieldManager's apply on the main resource, as AppliedOf does.
func (o *objectApplied) entry(data []byte, fieldManager string) error {
	var manager, operation, apiVersion, subresource, raw []byte
	hasFields := false
	err := eachField(data, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch num {
		case 1, 2, 3, 7, 8:
		default:
			return nil
		}
		if typ != protowire.BytesType {
			return wrongType("ManagedFieldsEntry", num)
		}
		switch num {
		case 1:
			manager = v
		case 2:
			operation = v
		case 3:
			apiVersion = v
		case 8:
			subresource = v
		case 7: // fieldsV1 (FieldsV1)
			hasFields = true
			return eachField(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
				if num != 1 { // Raw
					return nil
				}
				if typ != protowire.BytesType {
					return wrongType("FieldsV1", num)
				}
				raw = v
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if hasFields && string(manager) == fieldManager && string(operation) == "Apply" && len(subresource) == 0 {
		o.fields = append(o.fields, apiVersion, raw)
	}
	return nil
}

// eachField calls f with each field of a protobuf message: its number,
// wire type, and its bytes (BytesType) or value (VarintType); fields of
// other types are skipped. Malformed input is an error, never a panic.
func eachField(data []byte, f func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error) error {
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return protowire.ParseError(n)
		}
		data = data[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(data)
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(data)
		default:
			n = protowire.ConsumeFieldValue(num, typ, data)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		data = data[n:]
		if typ != protowire.BytesType && typ != protowire.VarintType {
			continue
		}
		if err := f(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

var errWrongType = errors.New("wrong wire type")

func wrongType(message string, num protowire.Number) error {
	return fmt.Errorf("%s field %d: %w", message, num, errWrongType)
}
