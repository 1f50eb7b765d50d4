package chart

import (
	"testing"
)

// BenchmarkLoadRender loads and renders each corpus chart (its first
// succeeding case), as one `helm template` run does.
func BenchmarkLoadRender(b *testing.B) {
	seen := map[string]bool{}
	for _, c := range loadCases(b) {
		if c.WantError || seen[c.Chart] {
			continue
		}
		seen[c.Chart] = true
		b.Run(c.Chart, func(b *testing.B) {
			chart := chartPath(b, c)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := renderCase(c, chart); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRender renders an already loaded chart: the per-release cost
// when many releases share one chart.
func BenchmarkRender(b *testing.B) {
	for _, name := range []string{"basic", "umbrella", "hooks"} {
		b.Run(name, func(b *testing.B) {
			ch, err := Load("testdata/charts/" + name)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Render(ch, RenderOptions{ReleaseName: "r", Namespace: "ns"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
