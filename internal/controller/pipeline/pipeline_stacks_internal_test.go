package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/signing"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fakeStacks is the Stack side as a gate sees it: Open fails with
// openErr, or opens a Stack whose stack directory (dir, under cache)
// holds a stack whose cluster's kubeconfig does not exist.
type fakeStacks struct {
	openErr       error
	cache, dir    string
	opened, close int
}

func (f *fakeStacks) Registry(context.Context, *v1alpha1.Stack) (artifact.Registry, func(), error) {
	return artifact.Registry{}, nil, errors.New("no registry")
}

func (f *fakeStacks) VerifyKeys(context.Context, string, *v1alpha1.VerifySpec) ([]*signing.PublicKey, error) {
	return nil, errors.New("no keys")
}

func (f *fakeStacks) Open(ctx context.Context, st *v1alpha1.Stack) (*StackRun, error) {
	f.opened++
	if f.openErr != nil {
		return nil, f.openErr
	}
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return nil, err
	}
	hcl := `
cluster "far" {
  kubeconfig = "missing-kubeconfig"
}
release "app" {
  chart     = "./chart"
  namespace = "apps"
  cluster   = cluster.far
}
`
	if err := os.WriteFile(filepath.Join(f.dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		return nil, err
	}
	s, err := run.Open(ctx, run.Options{Source: run.Source{Dir: f.dir}})
	if err != nil {
		return nil, err
	}
	return &StackRun{
		Session: s,
		Message: func(err error) string { return "as the Stack says it: " + err.Error() },
		Redact:  func(s string) string { return s },
		Close:   func() { s.Close(); f.close++ },
	}, nil
}

func (f *fakeStacks) ClientAs(string) (client.Client, error) { return nil, errors.New("no client") }

func (f *fakeStacks) StripCachePaths(msg string) string {
	return strings.ReplaceAll(msg, f.cache, "<cache>")
}

// A cel gate reaches its Stacks only through Stacks: a Stack that cannot
// be opened fails the gate with why, named by Stack; one whose objects
// cannot be read fails it with the Stack's own masking and the cache's
// paths taken out, and what was opened is closed.
func TestGateThroughTheStackSide(t *testing.T) {
	p := &v1alpha1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "shop"},
		Spec: v1alpha1.PipelineSpec{Stages: []v1alpha1.Stage{{
			Name: "staging", Stacks: []v1alpha1.PipelineStackRef{{Name: "app"}},
			Gates: []v1alpha1.Gate{{CEL: "true"}},
		}}},
	}
	stacks := map[string]*v1alpha1.Stack{"app": {ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "app"}}}

	f := &fakeStacks{openErr: errors.New("spec.source: oci://r/stacks/app: not found")}
	r := &Reconciler{stacks: f}
	v := r.stageGate(context.Background(), p, 0, 0, stacks)
	if !v.Failed || v.Output != "Stack app: spec.source: oci://r/stacks/app: not found" {
		t.Fatalf("unopened Stack: %+v", v)
	}

	cache := t.TempDir()
	f = &fakeStacks{cache: cache, dir: filepath.Join(cache, "stacks", "app")}
	r = &Reconciler{stacks: f}
	v = r.stageGate(context.Background(), p, 0, 0, stacks)
	if !v.Failed || !strings.HasPrefix(v.Output, "Stack app: as the Stack says it: ") ||
		!strings.Contains(v.Output, "<cache>/stacks/app") || strings.Contains(v.Output, cache) {
		t.Fatalf("objects unread: %+v", v)
	}
	if f.opened != 1 || f.close != 1 {
		t.Errorf("opened %d, closed %d: want the run closed once", f.opened, f.close)
	}
}
