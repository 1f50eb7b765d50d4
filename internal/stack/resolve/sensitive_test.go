package resolve

import (
	"slices"
	"testing"

	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/zclconf/go-cty/cty"
)

func TestSensitiveValues(t *testing.T) {
	r := &config.ReleaseInstance{
		Values: []config.ValuesLayer{
			{Kind: config.ValuesObject, Value: cty.ObjectVal(map[string]cty.Value{
				"plain": cty.StringVal("visible"),
				"db":    cty.ObjectVal(map[string]cty.Value{"password": cty.StringVal("pw-obj").Mark(config.Sensitive)}),
				"keys":  cty.TupleVal([]cty.Value{cty.StringVal("k1"), cty.StringVal("k2")}).Mark(config.Sensitive),
				"later": cty.UnknownVal(cty.String).Mark(config.Sensitive),
			})},
			{Kind: config.ValuesYAML, Value: cty.StringVal("token: yaml-tok\nport: 5432\n").Mark(config.Sensitive)},
			{Kind: config.ValuesYAML, Value: cty.StringVal("shown: yes\n")},
		},
		Set:          map[string]cty.Value{"a": cty.StringVal("plain-set"), "pin": cty.NumberIntVal(9876).Mark(config.Sensitive)},
		SetSensitive: map[string]cty.Value{"api.key": cty.StringVal("set-secret").Mark(config.Sensitive)},
	}
	got := SensitiveValues(r)
	want := []string{"5432", "9876", "k1", "k2", "pw-obj", "set-secret", "token: yaml-tok\nport: 5432\n", "yaml-tok"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
