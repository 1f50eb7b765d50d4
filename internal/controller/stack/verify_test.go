package stack_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/signing"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// signingKey is a fresh P-256 key and its public half in PEM.
func signingKey(t *testing.T) (*signing.PrivateKey, []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := signing.ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := priv.Public().PEM()
	if err != nil {
		t.Fatal(err)
	}
	return priv, pub
}

func sign(t *testing.T, reg *sourcetest.Registry, tag, digest string, key *signing.PrivateKey) {
	t.Helper()
	ref := artifact.Ref{Repository: reg.Host + "/stacks/app", Tag: tag, Digest: digest}
	if _, err := artifact.Sign(context.Background(), artifact.Registry{}, ref, key); err != nil {
		t.Fatal(err)
	}
}

// copySignature puts the signatures of digest from under the signature
// tag of digest to, as anyone who may push to the repository could.
func copySignature(t *testing.T, reg *sourcetest.Registry, from, to string) {
	t.Helper()
	ctx := context.Background()
	res := &source.Resolver{}
	repo, err := res.OCIRepository(source.Repository{URL: "oci://" + reg.Host + "/stacks/app"}, reg.Host+"/stacks/app")
	if err != nil {
		t.Fatal(err)
	}
	fromTag, _ := signing.SignatureTag(from)
	toTag, _ := signing.SignatureTag(to)
	desc, rc, err := repo.FetchReference(ctx, fromTag)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.PushReference(ctx, desc, bytes.NewReader(b), toTag); err != nil {
		t.Fatal(err)
	}
}

// namedStack writes a stack of its own name with one release of that
// name in namespace ns: several of them live side by side.
func namedStack(t *testing.T, ns, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "stack")
	appChart(t, filepath.Join(dir, "charts", "app"))
	hcl := fmt.Sprintf("stack %[1]q {\n  default_namespace = %[2]q\n}\nrelease \"app\" {\n  name  = %[1]q\n  chart = \"./charts/app\"\n}\n", name, ns)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func withVerify(secret string) func(*v1alpha1.Stack) {
	return func(st *v1alpha1.Stack) {
		st.Spec.Verify = &v1alpha1.VerifySpec{Provider: v1alpha1.ProviderCosign, SecretRef: v1alpha1.LocalObjectReference{Name: secret}}
	}
}

// spec.verify admits only artifacts signed by a key of its Secret: an
// unsigned artifact, one signed by another key, and one whose signature
// tag holds another digest's signature are refused — Ready=False
// VerificationFailed naming the digest and why, nothing planned — while a
// signed one is applied. Signing the unsigned one later admits it.
func TestVerifyAdmitsOnlySignedArtifacts(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	trusted, trustedPub := signingKey(t)
	stranger, _ := signingKey(t)
	digests := map[string]string{}
	for _, name := range []string{"signed", "unsigned", "wrong", "copied"} {
		digests[name] = push(t, reg, namedStack(t, ns, name), name)
	}
	sign(t, reg, "signed", digests["signed"], trusted)
	sign(t, reg, "wrong", digests["wrong"], stranger)
	copySignature(t, reg, digests["signed"], digests["copied"])

	create(t, c, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "keys", Namespace: ns},
		Data:       map[string][]byte{"cosign.pub": trustedPub, "README": []byte("not a key")},
	})
	for _, name := range []string{"unsigned", "wrong", "copied", "signed"} {
		create(t, c, newStack(ns, name, "oci://"+reg.Host+"/stacks/app:"+name, withVerify("keys")))
	}
	startController(t, ns, nil)

	st := waitStack(t, c, ns, "signed", 90*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	if revisionsOf(st) != "signed:1:deployed" || st.Status.Source == nil ||
		st.Status.Source.Digest != digests["signed"] || !strings.HasPrefix(st.Status.Source.VerifiedBy, "cosign.pub (sha256:") {
		t.Fatalf("the signed artifact:%s\n  source %+v", describe(st), st.Status.Source)
	}
	for name, why := range map[string]string{
		"unsigned": "not signed: the repository has no signature tag sha256-",
		"wrong":    "signed by none of the keys (1 signature(s) under sha256-",
		"copied":   "the signature by cosign.pub is for " + digests["signed"] + ", not for this digest",
	} {
		st := waitStack(t, c, ns, name, 60*time.Second, "VerificationFailed", isCond("Ready", metav1.ConditionFalse, v1alpha1.ReasonVerificationFailed))
		msg := cond(st, "Ready").Message
		if !strings.Contains(msg, "oci://"+reg.Host+"/stacks/app:"+name+"@"+digests[name]) || !strings.Contains(msg, why) ||
			!strings.Contains(msg, "v1 Secret "+ns+"/keys") {
			t.Errorf("%s: Ready message %q, want the digest %s and %q", name, msg, digests[name], why)
		}
		if st.Status.Plan != nil || st.Status.Source != nil || len(st.Status.Releases) > 0 {
			t.Errorf("%s: refused, yet planned or pulled:%s", name, describe(st))
		}
	}

	// Signed afterwards, the artifact is admitted at the next look.
	sign(t, reg, "unsigned", digests["unsigned"], trusted)
	st = waitStack(t, c, ns, "unsigned", 90*time.Second, "Ready once signed", isCond("Ready", metav1.ConditionTrue, ""))
	if st.Status.Source == nil || st.Status.Source.Digest != digests["unsigned"] {
		t.Fatalf("signed later:%s", describe(st))
	}

	// A Secret without a public key is named, and stalls the Stack.
	create(t, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "nokeys", Namespace: ns}, Data: map[string][]byte{"key": []byte("x")}})
	create(t, c, newStack(ns, "nokeys", "oci://"+reg.Host+"/stacks/app:signed", withVerify("nokeys")))
	st = waitStack(t, c, ns, "nokeys", 60*time.Second, "Invalid", isCond("Stalled", metav1.ConditionTrue, "Invalid"))
	if want := "spec.verify.secretRef: v1 Secret " + ns + "/nokeys has no key cosign.pub or *.pub"; !strings.Contains(st.Status.LastError, want) {
		t.Errorf("lastError %q, want %q", st.Status.LastError, want)
	}
}

