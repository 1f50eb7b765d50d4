package plan

import (
	"time"

	"github.com/convoy-sh/convoy/internal/chart/postrender"
)

// ReleaseSettings are how apply deploys a release: the release request the
// plan was computed with, without the chart (the rendered payload holds
// what gets recorded) and without anything that executes.
type ReleaseSettings struct {
	// Values are the user-supplied values (stored as the record's config).
	Values          map[string]any
	CreateNamespace bool `json:",omitempty"`
	Wait            Wait `json:",omitempty"`
	// Timeout bounds each wait; 0 means Helm's default.
	Timeout       time.Duration `json:",omitempty"`
	Atomic        bool          `json:",omitempty"`
	CleanupOnFail bool          `json:",omitempty"`
	HistoryMax    int           `json:",omitempty"`
	DisableHooks  bool          `json:",omitempty"`
	TakeOwnership bool          `json:",omitempty"`
	ExpandClaims  bool          `json:",omitempty"`
	// IgnoreChanges are fields left to other field managers, applied only
	// when their object is created.
	IgnoreChanges []IgnoreRule `json:",omitempty"`
	// PostRender is what changed the rendered manifests (already applied
	// to the payload; kept for what apply re-renders).
	PostRender postrender.Spec `json:",omitzero"`
	// Labels are extra labels on the release records (convoy.dev/stack).
	Labels map[string]string `json:",omitempty"`
	// Fingerprint labels the record (release.FingerprintLabel).
	Fingerprint string `json:",omitempty"`
	// CRDs is the release's crds policy: "" (create, Helm's), "skip" or
	// "create_replace".
	CRDs string `json:",omitempty"`
}

// Wait is how a deploy waits for its objects.
type Wait string

// Wait modes.
const (
	WaitNone         Wait = ""               // returns once applied
	WaitReady        Wait = "ready"          // every object ready (--wait)
	WaitReadyAndJobs Wait = "ready-and-jobs" // and Jobs complete (--wait-for-jobs)
)

// IgnoreRule leaves fields of matching objects to other field managers.
type IgnoreRule struct {
	Kind string
	// Name is a glob; "" matches every name.
	Name string `json:",omitempty"`
	// Paths are the fields, each as its path segments.
	Paths [][]string
}

// UninstallSettings are how apply uninstalls a release.
type UninstallSettings struct {
	DisableHooks bool `json:",omitempty"`
	// Wait waits until the deleted objects are gone.
	Wait bool `json:",omitempty"`
	// Timeout bounds each wait; 0 means Helm's default.
	Timeout time.Duration `json:",omitempty"`
}
