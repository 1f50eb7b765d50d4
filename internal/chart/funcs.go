package chart

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
	goyaml "sigs.k8s.io/yaml/goyaml.v3"
)

// LookupFunc is the template function `lookup apiVersion kind namespace
// name`. Offline rendering uses an empty result, as `helm template` does.
type LookupFunc func(apiVersion, kind, namespace, name string) (map[string]any, error)

func offlineLookup(string, string, string, string) (map[string]any, error) {
	return map[string]any{}, nil
}

// baseFuncs is the render-independent function map: sprig without env and
// expandenv, plus Helm's conversions and duration helpers. Render adds
// include, tpl, required, fail and lookup, which are bound to one render.
func baseFuncs() template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	extra := template.FuncMap{
		"toToml":        toTOML,
		"mustToToml":    mustToTOML,
		"fromToml":      fromTOML,
		"toYaml":        toYAML,
		"mustToYaml":    mustToYAML,
		"toYamlPretty":  toYAMLPretty,
		"fromYaml":      fromYAML,
		"fromYamlArray": fromYAMLArray,
		"toJson":        toJSON,
		"mustToJson":    mustToJSON,
		"fromJson":      fromJSON,
		"fromJsonArray": fromJSONArray,

		"mustToDuration":       mustToDuration,
		"durationSeconds":      func(v any) float64 { return durationOr0(v).Seconds() },
		"durationMilliseconds": func(v any) int64 { return durationOr0(v).Milliseconds() },
		"durationMicroseconds": func(v any) int64 { return durationOr0(v).Microseconds() },
		"durationNanoseconds":  func(v any) int64 { return durationOr0(v).Nanoseconds() },
		"durationMinutes":      func(v any) float64 { return durationOr0(v).Minutes() },
		"durationHours":        func(v any) float64 { return durationOr0(v).Hours() },
		"durationDays":         func(v any) float64 { return durationOr0(v).Hours() / 24.0 },
		"durationWeeks":        func(v any) float64 { return durationOr0(v).Hours() / 24.0 / 7.0 },
		"durationRoundTo":      durationRoundTo,
		"durationTruncateTo":   durationTruncateTo,

		// DNS lookups are disabled, as in `helm template` without --enable-dns.
		"getHostByName": func(string) string { return "" },

		// Placeholders so templates parse; replaced per render.
		"include":  func(string, any) string { return "not implemented" },
		"tpl":      func(string, any) any { return "not implemented" },
		"required": func(string, any) (any, error) { return "not implemented", nil },
		"fail":     func(string) (string, error) { return "", nil },
		"lookup":   offlineLookup,
	}
	for k, v := range extra {
		f[k] = v
	}
	limitFuncs(f)
	return f
}

func toYAML(v any) string {
	data, err := marshalYAML(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(data), "\n")
}

func mustToYAML(v any) string {
	data, err := marshalYAML(v)
	if err != nil {
		panic(err)
	}
	return strings.TrimSuffix(string(data), "\n")
}

func toYAMLPretty(v any) string {
	var buf bytes.Buffer
	enc := goyaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func fromYAML(s string) map[string]any {
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func fromYAMLArray(s string) []any {
	a := []any{}
	if err := yaml.Unmarshal([]byte(s), &a); err != nil {
		a = []any{err.Error()}
	}
	return a
}

func toTOML(v any) string {
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(v); err != nil {
		return err.Error()
	}
	return buf.String()
}

func mustToTOML(v any) string {
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(v); err != nil {
		panic(err)
	}
	return buf.String()
}

func fromTOML(s string) map[string]any {
	m := map[string]any{}
	if err := toml.Unmarshal([]byte(s), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func toJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(data)
}

func mustToJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(data)
}

func fromJSON(s string) map[string]any {
	m := map[string]any{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func fromJSONArray(s string) []any {
	a := []any{}
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		a = []any{err.Error()}
	}
	return a
}

const (
	maxDurationSeconds      = int64(math.MaxInt64 / int64(time.Second))
	minDurationSeconds      = int64(math.MinInt64 / int64(time.Second))
	maxDurationSecondsFloat = float64(math.MaxInt64) / float64(time.Second)
	minDurationSecondsFloat = float64(math.MinInt64) / float64(time.Second)
)

func durationFromFloat(seconds float64) (time.Duration, error) {
	if math.IsNaN(seconds) || math.IsInf(seconds, 0) {
		return 0, fmt.Errorf("invalid duration seconds: %v", seconds)
	}
	if seconds > maxDurationSecondsFloat || seconds < minDurationSecondsFloat {
		return 0, fmt.Errorf("duration seconds overflow: %v", seconds)
	}
	nanos := seconds * float64(time.Second)
	if nanos > float64(math.MaxInt64) || nanos < float64(math.MinInt64) {
		return 0, fmt.Errorf("duration nanoseconds overflow: %v", nanos)
	}
	return time.Duration(nanos), nil
}

// asDuration accepts a time.Duration, a Go duration string, or a number
// of seconds (int, uint, float or numeric string).
func asDuration(v any) (time.Duration, error) {
	switch x := v.(type) {
	case time.Duration:
		return x, nil
	case string:
		s := strings.TrimSpace(x)
		if s == "" {
			return 0, errors.New("empty duration")
		}
		if d, err := time.ParseDuration(s); err == nil {
			return d, nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return durationFromFloat(f)
		}
		return 0, fmt.Errorf("could not parse duration %q", x)
	case nil:
		return 0, errors.New("invalid duration")
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		s := rv.Int()
		if s > maxDurationSeconds || s < minDurationSeconds {
			return 0, fmt.Errorf("duration seconds overflow: %d", s)
		}
		return time.Duration(s) * time.Second, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		s := rv.Uint()
		if s > uint64(maxDurationSeconds) {
			return 0, fmt.Errorf("duration seconds overflow: %d", s)
		}
		return time.Duration(int64(s)) * time.Second, nil
	case reflect.Float32, reflect.Float64:
		return durationFromFloat(rv.Float())
	default:
		return 0, fmt.Errorf("unsupported duration type %T", v)
	}
}

func mustToDuration(v any) time.Duration {
	d, err := asDuration(v)
	if err != nil {
		panic(err)
	}
	return d
}

func durationOr0(v any) time.Duration {
	d, err := asDuration(v)
	if err != nil {
		return 0
	}
	return d
}

func durationRoundTo(v, m any) time.Duration {
	d, err := asDuration(v)
	if err != nil {
		return 0
	}
	mul, err := asDuration(m)
	if err != nil {
		return d
	}
	return d.Round(mul)
}

func durationTruncateTo(v, m any) time.Duration {
	d, err := asDuration(v)
	if err != nil {
		return 0
	}
	mul, err := asDuration(m)
	if err != nil {
		return d
	}
	return d.Truncate(mul)
}
