package chart

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestMarshalYAMLAsSigs: toYaml's values, written as sigs.k8s.io/yaml
// writes them (Helm's toYaml) — the cases its JSON detour decides.
func TestMarshalYAMLAsSigs(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	for _, v := range []any{
		nil, true, "", "plain", "yes", "no", "on", "1.0", "0x10", "~", "null", "- x", "a: b", "#c", "\"q\"", "'s'",
		"multi\nline\n", "tab\there", "\x00nul", "\x7fdel", "\u0085nel", "\u0080c1", "\u00a0nbsp", "\u2028ls", "\ufeffbom", "\ufffd",
		"bad\xffutf8\xc3", "é ü 日本 🚀", "<&>", "---", "...", "  lead", "trail  ",
		0, -0.0, 1.0, 1.5, -2.25, 1e20, 1e21, 1e-6, 1e-7, 123456789.125, math.MaxInt64, uint64(math.MaxUint64), int8(-8), uint16(16),
		float64(math.MaxInt64), float64(1 << 63), float64(1 << 64), 3e19, math.NaN(), math.Inf(1), float32(1.1),
		map[string]any{}, []any{}, map[string]any(nil), []any(nil),
		map[string]any{"b": 1.0, "a": []any{"x", map[string]any{"n10": 1, "n9": 2, "N": true}}, "": nil, "1": "one", "true": false},
		map[string]any{"bad\xff": 1}, map[string]any{"k\x7f": 1}, cyclic,
		[]string{"typed"}, map[string]string{"typed": "map"}, struct{ A int }{1}, []byte("bytes"),
	} {
		want, wantErr := yaml.Marshal(v)
		got, err := marshalYAML(v)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Errorf("%#v:\n got %q, %v\nwant %q, %v", v, got, err, want, wantErr)
		}
	}
}

// FuzzMarshalYAMLAsSigs: values built from the fuzzer's bytes — maps,
// lists, strings of any bytes, numbers of any bits — are written as
// sigs.k8s.io/yaml writes them, or refused as it refuses them.
func FuzzMarshalYAMLAsSigs(f *testing.F) {
	f.Add([]byte("\x05\x02ab\x03\x01x\x04\x00\x00\x00\x00\x00\x00\xf0\x3f"))
	f.Add([]byte("\x06\x03\x05\x01\xff\x02\x02no\x07\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b := &valueBuilder{data: data}
		v := b.value(0)
		want, wantErr := yaml.Marshal(v)
		got, err := marshalYAML(v)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("%#v:\n got %q, %v\nwant %q, %v", v, got, err, want, wantErr)
		}
	})
}

// valueBuilder reads a value from fuzz bytes: a kind byte, then what the
// kind needs.
type valueBuilder struct{ data []byte }

func (b *valueBuilder) byte() byte {
	if len(b.data) == 0 {
		return 0
	}
	c := b.data[0]
	b.data = b.data[1:]
	return c
}

func (b *valueBuilder) bytes(n int) []byte {
	n = min(n, len(b.data))
	out := b.data[:n]
	b.data = b.data[n:]
	return out
}

func (b *valueBuilder) string() string { return string(b.bytes(int(b.byte() % 24))) }

func (b *valueBuilder) u64() uint64 {
	var buf [8]byte
	copy(buf[:], b.bytes(8))
	return binary.LittleEndian.Uint64(buf[:])
}

func (b *valueBuilder) value(depth int) any {
	kind := b.byte() % 10
	if depth > 4 && kind >= 5 {
		kind %= 5
	}
	switch kind {
	case 0:
		return nil
	case 1:
		return b.byte()%2 == 0
	case 2:
		return b.string()
	case 3:
		return int64(b.u64())
	case 4:
		return math.Float64frombits(b.u64())
	case 5:
		m := map[string]any{}
		for range int(b.byte() % 5) {
			m[b.string()] = b.value(depth + 1)
		}
		return m
	case 6:
		l := []any{}
		for range int(b.byte() % 5) {
			l = append(l, b.value(depth+1))
		}
		return l
	case 7:
		return float64(int64(b.u64()) >> (b.byte() % 64)) // integral floats, small and large
	case 8:
		return b.u64()
	default:
		return float64(b.byte()) / 8
	}
}

// BenchmarkToYAML: toYaml of what charts pass it most (a container's
// resources, a security context, labels), as sigs.k8s.io/yaml writes it
// and as marshalYAML does.
func BenchmarkToYAML(b *testing.B) {
	v := map[string]any{
		"resources": map[string]any{
			"limits":   map[string]any{"cpu": "500m", "memory": "512Mi"},
			"requests": map[string]any{"cpu": 0.1, "memory": "128Mi"},
		},
		"securityContext": map[string]any{"runAsNonRoot": true, "runAsUser": 1001.0, "capabilities": map[string]any{"drop": []any{"ALL"}}},
		"labels":          map[string]any{"app.kubernetes.io/name": "web", "app.kubernetes.io/instance": "web-1", "tier": "frontend"},
	}
	b.Run("sigs", func(b *testing.B) {
		for b.Loop() {
			if _, err := yaml.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("marshalYAML", func(b *testing.B) {
		for b.Loop() {
			if _, err := marshalYAML(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
