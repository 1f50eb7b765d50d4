package stack_test

import (
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A Stack that cannot progress until someone changes it stalls (kstatus:
// Stalled), and says where the fault is.
func TestStalledNamesTheFault(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	src := "oci://" + reg.Host + "/stacks/app:v1"
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	create(t, c, newStack(ns, "missing", src, func(st *v1alpha1.Stack) {
		st.Spec.VarsFrom = []v1alpha1.VarsFrom{{Kind: "Secret", Name: "nope"}, {Kind: "ConfigMap", Name: "optional", Optional: true}}
	}))
	create(t, c, newStack(ns, "undeclared", src, func(st *v1alpha1.Stack) {
		st.Spec.Vars = map[string]string{"replicas": "3"}
	}))
	create(t, c, newStack(ns, "nosource", "oci://"+reg.Host+"/stacks/none:v1", nil))
	startController(t, ns, nil)
	for name, want := range map[string]string{
		"missing":    "v1 Secret " + ns + "/nope not found",
		"undeclared": `spec.vars sets "replicas", but the stack declares no variable of that name`,
	} {
		st := waitStack(t, c, ns, name, 60*time.Second, "Stalled", isCond("Stalled", metav1.ConditionTrue, "Invalid"))
		if !strings.Contains(cond(st, "Stalled").Message, want) || st.Status.LastError == "" || cond(st, "Ready").Status != metav1.ConditionFalse {
			t.Errorf("Stack %s:%s\nwant %q", name, describe(st), want)
		}
	}
	st := waitStack(t, c, ns, "nosource", 60*time.Second, "SourceFailed", isCond("Ready", metav1.ConditionFalse, "SourceFailed"))
	if cond(st, "Reconciling") == nil || !strings.Contains(st.Status.LastError, "spec.source: oci://"+reg.Host+"/stacks/none:v1") {
		t.Errorf("missing source:%s", describe(st))
	}
}
