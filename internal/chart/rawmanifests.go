package chart

import (
	"fmt"
	"path"
	"strconv"
)

// ManifestsChartVersion is the version of the charts FromManifests builds.
const ManifestsChartVersion = "0.0.0"

// FromManifests builds an in-memory chart named name whose templates are
// the given YAML files, copied verbatim: each template prints its file as
// one string constant, so nothing in the files ({{ ... }} included) is
// templated. The release records the chart like any other, so helm
// rollback and helm get work on it. Names are the files' names (base names,
// in order); two files of one base name are an error.
func FromManifests(name string, files []*File) (*Chart, error) {
	meta := fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\ntype: application\ndescription: Kubernetes manifests deployed by convoy as a release.\n", name, ManifestsChartVersion)
	all := []*File{{Name: "Chart.yaml", Data: []byte(meta)}}
	seen := map[string]bool{}
	for _, f := range files {
		base := path.Base(f.Name)
		if seen[base] {
			return nil, fmt.Errorf("two manifest files are named %s", base)
		}
		seen[base] = true
		tmpl := "{{- " + strconv.Quote(string(f.Data)) + " -}}\n"
		all = append(all, &File{Name: "templates/" + base, Data: []byte(tmpl), ModTime: f.ModTime})
	}
	return loadFiles(all, newBudget(Limits{}))
}
