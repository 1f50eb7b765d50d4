package plan

// ClaimExpansion is a live PersistentVolumeClaim of a StatefulSet that
// apply resizes to its volumeClaimTemplates entry's storage request
// (expand_claims): a StatefulSet never resizes its claims itself.
type ClaimExpansion struct {
	Ref ObjectRef `json:"ref"`
	// StatefulSet is the StatefulSet whose template made the claim.
	StatefulSet ObjectRef `json:"statefulset"`
	// StorageClass allows volume expansion (allowVolumeExpansion: true).
	StorageClass string `json:"storage_class"`
	// From and To are spec.resources.requests.storage now and after.
	From string `json:"from"`
	To   string `json:"to"`
}
