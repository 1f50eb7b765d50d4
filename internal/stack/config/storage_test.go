package config

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStorageBlock: the stack's storage block chooses the driver, and its
// connection string (from a sensitive variable, given by an environment
// variable) is kept but never printed.
func TestStorageBlock(t *testing.T) {
	dir := t.TempDir()
	src := `stack "shop" {
  storage {
    driver     = "sql"
    connection = var.records_db
  }
}
variable "records_db" {
  sensitive = true
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	const conn = "postgres://convoy:hunter2hunter2@db.example:5432/helm"
	cfg, diags := LoadDir(dir)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	st, diags := Evaluate(context.Background(), cfg, EvalOptions{Variables: EnvVarValues([]string{"CONVOY_VAR_records_db=" + conn})})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if st.Storage == nil || st.Storage.Driver != StorageSQL || string(st.Storage.Connection) != conn {
		t.Fatalf("storage %+v", st.Storage)
	}
	b, _ := json.Marshal(st.Storage)
	for _, shown := range []string{fmt.Sprint(st.Storage), fmt.Sprintf("%+v %#v %s %q", *st.Storage, *st.Storage, st.Storage.Connection, st.Storage.Connection), string(b)} {
		if strings.Contains(shown, "hunter2") {
			t.Errorf("the connection string shows: %s", shown)
		}
	}
}
