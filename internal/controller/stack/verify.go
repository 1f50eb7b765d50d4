package stack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/signing"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// verifyKeys reads the public keys of spec.verify's Secret: its key
// cosign.pub, then its other *.pub keys in name order. A missing Secret,
// one without such a key, or a key that is not a PEM ECDSA P-256 public key
// is a configError naming it (never quoting its data).
func verifyKeys(ctx context.Context, c client.Reader, ns string, v *v1alpha1.VerifySpec) ([]*signing.PublicKey, error) {
	where := fmt.Sprintf("spec.verify.secretRef: v1 Secret %s/%s", ns, v.SecretRef.Name)
	if v.Provider != v1alpha1.ProviderCosign {
		return nil, &configError{msg: fmt.Sprintf("spec.verify.provider %q: the provider is cosign", v.Provider)}
	}
	var s corev1.Secret
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: v.SecretRef.Name}, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &configError{msg: where + " not found"}
		}
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	var names []string
	for k := range s.Data {
		if strings.HasSuffix(k, ".pub") {
			names = append(names, k)
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == "cosign.pub":
			return -1
		case b == "cosign.pub":
			return 1
		}
		return strings.Compare(a, b)
	})
	if len(names) == 0 {
		return nil, &configError{msg: where + " has no key cosign.pub or *.pub (a PEM public key: cosign generate-key-pair writes cosign.pub)"}
	}
	var keys []*signing.PublicKey
	for _, n := range names {
		ks, err := signing.ParsePublicKeys(n, s.Data[n])
		if err != nil {
			return nil, &configError{msg: where + ": key " + err.Error()}
		}
		keys = append(keys, ks...)
	}
	return keys, nil
}

// admitted is a source that spec.verify admits: pinned to the digest
// whose signature verified.
type admitted struct {
	src        string
	verifiedBy string
}

// admitSource resolves the Stack's source to its digest and verifies the
// digest's signature when spec.verify asks for one; the digest is what is
// then pulled, so that a tag moved after the check is not. Without
// spec.verify the source is pulled as it is. A refusal is a
// *artifact.VerificationError, a bad spec.verify a configError.
func (r *reconciler) admitSource(ctx context.Context, st *v1alpha1.Stack, reg artifact.Registry) (admitted, error) {
	v := st.Spec.Verify
	if v == nil {
		return admitted{src: st.Spec.Source}, nil
	}
	keys, err := verifyKeys(ctx, r.reader, st.Namespace, v)
	if err != nil {
		return admitted{}, err
	}
	ref, err := artifact.ParseRef(st.Spec.Source)
	if err != nil {
		return admitted{}, &configError{msg: "spec.source: " + err.Error()}
	}
	if ref.Digest == "" {
		d, err := artifact.Resolve(ctx, reg, artifact.Ref{Repository: ref.Repository}, ref.Tag)
		if err != nil {
			return admitted{}, fmt.Errorf("spec.source: %w%s", err, credentialHint(st, err))
		}
		ref = ref.WithDigest(d)
	}
	ok, err := artifact.Verify(ctx, reg, ref, keys)
	if err != nil {
		var ve *artifact.VerificationError
		if errors.As(err, &ve) {
			return admitted{}, err
		}
		return admitted{}, fmt.Errorf("spec.verify: %w%s", err, credentialHint(st, err))
	}
	return admitted{src: ref.String(), verifiedBy: verifiedBy(ok)}, nil
}

// verifiedBy names the key that verified: the Secret's key and its
// fingerprint.
func verifiedBy(v *artifact.Verified) string {
	return v.Key.Name + " (" + v.Key.Fingerprint() + ")"
}

// verificationMessage is the condition message of a refused artifact.
func verificationMessage(st *v1alpha1.Stack, err error) string {
	return fmt.Sprintf("spec.verify (keys of v1 Secret %s/%s): %v: nothing is planned", st.Namespace, st.Spec.Verify.SecretRef.Name, err)
}

// refused turns admitSource's error into the reconcile's outcome: a
// refused artifact stalls the Stack (VerificationFailed) until its
// signature, the keys or spec.source change — looked at again each
// interval, so a signature pushed later is found; a bad spec.verify
// stalls it as Invalid; a registry that did not answer is retried.
func (r *reconciler) refused(st *v1alpha1.Stack, err error) (outcome, bool) {
	if err == nil {
		return outcome{}, false
	}
	var ve *artifact.VerificationError
	var ce *configError
	switch {
	case errors.As(err, &ve):
		return r.stall(st, v1alpha1.ReasonVerificationFailed, verificationMessage(st, err)), true
	case errors.As(err, &ce):
		return r.stall(st, v1alpha1.ReasonInvalid, err.Error()), true
	default:
		msg := err.Error()
		r.event(st, corev1.EventTypeWarning, v1alpha1.ReasonSourceFailed, "Verify", msg)
		return r.retryLater(st, v1alpha1.ReasonSourceFailed, err), true
	}
}
