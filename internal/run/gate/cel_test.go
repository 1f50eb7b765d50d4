package gate_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/run/gate"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The example: every Deployment has all its replicas available.
const allAvailable = "objects.all(o, o.kind != 'Deployment' || o.status.availableReplicas == o.spec.replicas)"

func deployment(ns, name string, replicas, available int64) map[string]any {
	status := map[string]any{}
	if available > 0 { // the API server omits zero
		status["availableReplicas"] = available
	}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec":     map[string]any{"replicas": replicas},
		"status":   status,
	}
}

func configMap(ns, name string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"data":     map[string]any{"k": "v"},
	}
}

func compile(t testing.TB, expr string) *gate.CEL {
	t.Helper()
	c, err := gate.CompileCEL(expr)
	if err != nil {
		t.Fatalf("CompileCEL(%q): %v", expr, err)
	}
	return c
}

func TestCELPassesWhenTrue(t *testing.T) {
	c := compile(t, allAvailable)
	r := c.Eval(context.Background(), []map[string]any{configMap("shop", "cfg"), deployment("shop", "api", 2, 2)})
	if !r.Passed || r.Err != nil || r.Gate != gate.KindCEL {
		t.Fatalf("want passed: %+v", r)
	}
	if want := allAvailable + " is true over 2 objects"; r.Output != want {
		t.Fatalf("output %q, want %q", r.Output, want)
	}
	// Numbers compare across int and double, as the API server's CEL.
	r = compile(t, "objects.all(o, o.kind != 'Deployment' || o.spec.replicas >= 1.5)").Eval(context.Background(), []map[string]any{deployment("shop", "api", 2, 2)})
	if !r.Passed {
		t.Fatalf("int against double: %+v", r)
	}
}

// A false all() names the objects that make it false; an object for
// which the predicate fails (a field it does not have) is named with the
// error, and then the gate fails with that error.
func TestCELFalseNamesTheObjects(t *testing.T) {
	c := compile(t, allAvailable)
	objs := []map[string]any{
		deployment("shop", "api", 2, 2),
		deployment("shop", "web", 3, 1),
		configMap("shop", "cfg"),
	}
	r := c.Eval(context.Background(), objs)
	if r.Passed || r.Err != nil {
		t.Fatalf("want failed without error: %+v", r)
	}
	want := allAvailable + " is false over 3 objects; for apps/v1 Deployment shop/web: false"
	if r.Output != want {
		t.Fatalf("output\n%s\nwant\n%s", r.Output, want)
	}

	// A Deployment none of whose replicas is available has no
	// status.availableReplicas: the predicate errors on it. all() is
	// false when any element is false (CEL's logic absorbs the error),
	// and both objects are named.
	objs = append(objs, deployment("shop", "db", 1, 0))
	r = c.Eval(context.Background(), objs)
	if r.Passed || r.Err != nil || !strings.Contains(r.Output, "is false over 4 objects; for apps/v1 Deployment shop/web: false; apps/v1 Deployment shop/db: no such key: availableReplicas") {
		t.Fatalf("output does not name both objects: %+v", r)
	}
	// Alone, the error is the gate's.
	r = c.Eval(context.Background(), []map[string]any{deployment("shop", "db", 1, 0)})
	if r.Passed || r.Err == nil || !strings.Contains(r.Err.Error(), "no such key: availableReplicas") {
		t.Fatalf("want an evaluation error: %+v", r)
	}
	if want := allAvailable + " failed over 1 object: no such key: availableReplicas; for apps/v1 Deployment shop/db: no such key: availableReplicas"; r.Output != want {
		t.Fatalf("output\n%s\nwant\n%s", r.Output, want)
	}

	// The same without the all() shape: the value alone.
	r = compile(t, "objects.filter(o, o.kind == 'Deployment').size() == 0").Eval(context.Background(), objs)
	if r.Passed || r.Err != nil || r.Output != "objects.filter(o, o.kind == 'Deployment').size() == 0 is false over 4 objects" {
		t.Fatalf("%+v", r)
	}
}

