// Package util holds the head of a manifest as Helm's sorter reads it. It
// lives in a package named "util" because the type name leaks into YAML
// errors ("... into Go value of type util.SimpleHead"); parity needs it.
package util

// SimpleHead is the part of a rendered document the sorter needs.
type SimpleHead struct {
	Version  string `json:"apiVersion"`
	Kind     string `json:"kind,omitempty"`
	Metadata *struct {
		Name string `json:"name"`
		// Namespace is any so that it never adds a decoding error Helm lacks.
		Namespace   any               `json:"namespace"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata,omitempty"`
}
