package config_test

import (
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/stack/config"
)

func TestSetReleaseVersionsKeepsEverythingElse(t *testing.T) {
	src := `# the shop
release "web"   {
  chart   =     "charts/web"   # aligned oddly
  // the constraint, reviewed monthly
  version   =    "^1.2.0"     # keep me
  values = [
      file("web.yaml"),   # indented oddly
  ]
}

release  "api" {
	chart = "oci://r/charts/api"
	version = "1.0.0"
}

/* not rewritten: an expression */
release "db" {
  chart   = "charts/db"
  version = var.db_version
}
`
	got, diags := config.SetReleaseVersions([]byte(src), "stack.hcl", map[string]string{"web": "^2.1.0", "api": "1.4.0", "db": "3.0.0"})
	want := strings.Replace(strings.Replace(src, `"^1.2.0"`, `"^2.1.0"`, 1), `"1.0.0"`, `"1.4.0"`, 1)
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if len(diags) != 1 || diags[0].Subject == nil || diags[0].Subject.Start.Line != 19 || !strings.Contains(diags[0].Detail, `release "db"`) {
		t.Errorf("diagnostics: %v", diags)
	}
}