// More than ten objects: the first ten are named, the rest counted.
func TestCELFalseNamesTenObjects(t *testing.T) {
	var objs []map[string]any
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"} {
		objs = append(objs, deployment("shop", n, 2, 1))
	}
	r := compile(t, allAvailable).Eval(context.Background(), objs)
	if r.Passed || !strings.Contains(r.Output, "apps/v1 Deployment shop/j: false; and 2 more") || strings.Contains(r.Output, "shop/k") {
		t.Fatalf("%+v", r)
	}
}

func TestCELCompileErrorNamesTheColumn(t *testing.T) {
	for _, tc := range []struct {
		expr         string
		line, column int
		message      string
	}{
		{"objects.all(o, o.kind == )", 1, 26, "Syntax error"},
		{"objectz.all(o, true)", 1, 1, "undeclared reference to 'objectz'"},
		{"objects.all(o,\n  o.kind == 'Deployment' && o.spec.replicas >)", 2, 46, "Syntax error"},
		{"objects.all(o, o.kind.startsWith(1))", 1, 33, "found no matching overload for 'startsWith'"},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			_, err := gate.CompileCEL(tc.expr)
			var ce *gate.CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("want a CompileError, got %v", err)
			}
			if ce.Line != tc.line || ce.Column != tc.column || !strings.Contains(ce.Message, tc.message) {
				t.Fatalf("got line %d column %d %q, want line %d column %d %q", ce.Line, ce.Column, ce.Message, tc.line, tc.column, tc.message)
			}
			if !strings.HasPrefix(err.Error(), "CEL expression, line ") || !strings.Contains(ce.Report, "^") {
				t.Fatalf("error %q, report %q", err, ce.Report)
			}
		})
	}
	if _, err := gate.CompileCEL("  "); err == nil || err.Error() != "CEL expression is empty" {
		t.Fatalf("empty: %v", err)
	}
}

func TestCELMustBeBool(t *testing.T) {
	_, err := gate.CompileCEL("objects.size()")
	if err == nil || err.Error() != "CEL expression must evaluate to a bool; this one is an int" {
		t.Fatalf("got %v", err)
	}
	// A field's type is known only at evaluation: checked then.
	c := compile(t, "objects[0].spec.replicas")
	r := c.Eval(context.Background(), []map[string]any{deployment("shop", "api", 2, 2)})
	if r.Passed || r.Err == nil || r.Err.Error() != "the expression is an int, not a bool" {
		t.Fatalf("%+v", r)
	}
	// An index past the end is an error, not a panic.
	r = c.Eval(context.Background(), nil)
	if r.Passed || r.Err == nil || !strings.Contains(r.Output, "failed over 0 objects") {
		t.Fatalf("%+v", r)
	}
}

// A hostile expression stops at the cost limit with an error.
func TestCELCostLimit(t *testing.T) {
	var objs []map[string]any
	for range 100 {
		objs = append(objs, configMap("shop", "cfg"))
	}
	c := compile(t, "objects.all(a, objects.all(b, objects.all(c, a.kind == b.kind && b.kind == c.kind)))")
	r := c.Eval(context.Background(), objs)
	if r.Passed || r.Err == nil || !strings.Contains(r.Err.Error(), "cost limit exceeded") {
		t.Fatalf("want the cost limit: %+v", r)
	}
	// Naming the objects stops at the limit too.
	if !strings.Contains(r.Output, "cost limit") {
		t.Fatalf("output: %s", r.Output)
	}
	// An ended context stops evaluation.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r = compile(t, "objects.all(a, objects.all(b, a.kind == b.kind))").Eval(ctx, objs)
	if r.Passed || r.Err == nil {
		t.Fatalf("evaluated after the context ended: %+v", r)
	}
	// However small.
	r = compile(t, "true").Eval(ctx, nil)
	if r.Passed || !errors.Is(r.Err, context.Canceled) || r.Output != "true was not evaluated: context canceled" {
		t.Fatalf("evaluated after the context ended: %+v", r)
	}
}

