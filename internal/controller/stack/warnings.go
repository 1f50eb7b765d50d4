package stack

import (
	"fmt"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/stack/config"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CondWarning says what in the Stack's spec works but should change: True
// with the reason of the first warning and every warning's message, or
// absent.
const CondWarning = "Warning"

// Warning reasons.
const (
	// ReasonIntervalClamped: spec.interval is below --min-interval.
	ReasonIntervalClamped = "IntervalClamped"
	// ReasonSensitiveVars: spec.vars sets variables the stack declares
	// sensitive, in plain text on the Stack.
	ReasonSensitiveVars = "SensitiveVars"
)

// warning is one thing CondWarning says.
type warning struct{ reason, msg string }

// setWarnings records the warnings of a reconcile in CondWarning.
func setWarnings(st *v1alpha1.Stack, ws []warning) {
	if len(ws) == 0 {
		removeCond(st, CondWarning)
		return
	}
	msgs := make([]string, len(ws))
	for i, w := range ws {
		msgs[i] = w.msg
	}
	setCond(st, CondWarning, metav1.ConditionTrue, ws[0].reason, strings.Join(msgs, "; "))
}

// sensitiveVarsWarning names the variables spec.vars sets in plain text
// that the stack declares sensitive ("": none).
func sensitiveVarsWarning(st *v1alpha1.Stack, vars map[string]*config.Variable) string {
	var names []string
	for name := range st.Spec.Vars {
		if v := vars[name]; v != nil && v.Sensitive {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	what := "variable " + names[0] + " is"
	if len(names) > 1 {
		what = "variables " + strings.Join(names, ", ") + " are"
	}
	return fmt.Sprintf("spec.vars: %s declared sensitive but set in plain text on the Stack (readable by anyone who may read Stacks): give them with spec.varsFrom from a Secret (kind: Secret)", what)
}
