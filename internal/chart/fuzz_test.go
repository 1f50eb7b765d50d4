package chart

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"path"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/convoy-sh/convoy/internal/chart/util"
	"github.com/convoy-sh/convoy/internal/yamldoc"
)

// FuzzParseSet checks that --set parsing never panics, that a successful
// parse yields values YAML can marshal, and that parsing is deterministic.
func FuzzParseSet(f *testing.F) {
	for _, s := range []string{
		"a=b", "a.b=c,d=e", `a\.b=c`, "a[0].b=c", "a={1,2,3}", "a=null", "a[1][2]=x",
		"a=1,a.b=2", "a[0]=1,a.b=2", "a[-1]=1", "a[x]=1", "a={1,2", "a", "a=1,b", "=x",
		"a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.aa.bb.cc.dd.ee=1",
		"a[65537]=1", "a[0][0].b[1]=2,a[0][0].c=3", `a=\,b`, "list[0]={a,b},list[1]=c",
		"a.b=,c=007,d=-3,e=TRUE,f=0", "a[0].b.c[1]=x,a[0].b.d=y",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m1 := map[string]any{}
		err1 := ParseSet(s, m1)
		m2 := map[string]any{}
		err2 := ParseSet(s, m2)
		if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(m1, m2) {
			t.Fatalf("nondeterministic parse of %q", s)
		}
		if err1 != nil {
			return
		}
		// JSON, not YAML: goyaml itself cannot round-trip some long odd keys.
		if _, err := json.Marshal(m1); err != nil {
			t.Fatalf("parse of %q gave unmarshalable values: %v", s, err)
		}
		// Applying the same expression twice must give the same result as once:
		// every path is assigned, nothing accumulates.
		if err := ParseSet(s, m2); err == nil && !reflect.DeepEqual(m1, m2) {
			t.Fatalf("applying %q twice differs from once:\n%v\n%v", s, m1, m2)
		}
	})
}

// FuzzCoalesce checks value coalescing on arbitrary chart defaults and user
// values: no panics, inputs never modified (a loaded chart is shared by
// concurrent renders), deterministic output, and user scalars win.
func FuzzCoalesce(f *testing.F) {
	f.Add("a: 1\nb: {c: 2, d: [1, 2]}\nglobal: {x: 1}\nsub: {y: 2}\n", "a: 3\nb: {c: null}\nglobal: {x: 2, z: {q: 1}}\n")
	f.Add("a: {b: {c: 1}}\n", "a: 1\n")
	f.Add("a: 1\n", "a: {b: 2}\n")
	f.Add("global: 1\nsub: 3\n", "global: {a: 1}\nsub: null\n")
	f.Add("x: null\ny: {z: null}\n", "y: {z: 1, w: null}\n")
	f.Add("sub: {global: {a: 1}, k: v}\n", "sub: {k: null, global: {a: {b: 1}}}\n")
	f.Fuzz(func(t *testing.T, chartYAML, userYAML string) {
		defaults, err := ParseValues([]byte(chartYAML))
		if err != nil {
			return
		}
		user, err := ParseValues([]byte(userYAML))
		if err != nil {
			return
		}
		subDefaults, _ := defaults["sub"].(map[string]any)
		sub := &Chart{Metadata: &Metadata{Name: "sub", Version: "1.0.0", APIVersion: "v2"}, Values: subDefaults}
		top := &Chart{Metadata: &Metadata{Name: "top", Version: "1.0.0", APIVersion: "v2"}, Values: defaults}
		sub.parent = top
		top.dependencies = []*Chart{sub}

		defaultsBefore := deepCopyMap(defaults)
		userBefore := deepCopyMap(user)
		out1, err1 := CoalesceValues(top, user)
		out2, err2 := CoalesceValues(top, user)
		if !reflect.DeepEqual(defaults, defaultsBefore) {
			t.Fatal("coalescing modified the chart's values")
		}
		if !reflect.DeepEqual(user, userBefore) {
			t.Fatal("coalescing modified the user values")
		}
		if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(out1, out2) {
			t.Fatal("coalescing is not deterministic")
		}
		if err1 != nil {
			return
		}
		for k, v := range user {
			if k == "global" || k == "sub" || v == nil || isTable(v) {
				continue
			}
			if !reflect.DeepEqual(out1[k], v) {
				t.Fatalf("user value %s=%v lost: got %v", k, v, out1[k])
			}
		}
		if _, err := json.Marshal(out1); err != nil {
			t.Fatalf("coalesced values do not marshal: %v", err)
		}
	})
}

