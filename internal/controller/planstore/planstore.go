package planstore

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// A saved plan is stored in the Stack's plan Secret, convoy-plan-NAME. A
// plan file is compressed already (planfile); one that does not fit in a
// Secret (1 MiB of data) is split into parts, each in a Secret named by
// the part's digest (convoy-plan-NAME-<12 hex digits>), and the plan
// Secret is then the index: the parts' names and digests in order. The
// parts are written first and the index last, so an index never names a
// part not written; each part is checked against its digest when read,
// and the whole plan against the plan digest (approval is by that digest,
// however the plan is stored).

// Keys of the plan objects.
const (
	planFileKey     = "plan.cvp"
	planFileGzKey   = "plan.cvp.gz" // written by earlier controllers
	planDigestKey   = "digest"
	planPartsKey    = "parts"
	planPartKey     = "part"
	planTextKey     = "plan.txt"
	planMarkdownKey = "plan.md"
	// maxPlanFile bounds a saved plan, unpacked (a Secret holds 1 MiB
	// packed).
	maxPlanFile = 64 << 20
	// planPartSize is the most plan bytes one Secret holds: below the API
	// server's 1 MiB (1,048,576 bytes) of a Secret's data, with room for
	// its other keys.
	planPartSize = 1000 << 10
	// DefaultMaxPlanSize bounds a stored plan, compressed (--max-plan-size).
	DefaultMaxPlanSize = 32 << 20
	// Secret types of the plan objects.
	planSecretType     = "convoy.dev/plan"
	planPartSecretType = "convoy.dev/plan-part"
)

// ObjectName names the ConfigMap (plan text) and the Secret (the saved
// plan, which holds sensitive values unmasked) of a Stack.
func ObjectName(stack string) string {
	name := "convoy-plan-" + stack
	if len(name) > 253-13 {
		// Room for a part's suffix.
		sum := sha256.Sum256([]byte(stack))
		name = name[:226] + "-" + hex.EncodeToString(sum[:])[:12]
	}
	return name
}

// planPartName names the Secret of a plan's part by its digest.
func planPartName(stack, digest string) string {
	hexDigits := digest[len("sha256:"):]
	return ObjectName(stack) + "-" + hexDigits[:12]
}

// Digest identifies a saved plan file.
func Digest(file []byte) string {
	sum := sha256.Sum256(file)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// planPart is one entry of a split plan's index.
type planPart struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
	Size   int    `json:"size"`
}

// PlanTooLargeError: a plan larger than the controller stores
// (--max-plan-size).
type PlanTooLargeError struct {
	Size, Max int
}

func (e *PlanTooLargeError) Error() string {
	return fmt.Sprintf("the saved plan is %s (%d bytes, compressed), over the controller's --max-plan-size of %s: split the stack into smaller stacks (fewer releases, or charts whose CRDs are installed apart), or run the controller with a larger --max-plan-size",
		byteSize(e.Size), e.Size, byteSize(e.Max))
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// Store writes the saved plan into the Stack's plan Secret (split
// into part Secrets when it does not fit in one) and its text and
// markdown into the plan ConfigMap, all owned by the Stack. A plan over
// maxSize bytes is a *PlanTooLargeError, and nothing is written.
func Store(ctx context.Context, c client.Client, scheme *runtime.Scheme, st *v1alpha1.Stack, file []byte, digest, text, markdown string, maxSize int) error {
	if maxSize > 0 && len(file) > maxSize {
		return &PlanTooLargeError{Size: len(file), Max: maxSize}
	}
	name := ObjectName(st.Name)
	data := map[string][]byte{planFileKey: file, planDigestKey: []byte(digest)}
	var parts []planPart
	if len(file) > planPartSize {
		for off := 0; off < len(file); off += planPartSize {
			chunk := file[off:min(off+planPartSize, len(file))]
			d := Digest(chunk)
			part := planPart{Name: planPartName(st.Name, d), Digest: d, Size: len(chunk)}
			if err := writePlanPart(ctx, c, scheme, st, part, chunk); err != nil {
				return err
			}
			parts = append(parts, part)
		}
		index, err := json.Marshal(parts)
		if err != nil {
			return err
		}
		data = map[string][]byte{planPartsKey: index, planDigestKey: []byte(digest)}
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: st.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, sec, func() error {
		sec.Labels = map[string]string{"convoy.dev/stack-object": st.Name}
		sec.Type = planSecretType
		sec.Data = data
		return controllerutil.SetControllerReference(st, sec, scheme)
	}); err != nil {
		return fmt.Errorf("v1 Secret %s/%s: %w", st.Namespace, name, err)
	}
	if err := deleteOtherParts(ctx, c, st, parts); err != nil {
		return err
	}
	text = cutPlanText(text, st)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: st.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, cm, func() error {
		cm.Labels = map[string]string{"convoy.dev/stack-object": st.Name}
		cm.Data = map[string]string{planDigestKey: digest, planTextKey: text, planMarkdownKey: markdown}
		return controllerutil.SetControllerReference(st, cm, scheme)
	}); err != nil {
		return fmt.Errorf("v1 ConfigMap %s/%s: %w", st.Namespace, name, err)
	}
	return nil
}

