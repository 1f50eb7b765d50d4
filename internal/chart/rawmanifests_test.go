package chart

import (
	"strings"
	"testing"
)

func TestFromManifests(t *testing.T) {
	src := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: raw\n  namespace: elsewhere\ndata:\n  tmpl: \"{{ .Values.x }} `back` \\\"q\\\"\"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: second\n"
	ch, err := FromManifests("raw", []*File{{Name: "k8s/a.yaml", Data: []byte(src)}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := Render(ch, RenderOptions{ReleaseName: "r", Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Manifests) != 2 {
		t.Fatalf("%d manifests", len(out.Manifests))
	}
	got := out.Manifests[0].Content + "\n---\n" + out.Manifests[1].Content
	if !strings.Contains(got, "{{ .Values.x }} `back`") || out.Manifests[0].Namespace != "elsewhere" {
		t.Errorf("not verbatim:\n%s", got)
	}
	if _, err := FromManifests("raw", []*File{{Name: "a/x.yaml"}, {Name: "b/x.yaml"}}); err == nil {
		t.Error("two files of one name accepted")
	}
}
