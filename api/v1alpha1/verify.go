package v1alpha1

// VerifyProvider is the signature format a Stack's or Pipeline's artifacts
// are verified in.
//
// +kubebuilder:validation:Enum=cosign
type VerifyProvider string

// ProviderCosign: cosign's key-based signatures (convoy push --sign-key,
// cosign sign --key), stored under the tag sha256-<hex>.sig of the
// artifact's repository.
const ProviderCosign VerifyProvider = "cosign"

// VerifySpec admits only signed artifacts: one whose signature does not
// verify with a key of the Secret is refused (Ready=False,
// VerificationFailed) and nothing of it is planned or promoted.
type VerifySpec struct {
	// Provider is cosign.
	Provider VerifyProvider `json:"provider"`
	// SecretRef names a Secret of the object's namespace whose keys
	// cosign.pub or *.pub are PEM public keys; a signature by any of them
	// verifies.
	SecretRef LocalObjectReference `json:"secretRef"`
}
