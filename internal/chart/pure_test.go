package chart

import "testing"

func TestPure(t *testing.T) {
	mk := func(files map[string]string) *Chart {
		c := &Chart{Metadata: &Metadata{Name: "x", Version: "1.0.0", APIVersion: APIVersionV2}}
		for name, data := range files {
			c.Templates = append(c.Templates, &File{Name: name, Data: []byte(data)})
		}
		return c
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  bool
	}{
		{"plain", map[string]string{"templates/cm.yaml": "data: {{ .Values.x | quote }}"}, true},
		{"lookup", map[string]string{"templates/s.yaml": `{{ $s := lookup "v1" "Secret" .Release.Namespace "x" }}`}, false},
		{"random password", map[string]string{"templates/s.yaml": `password: {{ randAlphaNum 16 | b64enc }}`}, false},
		{"clock", map[string]string{"templates/cm.yaml": `at: {{ now | date "2006" }}`}, false},
		{"uuid", map[string]string{"templates/cm.yaml": `id: {{ uuidv4 }}`}, false},
		{"random only in a test hook", map[string]string{"templates/tests/t.yaml": `{{ randAlphaNum 5 }}`}, true},
		{"a word that contains now", map[string]string{"templates/cm.yaml": `known: {{ .Values.nowhere }}`}, true},
	} {
		if got := Pure(mk(tc.files)); got != tc.want {
			t.Errorf("%s: Pure = %v, want %v", tc.name, got, tc.want)
		}
	}
	lib := mk(map[string]string{"templates/_helpers.tpl": `{{ define "x" }}{{ randAlpha 3 }}{{ end }}`})
	parent := mk(map[string]string{"templates/cm.yaml": "a: b"})
	parent.dependencies = []*Chart{lib}
	if Pure(parent) {
		t.Error("a chart whose dependency draws random numbers is pure")
	}
}
