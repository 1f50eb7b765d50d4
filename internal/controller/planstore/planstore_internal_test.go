package planstore

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func incompressible(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// secretsOf lists the Secrets of a namespace, by name, with their data's
// size.
func secretsOf(t *testing.T, c client.Client, ns string) map[string]int {
	t.Helper()
	var l corev1.SecretList
	if err := c.List(context.Background(), &l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, s := range l.Items {
		n := 0
		for k, v := range s.Data {
			n += len(k) + len(v)
		}
		out[s.Name] = n
	}
	return out
}

// A plan over a Secret's 1 MiB is stored split into parts named by their
// digests, each under the limit; it reads back whole, checked against its
// digest; the next plan's store deletes the parts it no longer names; a
// part changed since it was written is refused (the Stack plans again);
// a plan over the maximum is refused before anything is written.
func TestStorePlanSplitsWhatASecretCannotHold(t *testing.T) {
	s, err := ctl.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).Build()
	ctx := context.Background()
	st := &v1alpha1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web", UID: "u1"}}
	big := incompressible(2_500_000, 1)
	d := Digest(big)
	// The plan's text is as long as the plan: cut in the ConfigMap.
	text := strings.Repeat("+ spec.versions[0].schema.openAPIV3Schema.description: a field\n", 30_000)
	if err := Store(ctx, c, s, st, big, d, text, "md", DefaultMaxPlanSize); err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := c.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "convoy-plan-web"}, &cm); err != nil {
		t.Fatal(err)
	}
	if got := cm.Data[planTextKey]; len(got) > 900<<10 || !strings.HasSuffix(got, "convoy show --stack web -n apps prints the whole plan)\n") || !strings.HasPrefix(text, got[:len(got)-200]) {
		t.Fatalf("the plan's text in its ConfigMap: %d bytes, ending %q", len(got), got[len(got)-200:])
	}
	secrets := secretsOf(t, c, "apps")
	if len(secrets) != 4 {
		t.Fatalf("Secrets %v, want the index and 3 parts", secrets)
	}
	for name, n := range secrets {
		if n > 1<<20 {
			t.Errorf("v1 Secret apps/%s holds %d bytes, over 1 MiB", name, n)
		}
	}
	got, err := Load(ctx, c, st, d)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("read back %d bytes (want %d), %v", len(got), len(big), err)
	}

	// A smaller plan: one Secret, the old parts deleted.
	small := []byte("a small plan")
	if err := Store(ctx, c, s, st, small, Digest(small), "text", "md", DefaultMaxPlanSize); err != nil {
		t.Fatal(err)
	}
	if secrets := secretsOf(t, c, "apps"); len(secrets) != 1 {
		t.Fatalf("Secrets after a small plan: %v", secrets)
	}
	if got, err := Load(ctx, c, st, Digest(small)); err != nil || !bytes.Equal(got, small) {
		t.Fatalf("small plan: %q, %v", got, err)
	}

	// A part changed since: refused, as a plan that is gone.
	if err := Store(ctx, c, s, st, big, d, "text", "md", DefaultMaxPlanSize); err != nil {
		t.Fatal(err)
	}
	var part corev1.Secret
	name := planPartName("web", Digest(big[planPartSize:2*planPartSize]))
	if err := c.Get(ctx, types.NamespacedName{Namespace: "apps", Name: name}, &part); err != nil {
		t.Fatal(err)
	}
	part.Data[planPartKey][10] ^= 0xff
	if err := c.Update(ctx, &part); err != nil {
		t.Fatal(err)
	}
	_, err = Load(ctx, c, st, d)
	var pe *PartError
	if !errors.As(err, &pe) || !errors.Is(err, ErrSavedPlanGone) || !strings.Contains(err.Error(), "apps/"+name) {
		t.Fatalf("a changed part: %v", err)
	}

	// Over the maximum: refused, naming the size and the way out.
	err = Store(ctx, c, s, &v1alpha1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "huge", UID: "u2"}}, big, d, "", "", 2<<20)
	var tl *PlanTooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "2.4 MiB") || !strings.Contains(err.Error(), "--max-plan-size of 2.0 MiB") || !strings.Contains(err.Error(), "split the stack") {
		t.Fatalf("a plan over the maximum: %v", err)
	}
	if secrets := secretsOf(t, c, "other"); len(secrets) != 0 {
		t.Fatalf("a plan over the maximum wrote %v", secrets)
	}
}
