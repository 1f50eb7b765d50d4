package chart

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// SchemaError is a values.schema.json violation in one or more charts; the
// text is Helm's, chart by chart, each line naming the failing path.
type SchemaError struct {
	Message string
	// Violations are the failed checks one by one, for pointing at the
	// values that fail them.
	Violations []SchemaViolation
}

// SchemaViolation is one check of a chart's values.schema.json that the
// values fail.
type SchemaViolation struct {
	// Chart is the chart whose schema it is (a subchart's name or alias).
	Chart string
	// Path is where the failing value is in the release's values (a
	// subchart's values under its name); empty for the values as a whole.
	// For a missing required key it is the object that lacks it.
	Path []string
	// Message says what is wrong, as the schema library words it
	// ("got string, want integer").
	Message string
}

func (e *SchemaError) Error() string {
	return "values don't meet the specifications of the schema(s) in the following chart(s):\n" + e.Message
}

// compiledSchema caches one chart's compiled schema; compiling is the
// expensive part of validation and a chart's schema never changes.
type compiledSchema struct {
	once   sync.Once
	schema *jsonschema.Schema
	err    error
}

func (c *Chart) compiledSchema() (*jsonschema.Schema, error) {
	cs := c.schemaCache
	if cs == nil {
		return compileSchema(c.Schema)
	}
	cs.once.Do(func() { cs.schema, cs.err = compileSchema(c.Schema) })
	return cs.schema, cs.err
}

const schemaURL = "file:///values.schema.json"

func compileSchema(data []byte) (s *jsonschema.Schema, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("unable to validate schema: %s", r)
		}
	}()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{
		"file":  jsonschema.FileLoader{},
		"http":  offlineLoader{},
		"https": offlineLoader{},
		"urn":   urnLoader{},
	})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
}

// offlineLoader refuses remote $refs: rendering never touches the network.
type offlineLoader struct{}

func (offlineLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("remote schema reference %s is not supported offline", url)
}

// urnLoader resolves every URN to a permissive schema, as Helm does by default.
type urnLoader struct{}

func (urnLoader) Load(string) (any, error) {
	return jsonschema.UnmarshalJSON(strings.NewReader("true"))
}

// validateSchemas validates values against the schema of n and, for each
// subchart with values, against the subchart's schema. The error is Helm's
// text, chart by chart, with each violation.
func validateSchemas(n *node, values map[string]any) *SchemaError {
	var sb strings.Builder
	var violations []SchemaViolation
	var walk func(n *node, values map[string]any, at []string)
	walk = func(n *node, values map[string]any, at []string) {
		if n.chart.Schema != nil {
			if msg, vs := validateOne(n.chart, values); msg != "" {
				fmt.Fprintf(&sb, "%s:\n", n.name())
				sb.WriteString(msg)
				for i := range vs {
					vs[i].Chart = n.name()
					vs[i].Path = append(slices.Clip(at), vs[i].Path...)
				}
				violations = append(violations, vs...)
			}
		}
		for _, sub := range n.deps {
			raw, ok := values[sub.name()]
			if !ok || raw == nil {
				continue
			}
			subAt := append(slices.Clip(at), sub.name())
			sv, ok := raw.(map[string]any)
			if !ok {
				msg := fmt.Sprintf("invalid type for values: expected object (map), got %T", raw)
				fmt.Fprintf(&sb, "%s:\n%s\n", sub.name(), msg)
				violations = append(violations, SchemaViolation{Chart: sub.name(), Path: subAt, Message: msg})
				continue
			}
			walk(sub, sv, subAt)
		}
	}
	walk(n, values, nil)
	if sb.Len() == 0 {
		return nil
	}
	return &SchemaError{Message: sb.String(), Violations: violations}
}

// validateOne validates values against one chart's schema: Helm's text of
// the failure ("" when the values pass) and its violations.
func validateOne(c *Chart, values map[string]any) (msg string, violations []SchemaViolation) {
	defer func() {
		if r := recover(); r != nil {
			msg, violations = fmt.Sprintf("unable to validate schema: %s", r), nil
		}
	}()
	s, err := c.compiledSchema()
	if err != nil {
		return err.Error(), nil
	}
	if values == nil {
		values = map[string]any{}
	}
	if err := s.Validate(values); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			sortCauses(ve)
			violations = leafViolations(ve, nil)
		}
		return strings.TrimPrefix(err.Error(), "jsonschema validation failed with '"+schemaURL+"#'\n") + "\n", violations
	}
	return "", nil
}

// schemaPrinter words violations in English, as the library's own text.
var schemaPrinter = message.NewPrinter(language.English)

// leafViolations are the checks at the leaves of a validation error's
// tree: the ones that say which value fails and why. Properties an object
// may not have are a violation each, at the property, so that convoy
// points at the key that sets it rather than at the object.
func leafViolations(ve *jsonschema.ValidationError, out []SchemaViolation) []SchemaViolation {
	if len(ve.Causes) == 0 {
		if ap, ok := ve.ErrorKind.(*kind.AdditionalProperties); ok && len(ap.Properties) > 0 {
			for _, p := range ap.Properties {
				msg := (&kind.AdditionalProperties{Properties: []string{p}}).LocalizedString(schemaPrinter)
				out = append(out, SchemaViolation{Path: append(slices.Clone(ve.InstanceLocation), p), Message: msg})
			}
			return out
		}
		return append(out, SchemaViolation{Path: slices.Clone(ve.InstanceLocation), Message: ve.ErrorKind.LocalizedString(schemaPrinter)})
	}
	for _, c := range ve.Causes {
		out = leafViolations(c, out)
	}
	return out
}

// sortCauses orders nested validation errors by instance path, then schema
// location, and the properties an object may not have by name. Helm prints them in map iteration order, which changes from run
// to run; convoy's output must be stable.
func sortCauses(ve *jsonschema.ValidationError) {
	sort.SliceStable(ve.Causes, func(i, j int) bool {
		a, b := ve.Causes[i], ve.Causes[j]
		if pa, pb := strings.Join(a.InstanceLocation, "/"), strings.Join(b.InstanceLocation, "/"); pa != pb {
			return pa < pb
		}
		return a.SchemaURL < b.SchemaURL
	})
	if ap, ok := ve.ErrorKind.(*kind.AdditionalProperties); ok {
		slices.Sort(ap.Properties)
	}
	for _, c := range ve.Causes {
		sortCauses(c)
	}
}