// FuzzLoadArchive feeds arbitrary bytes (and mutated valid archives) to
// the archive loader: it must never panic, and whatever it accepts must
// be inside the chart and within the limits.
func FuzzLoadArchive(f *testing.F) {
	f.Add(tgz(f, map[string]string{"c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 1.0.0\n", "c/values.yaml": "a: 1\n", "c/templates/x.yaml": "a: {{ .Values.a }}\n"}))
	f.Add(tgz(f, map[string]string{"c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 1.0.0\n", "c/../../etc/passwd": "x"}))
	f.Add(tgz(f, map[string]string{"c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 1.0.0\n", "c/charts/s/Chart.yaml": "apiVersion: v2\nname: s\nversion: 1.0.0\n"}))
	f.Add(tgz(f, map[string]string{"Chart.yaml": "x"}))
	f.Add([]byte("not gzip"))
	f.Add([]byte{0x1f, 0x8b, 0x08})
	limits := Limits{MaxBytes: 1 << 20, MaxFileBytes: 256 << 10, MaxFiles: 200}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := LoadArchiveWithLimits(bytes.NewReader(data), limits)
		if err != nil {
			if c != nil {
				t.Fatal("chart returned with an error")
			}
			return
		}
		var total int64
		var count int
		var walk func(c *Chart)
		walk = func(c *Chart) {
			for _, f := range c.Raw {
				count++
				total += int64(len(f.Data))
				if path.IsAbs(f.Name) || f.Name != path.Clean(f.Name) || strings.HasPrefix(f.Name, "..") {
					t.Fatalf("unsafe file name %q", f.Name)
				}
			}
			for _, d := range c.Dependencies() {
				walk(d)
			}
		}
		walk(c)
		if count > limits.MaxFiles || total > limits.MaxBytes {
			t.Fatalf("limits exceeded: %d files, %d bytes", count, total)
		}
	})
}

// tgz builds a gzipped tar from name → content (regular files only).
func tgz(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range sortedKeys(files) {
		data := files[name]
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzHeadOfAsHelm checks that the sorter reads a document's head as
// Helm's yaml.Unmarshal into SimpleHead does, errors included, whether
// the document's JSON was converted before (as a stored manifest's parse
// leaves it, "# Source:" line and all) or not: the JSON path must never
// answer otherwise.
func FuzzHeadOfAsHelm(f *testing.F) {
	for _, s := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
		"apiVersion: v1\nkind: Job\nmetadata:\n  name: a\n  annotations:\n    helm.sh/hook: pre-install\n    helm.sh/hook-weight: \"-5\"\n",
		"apiVersion: v1\nkind: Job\nmetadata:\n  name: 1\n  annotations:\n    helm.sh/hook-weight: 5\n",
		"kind: A\nmetadata:\n  annotations:\n    a: |\n      x",
		"kind: A\nmetadata:\n  annotations:\n    a: |+\n      x\n",
		"kind: true\nmetadata: {name: yes, namespace: 3}\n",
		"metadata: null\n",
		"- a\n",
		"a: [1\n",
		"Kind: A\nkind: B\n",
		"apiVersion: 1.50\nkind: 1e3\n",
	} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, doc string, warm bool) {
		var want util.SimpleHead
		wantErr := yaml.Unmarshal([]byte(doc), &want)
		if warm {
			_, _ = yamldoc.JSON([]byte("---\n# Source: c/templates/t.yaml\n" + doc + "\n"))
		}
		for _, keep := range []bool{false, true, true} {
			got, err := headOf(doc, keep)
			if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
				t.Fatalf("%q: err %v, Helm's %v", doc, err, wantErr)
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("%q: head %+v, Helm's %+v", doc, got, want)
			}
		}
	})
}
