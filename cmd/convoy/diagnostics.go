package main

import (
	"encoding/json"
	"io"
	"os"

	"github.com/convoy-sh/convoy/internal/diagtext"
	"github.com/hashicorp/hcl/v2"
)

// writeDiagnostics renders diagnostics with their source; colour only when
// w is a terminal and NO_COLOR is unset.
func writeDiagnostics(w io.Writer, diags hcl.Diagnostics, files map[string]*hcl.File) error {
	return diagtext.Write(w, diags, files, useColor(w))
}

// useColor says whether to colour output written to w.
func useColor(w io.Writer) bool {
	if _, ok := os.LookupEnv("NO_COLOR"); ok {
		return false
	}
	f, ok := fileOf(w)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func writeJSON(w io.Writer, v interface{}) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