// maxPlanText bounds the plan's text in its ConfigMap, which holds 1 MiB
// with the markdown (at most 65,536 characters).
const maxPlanText = 800 << 10

// cutPlanText cuts a plan's text longer than maxPlanText at a line's end,
// saying where the whole plan is.
func cutPlanText(text string, st *v1alpha1.Stack) string {
	if len(text) <= maxPlanText {
		return text
	}
	cut := strings.LastIndexByte(text[:maxPlanText], '\n') + 1
	return text[:cut] + fmt.Sprintf("… (%d more bytes of the plan's text: convoy show --stack %s -n %s prints the whole plan)\n", len(text)-cut, st.Name, st.Namespace)
}

// writePlanPart writes one part's Secret. A part is named by its digest:
// one that exists already holds the same bytes, unless someone changed
// it, which the write restores.
func writePlanPart(ctx context.Context, c client.Client, scheme *runtime.Scheme, st *v1alpha1.Stack, part planPart, chunk []byte) error {
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: part.Name, Namespace: st.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, sec, func() error {
		sec.Labels = map[string]string{"convoy.dev/stack-object": st.Name, "convoy.dev/plan-part": "true"}
		sec.Type = planPartSecretType
		sec.Data = map[string][]byte{planPartKey: chunk, planDigestKey: []byte(part.Digest)}
		return controllerutil.SetControllerReference(st, sec, scheme)
	}); err != nil {
		return fmt.Errorf("v1 Secret %s/%s (part of the saved plan): %w", st.Namespace, part.Name, err)
	}
	return nil
}

// deleteOtherParts deletes the Stack's part Secrets the index does not
// name (those of earlier plans).
func deleteOtherParts(ctx context.Context, c client.Client, st *v1alpha1.Stack, keep []planPart) error {
	var l metav1.PartialObjectMetadataList
	l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := c.List(ctx, &l, client.InNamespace(st.Namespace), client.MatchingLabels{"convoy.dev/stack-object": st.Name, "convoy.dev/plan-part": "true"}); err != nil {
		return fmt.Errorf("list the plan parts of Stack %s/%s: %w", st.Namespace, st.Name, err)
	}
	kept := map[string]bool{}
	for _, p := range keep {
		kept[p.Name] = true
	}
	for i := range l.Items {
		m := &l.Items[i]
		if kept[m.Name] {
			continue
		}
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace}}
		if err := c.Delete(ctx, sec); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("v1 Secret %s/%s (an old part of the saved plan): %w", m.Namespace, m.Name, err)
		}
	}
	return nil
}

// ErrSavedPlanGone: the plan Secret is gone or holds another plan.
var ErrSavedPlanGone = fmt.Errorf("the saved plan is gone")

// PartError: a part of a stored plan is missing or holds other bytes than
// its index says: the plan is refused.
type PartError struct {
	Secret string
	Msg    string
}

// Is makes a refused part what a missing plan is: the Stack plans again.
func (e *PartError) Is(target error) bool { return target == ErrSavedPlanGone }

