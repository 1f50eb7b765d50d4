package source

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"go.yaml.in/yaml/v3"
)

func writeIndex(t *testing.T, text string) string {
	p := filepath.Join(t.TempDir(), "index.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestIndexEntriesMatchesAFullDecode(t *testing.T) {
	for _, tc := range []struct{ name, text string }{
		{"helm layout", `apiVersion: v1
entries:
  other:
  - apiVersion: v2
    name: other
    version: 9.9.9
    urls:
    - other-9.9.9.tgz
  web:
  - apiVersion: v2
    created: "2026-01-01T00:00:00Z"
    description: |
      A multi-line
      description: with a colon
    digest: abc
    name: web
    urls:
    - web-1.4.0.tgz
    version: 1.4.0
  # a comment
  - name: web
    version: 1.2.0
    urls: [web-1.2.0.tgz]
  zzz: []
generated: "2026-01-01T00:00:00Z"
`},
		{"indented sequences and quoted keys", `apiVersion: v1
generated: "2026-01-01T00:00:00Z"
entries:
    "web":
        - name: web
          version: 2.0.0
          urls:
            - web-2.0.0.tgz
    'other':
        - name: other
          version: 1.0.0
`},
		{"flow style falls back", `{"apiVersion": "v1", "entries": {"web": [{"name": "web", "version": "3.0.0", "urls": ["a.tgz"]}]}}`},
		{"entries as a flow map fall back", "apiVersion: v1\nentries: {web: [{name: web, version: 3.1.0}]}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeIndex(t, tc.text)
			var full indexFile
			if err := yaml.Unmarshal([]byte(tc.text), &full); err != nil {
				t.Fatal(err)
			}
			for _, chart := range []string{"web", "other", "missing"} {
				got, err := indexEntries(path, chart)
				if err != nil {
					t.Fatal(err)
				}
				if want := full.Entries[chart]; !reflect.DeepEqual(got, want) && (len(got) != 0 || len(want) != 0) {
					t.Errorf("%s: got %+v, want %+v", chart, got, want)
				}
			}
		})
	}
}

func TestIndexEntriesRejectsNonIndexes(t *testing.T) {
	for _, text := range []string{"<html>hello</html>\n", "entries:\n  web: []\n", "apiVersion: v1\n"} {
		if _, err := indexEntries(writeIndex(t, text), "web"); err == nil {
			t.Errorf("accepted %q", text)
		}
	}
}

// A large index is streamed: decoding one chart from a 30 MB index
// allocates under 1/16 of its size.
func TestIndexEntriesStreamsLargeIndexes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "apiVersion: v1\nentries:")
	for i := range 20000 {
		name := fmt.Sprintf("chart-%05d", i)
		if i == 12345 {
			name = "web"
		}
		fmt.Fprintf(w, "  %s:\n", name)
		for v := range 5 {
			fmt.Fprintf(w, "  - apiVersion: v2\n    created: \"2026-01-01T00:00:00Z\"\n    description: A chart that is here to make the index large, like real ones.\n    digest: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n    name: %s\n    urls:\n    - https://charts.example.com/%s-1.%d.0.tgz\n    version: 1.%d.0\n", name, name, v, v)
		}
	}
	fmt.Fprintln(w, "generated: \"2026-01-01T00:00:00Z\"")
	w.Flush()
	f.Close()
	fi, _ := os.Stat(path)
	if fi.Size() < 30<<20 {
		t.Fatalf("index is only %d bytes", fi.Size())
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	entries, err := indexEntries(path, "web")
	runtime.ReadMemStats(&after)
	if err != nil || len(entries) != 5 || entries[4].Version != "1.4.0" {
		t.Fatalf("entries %v, %v", entries, err)
	}
	// A full decode builds a node tree several times the file's size;
	// scanning allocates the line buffer and the one chart's block.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(fi.Size())/16 {
		t.Fatalf("allocated %d bytes for a %d-byte index", alloc, fi.Size())
	}
	if heap := after.HeapInuse; heap > before.HeapInuse+8<<20 {
		t.Fatalf("heap grew from %d to %d", before.HeapInuse, heap)
	}
}
