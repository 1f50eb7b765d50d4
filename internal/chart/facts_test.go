package chart_test

import (
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart"
)

// A chart's facts answer what the chart answers (its digest, whether it
// reads capabilities), keep none of its files, and are refused by Render
// rather than rendered as an empty chart.
func TestFactsAnswerAsTheChart(t *testing.T) {
	for _, name := range []string{"scaffold", "umbrella", "kube-constraint"} {
		ch, err := chart.Load("testdata/charts/" + name)
		if err != nil {
			t.Fatal(err)
		}
		f := ch.Facts()
		if f.Digest() == "" || f.Digest() != ch.Digest() {
			t.Errorf("%s: facts' digest %q, the chart's %q", name, f.Digest(), ch.Digest())
		}
		if f.UsesCapabilities() != ch.UsesCapabilities() {
			t.Errorf("%s: facts read capabilities %v, the chart %v", name, f.UsesCapabilities(), ch.UsesCapabilities())
		}
		if len(f.Raw)+len(f.Templates)+len(f.Files)+len(f.RawValues) != 0 || f.Values != nil {
			t.Errorf("%s: the facts hold files or values", name)
		}
		if _, err := chart.Render(f, chart.RenderOptions{}); err == nil || !strings.Contains(err.Error(), "only its facts") {
			t.Errorf("%s: rendering its facts: %v", name, err)
		}
	}
}
