package chart

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestSchemaViolations: a schema error says, check by check, where in the
// release's values the failing value is (a subchart's under its name), so
// that convoy can point at the line that sets it.
func TestSchemaViolations(t *testing.T) {
	tests := []struct {
		chart  string
		values map[string]any
		want   []SchemaViolation
		helm   string // in Helm's text; "": each violation's message
	}{
		{"schema", map[string]any{"name": "good", "port": "eighty", "nested": map[string]any{"list": []any{"x", int64(1)}}}, []SchemaViolation{
			{Chart: "schema", Path: []string{"nested", "list", "1"}, Message: "got number, want string"},
			{Chart: "schema", Path: []string{"port"}, Message: "got string, want integer"},
		}, ""},
		// Each property an object may not have is a violation at it.
		{"schema", map[string]any{"name": "good", "port": int64(80), "nested": map[string]any{"b": 1, "a": map[string]any{"x": 1}}}, []SchemaViolation{
			{Chart: "schema", Path: []string{"nested", "a"}, Message: "additional properties 'a' not allowed"},
			{Chart: "schema", Path: []string{"nested", "b"}, Message: "additional properties 'b' not allowed"},
		}, "at '/nested': additional properties 'a', 'b' not allowed"},
		{"umbrella", map[string]any{"backend": map[string]any{"replicas": "many"}}, []SchemaViolation{
			{Chart: "backend", Path: []string{"backend", "replicas"}, Message: "got string, want integer"},
		}, ""},
		{"umbrella", map[string]any{"backend-replica": map[string]any{"service": map[string]any{"type": "LoadBalancer"}}}, []SchemaViolation{
			{Chart: "backend-replica", Path: []string{"backend-replica", "service", "type"}, Message: "value must be one of 'ClusterIP', 'NodePort'"},
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.chart, func(t *testing.T) {
			ch, err := Load("testdata/charts/" + tt.chart)
			if err != nil {
				t.Fatal(err)
			}
			err = ValidateValues(ch, tt.values)
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("error %v, want a schema error", err)
			}
			if !reflect.DeepEqual(se.Violations, tt.want) {
				t.Errorf("violations\n%#v\nwant\n%#v", se.Violations, tt.want)
			}
			if tt.helm != "" && !strings.Contains(se.Message, tt.helm) {
				t.Errorf("Helm's text lacks %q:\n%s", tt.helm, se.Message)
			}
			for _, v := range tt.want {
				if tt.helm == "" && !strings.Contains(se.Message, v.Message) {
					t.Errorf("Helm's text lacks %q:\n%s", v.Message, se.Message)
				}
			}
		})
	}
}