func TestCELBadInputNeverPanics(t *testing.T) {
	c := compile(t, "objects.all(o, o.x == 1)")
	for _, objs := range [][]map[string]any{
		nil,
		{nil},
		{{"x": make(chan int)}},
		{{"x": map[int]any{1: 2}}},
	} {
		r := c.Eval(context.Background(), objs)
		if r.Passed && len(objs) > 0 {
			t.Errorf("%v: passed", objs)
		}
	}
}

// Secrets reach expressions without their data: an expression cannot
// read them, and no output carries them, plain or base64.
func TestCELSecretsHaveNoData(t *testing.T) {
	const password = "hunter2-convoy-secret"
	b64 := base64.StdEncoding.EncodeToString([]byte(password))
	secret := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{
			"namespace": "shop", "name": "db-auth",
			"annotations":   map[string]any{"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"password":"` + b64 + `"}}`, "team": "db"},
			"managedFields": []any{map[string]any{"manager": "convoy"}},
		},
		"data":       map[string]any{"password": b64},
		"stringData": map[string]any{"password": password},
		"type":       "Opaque",
	}}
	objs := gate.ObjectMaps([]*unstructured.Unstructured{secret})
	if _, ok := secret.Object["data"]; !ok {
		t.Fatal("ObjectMaps changed the object it was given")
	}
	if _, ok := secret.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]; !ok {
		t.Fatal("ObjectMaps changed the object's annotations")
	}
	r := compile(t, "objects.exists(o, has(o.data) || has(o.stringData) || has(o.metadata.managedFields) || 'kubectl.kubernetes.io/last-applied-configuration' in o.metadata.annotations)").Eval(context.Background(), objs)
	if r.Passed || r.Err != nil {
		t.Fatalf("an expression sees a Secret's data: %+v", r)
	}
	if r := compile(t, "objects.all(o, o.metadata.annotations.team == 'db' && o.type == 'Opaque')").Eval(context.Background(), objs); !r.Passed {
		t.Fatalf("the rest of the Secret is not there: %+v", r)
	}
	// Eval drops them too when given raw maps; expressions that try to
	// print them fail without them.
	for _, expr := range []string{
		"objects.all(o, int(o.data.password) > 0)",
		"objects.all(o, int(o.stringData.password) > 0)",
		"objects.all(o, int(string(base64.decode(o.data.password))) > 0)",
		"objects.all(o, int(o.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']) > 0)",
		"objects.all(o, o.data == {})",
	} {
		r := compile(t, expr).Eval(context.Background(), []map[string]any{secret.Object})
		if r.Passed {
			t.Errorf("%s passed over a Secret without data", expr)
		}
		for _, s := range []string{password, b64} {
			if strings.Contains(r.Output, s) || r.Err != nil && strings.Contains(r.Err.Error(), s) {
				t.Errorf("%s: the output carries the Secret's data: %s / %v", expr, r.Output, r.Err)
			}
		}
	}
}

// The functions docs/controller.md promises.
func TestCELFunctions(t *testing.T) {
	d := deployment("shop", "api", 2, 2)
	d["metadata"].(map[string]any)["labels"] = map[string]any{"app": "api", "tier": "Web"}
	for _, expr := range []string{
		"objects.all(o, o.?status.?replicas.orValue(0) == 0)",
		"objects.all(o, o.metadata.labels.all(k, v, k.size() > 0 && v.size() > 0))",
		"objects.all(o, o.metadata.labels.tier.lowerAscii() == 'web')",
		"objects.all(o, 'a,b'.split(',').size() == 2 && '%s-%d'.format(['x', 1]) == 'x-1')",
		"sets.contains(objects.map(o, o.kind), ['Deployment'])",
		"math.greatest(objects.map(o, o.spec.replicas)) == 2",
		"objects.all(o, base64.encode(bytes(o.metadata.name)) == 'YXBp')",
		"cel.bind(ds, objects.filter(o, o.kind == 'Deployment'), ds.size() == 1)",
		"objects.map(o, o.metadata.name).distinct() == ['api']",
		"objects.all(o, o.spec.replicas >= 1.5)",
	} {
		if r := compile(t, expr).Eval(context.Background(), []map[string]any{d}); !r.Passed {
			t.Errorf("%s: %+v", expr, r)
		}
	}
}
