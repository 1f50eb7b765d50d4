package stack_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	"github.com/convoy-sh/convoy/internal/controller/planstore"
	"github.com/convoy-sh/convoy/internal/testfiles"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// crdWords make CRD descriptions that compress as real ones do (about
// five to one).
var crdWords = strings.Fields(`the a of to and in is for on that by with as this be are from at or an it not which
resource field value object name namespace spec status condition reference port service route middleware
tls certificate secret entry point provider weight sticky cookie header path prefix regex host match priority
server transport timeout retry attempts interval buffer request response body size limit rate burst average
period source criterion ip strategy depth excluded forwarded client auth basic digest realm users file
configuration kubernetes ingress gateway http tcp udp mirror mirroring percent max min default
enabled disabled optional required deprecated see more information documentation https link defines
sets specifies whether when used option allowed values list map string integer boolean number array`)

// bigCRD is a CRD of group, with props documented string fields: 2,000
// make about 570 KB, as one of traefik's larger CRDs.
func bigCRD(r *rand.Rand, group string, i, props int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things%[1]d.%[2]s
spec:
  group: %[2]s
  names: {kind: Thing%[1]d, plural: things%[1]d, singular: thing%[1]d, listKind: Thing%[1]dList}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
`, i, group)
	for p := range props {
		words := make([]string, 20+r.IntN(20))
		for k := range words {
			words[k] = crdWords[r.IntN(len(crdWords))]
		}
		fmt.Fprintf(&b, "                field%04d:\n                  type: string\n                  description: %q\n", p, strings.Join(words, " "))
	}
	return b.String()
}

// bigPlanStack writes a stack of one chart sized like traefik's: four
// CRDs (crds/) of 2.3 MB together, and a ConfigMap.
func bigPlanStack(t *testing.T, ns, group string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "stack")
	r := rand.New(rand.NewPCG(1, 2))
	files := map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: big\nversion: 0.1.0\n",
		"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  size: big
`,
	}
	for i := range 4 {
		files[fmt.Sprintf("crds/things%d.yaml", i)] = bigCRD(r, group, i, 2000)
	}
	testfiles.Write(t, filepath.Join(dir, "charts", "big"), files)
	hcl := fmt.Sprintf(`
stack "big" {
  default_namespace = %q
}
release "big" {
  chart = "./charts/big"
}
`, ns)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A Stack whose plan is over a Secret's 1 MiB plans (the plan stored in
// parts, none over the limit), is approved by the digest of the whole
// plan, and applies; convoy show --stack's reader reads it back.
func TestStackPlanOverOneMiB(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	group := strings.ReplaceAll(ns, "-", "") + ".big.example.com"
	push(t, reg, bigPlanStack(t, ns, group), "v1")
	t.Cleanup(func() {
		for i := range 4 {
			crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("things%d.%s", i, group)}}
			_ = c.Delete(context.Background(), crd)
		}
	})
	create(t, c, newStack(ns, "big", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) {
		st.Spec.Approval = v1alpha1.ApprovalManual
		st.Spec.Interval = &metav1.Duration{Duration: 10 * time.Minute}
	}))
	startController(t, ns, nil)
	st := waitStack(t, c, ns, "big", 3*time.Minute, "waiting for approval", isCond("ApprovalRequired", metav1.ConditionTrue, "ApprovalRequired"))
	digest := st.Status.Plan.Digest

	file, stored, err := planstore.StoredPlan(context.Background(), c, ns, "big")
	if err != nil || stored != digest {
		t.Fatalf("stored plan %s, %v; want %s", stored, err, digest)
	}
	var secrets corev1.SecretList
	if err := c.List(context.Background(), &secrets, client.InNamespace(ns), client.MatchingLabels{"convoy.dev/stack-object": "big"}); err != nil {
		t.Fatal(err)
	}
	parts := 0
	for _, s := range secrets.Items {
		n := 0
		for k, v := range s.Data {
			n += len(k) + len(v)
		}
		if n > 1<<20 {
			t.Errorf("v1 Secret %s/%s holds %d bytes", ns, s.Name, n)
		}
		if s.Type == "convoy.dev/plan-part" {
			parts++
		}
	}
	t.Logf("plan %s: %d bytes stored in %d Secrets (%d parts)", digest, len(file), len(secrets.Items), parts)
	if len(file) <= 1<<20 || parts < 2 {
		t.Fatalf("the plan is %d bytes in %d parts: the test's chart no longer makes a plan over 1 MiB", len(file), parts)
	}

	if _, err := ctl.Approve(context.Background(), c, ns, "big", digest); err != nil {
		t.Fatal(err)
	}
	st = waitStack(t, c, ns, "big", 3*time.Minute, "applied", isCond("Ready", metav1.ConditionTrue, "Applied"))
	if st.Status.LastAppliedPlan != digest {
		t.Fatalf("applied %s, not the approved %s", st.Status.LastAppliedPlan, digest)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := c.Get(context.Background(), types.NamespacedName{Name: "things3." + group}, &crd); err != nil {
		t.Fatalf("the chart's CRD: %v", err)
	}
}

// A plan over the controller's --max-plan-size is not stored: the Stack
// is Stalled (PlanTooLarge), naming the size and the way out.
func TestStackPlanTooLargeStalls(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", nil))
	startController(t, ns, func(o *controller.Options) { o.MaxPlanSize = 1000 })
	st := waitStack(t, c, ns, "shop", 60*time.Second, "Stalled", isCond("Stalled", metav1.ConditionTrue, v1alpha1.ReasonPlanTooLarge))
	msg := cond(st, "Stalled").Message
	for _, want := range []string{"bytes, compressed), over the controller's --max-plan-size of 1000 bytes", "split the stack", "larger --max-plan-size"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("Stalled's message %q does not say %q", msg, want)
		}
	}
	if len(st.Status.Releases) != 0 || st.Status.LastAppliedPlan != "" {
		t.Fatalf("a plan too large to store was applied:%s", describe(st))
	}
	if _, _, err := planstore.StoredPlan(context.Background(), c, ns, "shop"); err == nil {
		t.Fatal("a plan too large was stored")
	}
}
