package ctl

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ListStackSets lists the StackSets of a namespace ("": all).
func ListStackSets(ctx context.Context, c client.Client, namespace string) ([]v1alpha1.StackSet, error) {
	var l v1alpha1.StackSetList
	if err := listIn(ctx, c, &l, namespace, "StackSet type (stacksets.convoy.dev)"); err != nil {
		return nil, err
	}
	return l.Items, nil
}

// GetStackSet reads one StackSet.
func GetStackSet(ctx context.Context, c client.Client, namespace, name string) (*v1alpha1.StackSet, error) {
	var ss v1alpha1.StackSet
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &ss); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("convoy.dev/v1alpha1 StackSet %s/%s not found", namespace, name)
		}
		return nil, fmt.Errorf("convoy.dev/v1alpha1 StackSet %s/%s: %w", namespace, name, err)
	}
	return &ss, nil
}

// PauseStackSet sets (or clears) spec.paused.
func PauseStackSet(ctx context.Context, c client.Client, namespace, name string, paused bool) error {
	ss, err := GetStackSet(ctx, c, namespace, name)
	if err != nil {
		return err
	}
	before := ss.DeepCopy()
	ss.Spec.Paused = paused
	if err := c.Patch(ctx, ss, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("convoy.dev/v1alpha1 StackSet %s/%s: %w", namespace, name, err)
	}
	return nil
}

// ReadyOf is the Ready condition's status and reason ("-" when unset).
func ReadyOf(conds []metav1.Condition) (string, string) {
	c := meta.FindStatusCondition(conds, v1alpha1.CondReady)
	if c == nil {
		return "-", "-"
	}
	return string(c.Status), c.Reason
}

// ReadyMessage is the Ready condition's message.
func ReadyMessage(conds []metav1.Condition) string {
	if c := meta.FindStatusCondition(conds, v1alpha1.CondReady); c != nil {
		return c.Message
	}
	return ""
}

// Count is "1 Stack", "3 Stacks".
func Count(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// WriteFleetPlan prints a StackSet's fleet plan (convoy show --stackset):
// its Stacks grouped by identical plan, the steps, then each Stack's
// step, cluster, digest and state.
func WriteFleetPlan(w io.Writer, ss *v1alpha1.StackSet) error {
	ready, reason := ReadyOf(ss.Status.Conditions)
	fmt.Fprintf(w, "StackSet %s/%s: Ready=%s %s, %s\n", ss.Namespace, ss.Name, ready, reason, orDash(ss.Status.Summary))
	if msg := ReadyMessage(ss.Status.Conditions); msg != "" {
		fmt.Fprintf(w, "  %s\n", msg)
	}
	fmt.Fprintln(w, "\nFleet plan:")
	if len(ss.Status.Plans) == 0 {
		fmt.Fprintln(w, "  (no Stack has a plan yet)")
	}
	for _, g := range ss.Status.Plans {
		fmt.Fprintf(w, "  %s: %s\n", Count(len(g.Stacks), "Stack", "Stacks"), g.Plan)
		fmt.Fprintf(w, "    %s\n", strings.Join(g.Stacks, ", "))
	}
	if len(ss.Status.Steps) > 0 {
		fmt.Fprintln(w, "\nSteps:")
		for _, st := range ss.Status.Steps {
			line := fmt.Sprintf("  %s: %s %s", st.Name, orDash(ShortDigest(st.Digest)), st.Phase)
			if st.Message != "" {
				line += ": " + strings.ReplaceAll(st.Message, "\n", " ")
			}
			fmt.Fprintln(w, line)
		}
	}
	if len(ss.Status.Drifted) > 0 {
		fmt.Fprintf(w, "\nEdited by hand and restored: %s\n", strings.Join(ss.Status.Drifted, ", "))
	}
	fmt.Fprintln(w, "\nStacks:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tSTEP\tCLUSTER\tDIGEST\tSTATE")
	for _, st := range ss.Status.Stacks {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", st.Name, orDash(st.Step), orDash(st.Cluster), orDash(ShortDigest(st.Digest)), orDash(st.State))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nEach Stack's plan: convoy show --stack NAME -n %s\n", ss.Namespace)
	return err
}

// ShortDigest is a digest's first 12 hex digits.
func ShortDigest(d string) string {
	d = strings.TrimPrefix(d, "sha256:")
	if len(d) > 12 {
		return d[:12]
	}
	return d
}
