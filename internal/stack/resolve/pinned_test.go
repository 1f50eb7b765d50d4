package resolve

import (
	"testing"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

// TestPinnedChartReplacesTheSource: a pinned instance loads the chart it
// was given, without its source (here a repository chart with no lock
// file, which would fail); other instances load from their source.
func TestPinnedChartReplacesTheSource(t *testing.T) {
	web, _ := config.ParseReleaseInstanceAddr("release.web")
	api, _ := config.ParseReleaseInstanceAddr("release.api")
	pinned := &chart.Chart{Metadata: &chart.Metadata{Name: "web", Version: "1.0.0"}}
	charts := NewCharts("").WithPinned(map[config.ReleaseInstanceAddr]*chart.Chart{web: pinned})
	dir := t.TempDir()
	got, err := charts.Load(dir, &config.ReleaseInstance{Addr: web, Name: "web", Chart: "charts/web", ChartSource: config.ChartRepo})
	if err != nil || got != pinned {
		t.Fatalf("pinned: %v, %v", got, err)
	}
	if _, err := charts.Load(dir, &config.ReleaseInstance{Addr: api, Name: "api", Chart: "charts/api", ChartSource: config.ChartRepo}); err == nil {
		t.Fatal("an instance not pinned loaded without a lock file")
	}
}
