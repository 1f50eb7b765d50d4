package stack_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func rawStack(ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "convoy.dev/v1alpha1", "kind": "Stack",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
	return u
}

// The API server rejects what the controller could not use, naming the
// field.
func TestCRDRejectsInvalidStacks(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	src := "oci://127.0.0.1:1/stacks/app:v1"
	digest := "sha256:" + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name string
		spec map[string]any
		want string
	}{
		{"interval", map[string]any{"source": src, "interval": "five minutes"}, "spec.interval"},
		{"approval", map[string]any{"source": src, "approval": "sometimes"}, "spec.approval"},
		{"approved-plan", map[string]any{"source": src, "approvedPlan": "abc"}, "spec.approvedPlan"},
		{"allow-without-plan", map[string]any{"source": src, "allowPolicies": []any{"no_db_delete"}}, "spec.allowPolicies: Invalid value"},
		{"attempts", map[string]any{"source": src, "retry": map[string]any{"attempts": -1}}, "spec.retry.attempts"},
		{"backoff", map[string]any{"source": src, "retry": map[string]any{"backoff": "soon"}}, "spec.retry.backoff"},
		{"backoff-over-interval", map[string]any{"source": src, "interval": "1m", "retry": map[string]any{"backoff": "2m"}}, "retry.backoff is longer than interval"},
		{"var-name", map[string]any{"source": src, "vars": map[string]any{"not a name": "x"}}, "spec.vars"},
		{"source", map[string]any{"source": "https://example.com/stack"}, "spec.source"},
		{"varsfrom-kind", map[string]any{"source": src, "varsFrom": []any{map[string]any{"kind": "Pod", "name": "x"}}}, "spec.varsFrom[0].kind"},
		{"cluster-twice", map[string]any{"source": src, "clusters": []any{
			map[string]any{"name": "eu", "secretRef": map[string]any{"name": "a"}},
			map[string]any{"name": "eu", "secretRef": map[string]any{"name": "b"}},
		}}, "spec.clusters[1]"},
		{"source-secret-name", map[string]any{"source": src, "sourceSecretRef": map[string]any{"name": "Not_A_Secret"}}, "spec.sourceSecretRef.name"},
		{"verify-provider", map[string]any{"source": src, "verify": map[string]any{"provider": "notary", "secretRef": map[string]any{"name": "keys"}}}, "spec.verify.provider"},
		{"verify-secret", map[string]any{"source": src, "verify": map[string]any{"provider": "cosign"}}, "spec.verify.secretRef"},
		{"notification-secret-key", map[string]any{"source": src, "notifications": []any{
			map[string]any{"urlFrom": map[string]any{"secretKeyRef": map[string]any{"name": "chat", "key": "a key"}}},
		}}, "spec.notifications[0].urlFrom.secretKeyRef.key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Create(context.Background(), rawStack(ns, tc.name, tc.spec))
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want Invalid naming %q, got %v", tc.want, err)
			}
		})
	}
	// What the rules allow.
	ok := rawStack(ns, "valid", map[string]any{"source": src, "interval": "1h30m", "approval": "manual", "approvedPlan": digest,
		"allowPolicies": []any{"no_db_delete"}, "retry": map[string]any{"attempts": 0, "backoff": "10s"}, "vars": map[string]any{"replicas_api": "3"}})
	if err := c.Create(context.Background(), ok); err != nil {
		t.Errorf("a valid Stack: %v", err)
	}
}

// A Stack stored before the schema checked its interval stalls, naming
// the field; the controller starts and reconciles the other Stacks.
func TestABadStackStopsNoOther(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	ctx := context.Background()
	reg := sourcetest.StartRegistry(t, "", "")
	src := "oci://" + reg.Host + "/stacks/app:v1"
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")

	// The schema as it was: any interval.
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "stacks.convoy.dev"}}
	loosen := client.RawPatch(types.JSONPatchType, []byte(`[{"op": "remove", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/interval/pattern"}, {"op": "remove", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/interval/x-kubernetes-validations"}]`))
	if err := c.Patch(ctx, crd, loosen); err != nil {
		t.Fatal(err)
	}
	restore := func() error { return ctl.Install(ctx, c, ctl.InstallRequest{MinInterval: time.Second}) }
	t.Cleanup(func() {
		if err := restore(); err != nil {
			t.Errorf("restore the CRD: %v", err)
		}
	})
	bad := rawStack(ns, "bad", map[string]any{"source": src, "interval": "five minutes"})
	var createErr error
	devtest.Eventually(t, 30*time.Second, func() bool {
		createErr = c.Create(ctx, bad.DeepCopy())
		return createErr == nil
	}, func() string { return fmt.Sprintf("the loosened schema still rejects the Stack: %v", createErr) })
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	create(t, c, newStack(ns, "good", src, nil))

	startController(t, ns, nil)
	st := waitStack(t, c, ns, "bad", 60*time.Second, "Stalled", isCond("Stalled", metav1.ConditionTrue, "Invalid"))
	if msg := cond(st, "Stalled").Message; !strings.Contains(msg, `spec.interval: time: invalid duration "five minutes"`) {
		t.Errorf("the bad Stack's condition: %s", msg)
	}
	waitStack(t, c, ns, "good", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	// convoy's Stack commands list them both.
	l, err := ctl.ListStacks(ctx, c, ns)
	if err != nil || len(l) != 2 {
		t.Fatalf("list Stacks: %d, %v", len(l), err)
	}
	var stored v1alpha1.Stack
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "bad"}, &stored); err != nil || stored.Spec.DecodeError() == nil {
		t.Fatalf("the bad Stack: %v, decode error %v", err, stored.Spec.DecodeError())
	}
}
