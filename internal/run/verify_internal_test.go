package run

import (
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
)

func TestVerifyEnvironmentAndConfig(t *testing.T) {
	p := &plan.Plan{Environment: "staging", ConfigHash: "sha256:aaaaaaaaaaaaaaaaaaaaaaaa"}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"same environment", verifyEnvironment(p, "staging"), ""},
		{"another environment", verifyEnvironment(p, "production"), `the plan is for environment "staging", not environment "production": apply it with --env staging`},
		{"no environment", verifyEnvironment(&plan.Plan{}, "production"), `the plan is for no environment, not environment "production"`},
		{"same configuration", VerifyConfig(p, p.ConfigHash), ""},
		{"another configuration", VerifyConfig(p, "sha256:bbbbbbbbbbbbbbbbbbbbbbbb"), "the stack configuration (files or variable values) changed since the plan was made (sha256:aaaaaaaaaaaa, now sha256:bbbbbbbbbbbb)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == "" {
				if tc.err != nil {
					t.Fatal(tc.err)
				}
				return
			}
			if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", tc.err, tc.want)
			}
		})
	}
}