// A Pipeline with spec.verify promotes only verified digests: a newer tag
// that is not signed is not promoted, the Stack stays on the signed one.
func TestPipelineVerifyPromotesOnlySignedDigests(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	key, pub := signingKey(t)
	v1 := push(t, reg, stackDir(t, ns, "v1", ""), "1.0.0")
	sign(t, reg, "1.0.0", v1, key)
	create(t, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "keys", Namespace: ns}, Data: map[string][]byte{"release.pub": pub}})
	create(t, c, newStack(ns, "app", "", nil))
	create(t, c, &v1alpha1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: v1alpha1.PipelineSpec{
			Source:   "oci://" + reg.Host + "/stacks/app",
			Follow:   v1alpha1.Follow{Semver: ">=1.0.0"},
			Interval: &metav1.Duration{Duration: 2 * time.Second},
			Stages:   []v1alpha1.Stage{{Name: "prod", Stacks: v1alpha1.StackRefs("app")}},
			Verify:   &v1alpha1.VerifySpec{Provider: v1alpha1.ProviderCosign, SecretRef: v1alpha1.LocalObjectReference{Name: "keys"}},
		},
	})
	startController(t, ns, nil)
	waitPipeline(t, c, ns, "app", 90*time.Second, "verified 1.0.0", stageIs("prod", v1alpha1.PhaseVerified, v1))

	v2 := push(t, reg, stackDir(t, ns, "v2", ""), "1.1.0")
	p := waitPipeline(t, c, ns, "app", 60*time.Second, "VerificationFailed", func(p *v1alpha1.Pipeline) bool {
		c := meta.FindStatusCondition(p.Status.Conditions, "Ready")
		return c != nil && c.Reason == v1alpha1.ReasonVerificationFailed
	})
	msg := meta.FindStatusCondition(p.Status.Conditions, "Ready").Message
	if !strings.Contains(msg, v2) || !strings.Contains(msg, "not signed") {
		t.Errorf("Ready message %q does not name %s and why", msg, v2)
	}
	if p.Status.Latest == nil || p.Status.Latest.Digest != v1 {
		t.Errorf("latest is the unsigned digest:%s", describePipeline(p))
	}
	if st := getStack(t, c, ns, "app"); !strings.HasSuffix(st.Spec.Source, "@"+v1) {
		t.Errorf("the Stack was pinned to %s, not the signed %s", st.Spec.Source, v1)
	}

	// Signed, it is promoted.
	sign(t, reg, "1.1.0", v2, key)
	waitPipeline(t, c, ns, "app", 90*time.Second, "verified 1.1.0", stageIs("prod", v1alpha1.PhaseVerified, v2))
}

// Deleting a pruning Stack runs its charts (deletion hooks): a source that
// no longer verifies — its tag moved to an unsigned artifact — is not
// run; the deletion fails saying why, and the releases stay.
func TestVerifyGuardsAPruningDeletion(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	key, pub := signingKey(t)
	dir := namedStack(t, ns, "pruned")
	sign(t, reg, "v1", push(t, reg, dir, "v1"), key)
	create(t, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "keys", Namespace: ns}, Data: map[string][]byte{"cosign.pub": pub}})
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) {
		withVerify("keys")(st)
		st.Spec.Prune = true
	}))
	startController(t, ns, nil)
	waitStack(t, c, ns, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))

	if err := os.WriteFile(filepath.Join(dir, "extra.yaml"), []byte("moved: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	moved := push(t, reg, dir, "v1")
	deleteStack(t, c, ns, "shop")
	st := waitStack(t, c, ns, "shop", 60*time.Second, "DeletionFailed", isCond("Ready", metav1.ConditionFalse, "DeletionFailed"))
	if msg := cond(st, "Ready").Message; !strings.Contains(msg, moved+": not signed") || !strings.Contains(msg, "spec.verify") {
		t.Fatalf("DeletionFailed does not say the source is not signed:%s", describe(st))
	}
	if !deploymentExists(t, ns, "pruned") {
		t.Fatal("the release was uninstalled from an unverified source")
	}
}
