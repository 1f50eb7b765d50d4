package chart

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaError is a values.schema.json violation in one or more charts; the
// text is Helm's, chart by chart, each line naming the failing path.
type SchemaError struct {
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
// subchart with values, against the subchart's schema.
func validateSchemas(n *node, values map[string]any) error {
	var sb strings.Builder
	if n.chart.Schema != nil {
		if err := validateOne(n.chart, values); err != nil {
			fmt.Fprintf(&sb, "%s:\n", n.name())
			sb.WriteString(err.Error())
		}
	}
	for _, sub := range n.deps {
		raw, ok := values[sub.name()]
		if !ok || raw == nil {
			continue
		}
		sv, ok := raw.(map[string]any)
		if !ok {
			fmt.Fprintf(&sb, "%s:\ninvalid type for values: expected object (map), got %T\n", sub.name(), raw)
			continue
		}
		if err := validateSchemas(sub, sv); err != nil {
			sb.WriteString(err.Error())
		}
	}
	if sb.Len() > 0 {
		return errors.New(sb.String())
	}
	return nil
}

func validateOne(c *Chart, values map[string]any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unable to validate schema: %s", r)
		}
	}()
	s, err := c.compiledSchema()
	if err != nil {
		return err
	}
	if values == nil {
		values = map[string]any{}
	}
	if err := s.Validate(values); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			sortCauses(ve)
		}
		msg := strings.TrimPrefix(err.Error(), "jsonschema validation failed with '"+schemaURL+"#'\n")
		return errors.New(msg + "\n")
	}
	return nil
}

// sortCauses orders nested validation errors by instance path, then schema
// location. Helm prints them in map iteration order, which changes from run
// to run; convoy's output must be stable.
func sortCauses(ve *jsonschema.ValidationError) {
	sort.SliceStable(ve.Causes, func(i, j int) bool {
		a, b := ve.Causes[i], ve.Causes[j]
		if pa, pb := strings.Join(a.InstanceLocation, "/"), strings.Join(b.InstanceLocation, "/"); pa != pb {
			return pa < pb
		}
		return a.SchemaURL < b.SchemaURL
	})
	for _, c := range ve.Causes {
		sortCauses(c)
	}
}
