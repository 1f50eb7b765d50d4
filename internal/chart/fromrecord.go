package chart

import (
	"errors"
	"fmt"

	"sigs.k8s.io/yaml"
)

// ErrRecordLacksSubcharts: a release record keeps a chart's own files but
// not its subcharts (Helm's records never did), so a chart that declares
// dependencies cannot be rebuilt from one.
var ErrRecordLacksSubcharts = errors.New("the chart declares dependencies, and release records do not keep subcharts")

// FromRecord rebuilds a chart that renders as the one a release record
// holds: the record's Chart.yaml metadata, Chart.lock, templates, default
// values, schema and other files, loaded as Load loads a directory. The
// default values are the record's parsed ones written back as YAML (what
// rendering reads of values.yaml). A chart that declares dependencies is
// refused with ErrRecordLacksSubcharts.
func FromRecord(rec *Chart) (*Chart, error) {
	if rec == nil || rec.Metadata == nil {
		return nil, errors.New("the record holds no chart")
	}
	meta, err := yaml.Marshal(rec.Metadata)
	if err != nil {
		return nil, fmt.Errorf("Chart.yaml: %w", err) //nolint:staticcheck // a file name
	}
	files := []*File{{Name: "Chart.yaml", Data: meta, ModTime: rec.ModTime}}
	if rec.Lock != nil {
		b, err := yaml.Marshal(rec.Lock)
		if err != nil {
			return nil, fmt.Errorf("Chart.lock: %w", err) //nolint:staticcheck // a file name
		}
		files = append(files, &File{Name: "Chart.lock", Data: b})
	}
	if rec.Values != nil {
		b, err := yaml.Marshal(rec.Values)
		if err != nil {
			return nil, fmt.Errorf("values.yaml: %w", err)
		}
		files = append(files, &File{Name: "values.yaml", Data: b})
	}
	if len(rec.Schema) > 0 {
		files = append(files, &File{Name: "values.schema.json", Data: rec.Schema, ModTime: rec.SchemaModTime})
	}
	for _, group := range [][]*File{rec.Templates, rec.Files} {
		for _, f := range group {
			if f == nil {
				continue
			}
			files = append(files, &File{Name: f.Name, Data: f.Data, ModTime: f.ModTime})
		}
	}
	ch, err := loadFiles(files, newBudget(Limits{}))
	if err != nil {
		return nil, err
	}
	if len(ch.Metadata.Dependencies) > 0 || len(ch.dependencies) > 0 {
		return nil, ErrRecordLacksSubcharts
	}
	return ch, nil
}
