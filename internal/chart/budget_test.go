package chart

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// budgetChart is a chart "c" with the given templates (names under
// templates/).
func budgetChart(t *testing.T, templates map[string]string) *Chart {
	t.Helper()
	files := []*File{{Name: "Chart.yaml", Data: []byte("apiVersion: v2\nname: c\nversion: 1.0.0\n")}}
	for name, src := range templates {
		files = append(files, &File{Name: "templates/" + name, Data: []byte(src)})
	}
	ch, err := loadFiles(files, newBudget(Limits{}))
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// TestRenderBudget renders templates that would exhaust memory or run
// forever. Each fails quickly with an error that wraps ErrRenderBudget and
// names the template.
func TestRenderBudget(t *testing.T) {
	tests := []struct {
		name      string
		templates map[string]string
		opts      RenderOptions
		want      []string // substrings of the error
	}{
		{
			name:      "range until 50000000",
			templates: map[string]string{"x.yaml": "a: |\n{{- range until 50000000 }}x{{ end }}\n"},
			want:      []string{"c/templates/x.yaml:2:", "until 50000000 would build a list of 50000000 numbers; the limit is 1000000"},
		},
		{
			name:      "untilStep",
			templates: map[string]string{"x.yaml": "{{ untilStep 0 2000000000 1 }}"},
			want:      []string{"c/templates/x.yaml:1:", "untilStep 0 2000000000 1 would build a list of 2000000000 numbers"},
		},
		{
			name:      "seq",
			templates: map[string]string{"x.yaml": "{{ seq 1 100000000 }}"},
			want:      []string{"c/templates/x.yaml:1:", "seq would print 100000000 numbers"},
		},
		{
			name:      "repeat",
			templates: map[string]string{"x.yaml": `{{ repeat 1000000000 "xy" }}`},
			want:      []string{"c/templates/x.yaml:1:", "repeat 1000000000 would build a string of more than"},
		},
		{
			name:      "nindent",
			templates: map[string]string{"x.yaml": `{{ nindent 999999999 "a\nb" }}`},
			want:      []string{"nindent 999999999 would build a string"},
		},
		{
			name:      "randAlphaNum",
			templates: map[string]string{"x.yaml": `{{ randAlphaNum 1000000000 }}`},
			want:      []string{"randAlphaNum 1000000000 would build"},
		},
		{
			name:      "output size",
			templates: map[string]string{"x.yaml": "{{ range until 100000 }}0123456789{{ end }}"},
			opts:      RenderOptions{MaxOutputBytes: 100_000},
			want:      []string{"rendering c/templates/x.yaml: templates wrote more than 100000 bytes, the render output limit"},
		},
		{
			name: "output size through include",
			templates: map[string]string{
				"_h.tpl": `{{ define "h" }}{{ range until 1000 }}0123456789{{ end }}{{ end }}`,
				"x.yaml": "{{ range until 1000 }}{{ $x := include \"h\" . }}{{ end }}",
			},
			opts: RenderOptions{MaxOutputBytes: 1 << 20},
			want: []string{"c/templates/x.yaml:1:", "error calling include", "render output limit"},
		},
		{
			name:      "output size through tpl",
			templates: map[string]string{"x.yaml": `{{ range until 1000 }}{{ $x := tpl "{{ range until 1000 }}0123456789{{ end }}" $ }}{{ end }}`},
			opts:      RenderOptions{MaxOutputBytes: 1 << 20},
			want:      []string{"c/templates/x.yaml:1:", "render output limit"},
		},
		{
			name:      "time, with output",
			templates: map[string]string{"x.yaml": "{{ $l := until 1000000 }}{{ range $l }}{{ range $l }}x{{ end }}{{ end }}"},
			opts:      RenderOptions{MaxOutputBytes: 1 << 40, Timeout: 200 * time.Millisecond},
			want:      []string{"rendering c/templates/x.yaml: templates ran longer than 200ms, the render time limit"},
		},
		{
			name: "time, with includes and no output",
			templates: map[string]string{
				"_h.tpl": `{{ define "h" }}{{ end }}`,
				"x.yaml": `{{ $l := until 1000000 }}{{ range $l }}{{ range $l }}{{ $x := include "h" . }}{{ end }}{{ end }}`,
			},
			opts: RenderOptions{Timeout: 200 * time.Millisecond},
			want: []string{"rendering c/templates/x.yaml: templates ran longer than 200ms"},
		},
		{
			// Nothing in this loop passes through convoy's code: the
			// render returns at the deadline while the loop runs on (over
			// a second) in the background.
			name:      "time, no output, no calls",
			templates: map[string]string{"x.yaml": "{{ $l := until 8000 }}{{ range $l }}{{ range $l }}{{ end }}{{ end }}"},
			// 200ms: the budget runs from the start of the render, and
			// on a loaded machine parsing alone has taken 20ms.
			opts: RenderOptions{Timeout: 200 * time.Millisecond},
			want: []string{"rendering c/templates/x.yaml: templates ran longer than 200ms"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := budgetChart(t, tt.templates)
			opts := tt.opts
			opts.ReleaseName, opts.Namespace = "r", "ns"
			done := make(chan error, 1)
			go func() {
				_, err := Render(ch, opts)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("hung")
			}
			if !errors.Is(err, ErrRenderBudget) {
				t.Fatalf("err = %v, want ErrRenderBudget", err)
			}
			var te *TemplateError
			if !errors.As(err, &te) || te.Template != "c/templates/x.yaml" {
				t.Errorf("err = %#v, want a TemplateError for c/templates/x.yaml", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

// TestLimitedFuncsMatchSprig checks that within the limits the wrapped
// functions give sprig's results, and that the sizes computed without
// building agree with what sprig builds.
func TestLimitedFuncsMatchSprig(t *testing.T) {
	f := baseFuncs()
	untilStep := f["untilStep"].(func(int, int, int) ([]int, error))
	seq := f["seq"].(func(...int) (string, error))
	vals := []int{-7, -3, -2, -1, 0, 1, 2, 3, 7}
	for _, a := range vals {
		for _, b := range vals {
			for _, c := range vals {
				got, err := untilStep(a, b, c)
				if err != nil {
					t.Fatal(err)
				}
				if n := stepCount(a, b, c); n != uint64(len(got)) {
					t.Errorf("stepCount(%d, %d, %d) = %d, sprig builds %d", a, b, c, n, len(got))
				}
				for _, params := range [][]int{{a}, {a, b}, {a, b, c}} {
					s, err := seq(params...)
					if err != nil {
						t.Fatal(err)
					}
					if n := seqCount(params...); n != uint64(len(strings.Fields(s))) {
						t.Errorf("seqCount(%v) = %d, sprig prints %q", params, n, s)
					}
				}
			}
		}
	}
	ch := budgetChart(t, map[string]string{"x.yaml": `data: {{ printf "%v|%v|%v|%v|%v|%v|%v" (until 3) (until -2) (untilStep 0 10 3) (seq 3) (repeat 3 "ab") (nindent 2 "a") (len (randAlphaNum 5)) | quote }}`})
	r, err := Render(ch, RenderOptions{ReleaseName: "r", Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.TemplateOutput(false), `data: "[0 1 2]|[0 -1]|[0 3 6 9]|1 2 3|ababab|\n  a|5"`; !strings.Contains(got, want) {
		t.Errorf("output %q, want %q", got, want)
	}
}
