package kube_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
)

func TestParsePointer(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{in: "/spec/replicas", want: []string{"spec", "replicas"}},
		{in: "/metadata/annotations/example.com~1owner", want: []string{"metadata", "annotations", "example.com/owner"}},
		{in: "/data/a~0b~01", want: []string{"data", "a~b~1"}},
		{in: "/spec/template/spec/containers/0/image", want: []string{"spec", "template", "spec", "containers", "0", "image"}},
		{in: "/", want: []string{""}},
		{in: "", err: "must start with"},
		{in: "spec/replicas", err: "must start with"},
		{in: "/a~2b", err: "escaped"},
		{in: "/a~", err: "escaped"},
		{in: "/kind", err: "identity"},
		{in: "/metadata", err: "identity"},
		{in: "/metadata/name", err: "identity"},
		{in: "/metadata/namespace", err: "identity"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, err := kube.ParsePointer(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p, tt.want) {
				t.Fatalf("tokens %q, want %q", p, tt.want)
			}
			if p.String() != tt.in {
				t.Fatalf("String() = %q, want %q", p, tt.in)
			}
		})
	}
}

func TestIgnoreRulesRoundTripAsJSON(t *testing.T) {
	p, _ := kube.ParsePointer("/metadata/annotations/a~1b")
	in := kube.IgnoreRules{{Kind: "Deployment", Name: "api-*", Paths: []kube.Pointer{p}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"kind":"Deployment","name":"api-*","paths":["/metadata/annotations/a~1b"]}]`; string(b) != want {
		t.Fatalf("JSON %s, want %s", b, want)
	}
	var out kube.IgnoreRules
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || !slices.Equal(out[0].Paths[0], p) {
		t.Fatalf("decoded %+v", out)
	}
}