func (e *PartError) Error() string {
	return fmt.Sprintf("v1 Secret %s (part of the saved plan): %s: the plan is refused, and planned again", e.Secret, e.Msg)
}

// Load reads the saved plan of the given digest from the plan Secret
// (and its parts).
func Load(ctx context.Context, c client.Reader, st *v1alpha1.Stack, digest string) ([]byte, error) {
	file, got, err := readStoredPlan(ctx, c, st.Namespace, st.Name)
	if err != nil {
		return nil, err
	}
	if got != digest {
		return nil, ErrSavedPlanGone
	}
	return file, nil
}

// readStoredPlan reads the plan stored for a Stack and its digest,
// checked: every part against its digest, the whole against the plan's.
func readStoredPlan(ctx context.Context, c client.Reader, namespace, stack string) ([]byte, string, error) {
	key := types.NamespacedName{Namespace: namespace, Name: ObjectName(stack)}
	var sec corev1.Secret
	if err := c.Get(ctx, key, &sec); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "", ErrSavedPlanGone
		}
		return nil, "", fmt.Errorf("v1 Secret %s: %w", key, err)
	}
	digest := string(sec.Data[planDigestKey])
	var file []byte
	switch {
	case sec.Data[planPartsKey] != nil:
		var parts []planPart
		if err := json.Unmarshal(sec.Data[planPartsKey], &parts); err != nil {
			return nil, "", fmt.Errorf("v1 Secret %s: the index of the saved plan's parts: %w", key, err)
		}
		var buf bytes.Buffer
		for _, p := range parts {
			chunk, err := readPlanPart(ctx, c, namespace, p)
			if err != nil {
				return nil, "", err
			}
			if buf.Len()+len(chunk) > maxPlanFile {
				return nil, "", fmt.Errorf("v1 Secret %s: the saved plan is larger than %d bytes", key, maxPlanFile)
			}
			buf.Write(chunk)
		}
		file = buf.Bytes()
	case sec.Data[planFileKey] != nil:
		file = sec.Data[planFileKey]
	default:
		r, err := gzip.NewReader(bytes.NewReader(sec.Data[planFileGzKey]))
		if err != nil {
			return nil, "", fmt.Errorf("v1 Secret %s: %w", key, err)
		}
		file, err = io.ReadAll(io.LimitReader(r, maxPlanFile+1))
		if err != nil || len(file) > maxPlanFile {
			return nil, "", fmt.Errorf("v1 Secret %s: the saved plan is unreadable or larger than %d bytes", key, maxPlanFile)
		}
	}
	if got := Digest(file); got != digest {
		return nil, "", fmt.Errorf("v1 Secret %s: the saved plan's digest is %s, not %s", key, got, digest)
	}
	return file, digest, nil
}

func readPlanPart(ctx context.Context, c client.Reader, namespace string, p planPart) ([]byte, error) {
	where := namespace + "/" + p.Name
	var sec corev1.Secret
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: p.Name}, &sec); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &PartError{Secret: where, Msg: "not found"}
		}
		return nil, fmt.Errorf("v1 Secret %s (part of the saved plan): %w", where, err)
	}
	chunk := sec.Data[planPartKey]
	if got := Digest(chunk); got != p.Digest {
		return nil, &PartError{Secret: where, Msg: fmt.Sprintf("its content's digest is %s, not %s as when it was written", got, p.Digest)}
	}
	return chunk, nil
}

// StoredPlan reads the saved plan stored for a Stack (convoy show
// --stack), checked against its digest, and returns it with the digest.
func StoredPlan(ctx context.Context, c client.Reader, namespace, stack string) ([]byte, string, error) {
	file, digest, err := readStoredPlan(ctx, c, namespace, stack)
	if errors.Is(err, ErrSavedPlanGone) {
		return nil, "", fmt.Errorf("convoy.dev/v1alpha1 Stack %s/%s has no stored plan (v1 Secret %s/%s not found)", namespace, stack, namespace, ObjectName(stack))
	}
	return file, digest, err
}
