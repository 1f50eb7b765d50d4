package provenance

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart"
)

// BenchmarkValues measures the origins of a release of a chart of some
// 6,000 default leaves (about kube-prometheus-stack's) with two
// subcharts and globals: "cold" reads the chart's values.yaml lines
// every time, "cached" once (as a plan does for the releases of one
// chart). CONVOY_BENCH_CHART=DIR measures a chart of your own instead
// (its subcharts in DIR/charts).
func BenchmarkValues(b *testing.B) {
	chartDir := os.Getenv("CONVOY_BENCH_CHART")
	if chartDir == "" {
		chartDir = filepath.Join(b.TempDir(), "big")
		writeFiles(b, chartDir, bigChart(6000))
	}
	chartDir, _ = filepath.Abs(chartDir)
	dir := b.TempDir()
	writeFiles(b, dir, map[string]string{
		"stack.hcl": fmt.Sprintf(`variable "replicas" {
  default = 3
}
release "big" {
  chart  = %q
  values = [{ replicas = var.replicas, global = { region = "eu" } }]
  set    = { "image.tag" = "1.2" }
}
`, chartDir),
	})
	st := evalDir(b, dir)
	ch, err := chart.Load(chartDir)
	if err != nil {
		b.Fatal(err)
	}
	inst := st.Releases[0]
	for _, mode := range []string{"cold", "cached"} {
		b.Run(mode, func(b *testing.B) {
			var shared Cache
			var n int
			cpu := cpuTime()
			for b.Loop() {
				c := &shared
				if mode == "cold" {
					c = &Cache{}
				}
				m, err := c.Values(st, inst, ch)
				if err != nil {
					b.Fatal(err)
				}
				n = len(m)
			}
			b.ReportMetric(float64(n), "leaves")
			// CPU time, for a machine whose cores others share.
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the CPU time the process has used, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// bigChart is a chart whose values.yaml has about n leaves in nested
// tables and lists, and two subcharts of n/10 each.
func bigChart(n int) map[string]string {
	values := func(n int, withGlobal bool) string {
		var s strings.Builder
		if withGlobal {
			s.WriteString("global:\n  region: us\n  registry: docker.io\n")
		}
		for i := 0; s.Len() < 60*n && i < n; i++ {
			fmt.Fprintf(&s, "component%d:\n  enabled: true\n  image:\n    repository: r%d\n    tag: \"1.0\"\n  resources:\n    limits: {cpu: 100m, memory: 128Mi}\n  args:\n    - --a=%d\n    - --b\n  labels: {}\n", i, i, i)
			i += 8
		}
		return s.String()
	}
	files := map[string]string{
		"Chart.yaml":             "apiVersion: v2\nname: big\nversion: 1.0.0\ndependencies:\n  - name: sub\n    version: 1.0.0\n  - name: sub\n    alias: other\n    version: 1.0.0\n",
		"values.yaml":            "replicas: 1\nimage:\n  tag: \"1.0\"\n" + values(n, true),
		"templates/cm.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n",
		"charts/sub/Chart.yaml":  "apiVersion: v2\nname: sub\nversion: 1.0.0\n",
		"charts/sub/values.yaml": values(n/10, true),
	}
	return files
}
