package planner

import (
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

// Who may take a release over: the newest record's labels, the block's
// adopt and adopt_from_stack, and (the controller) the Stack's namespace.
func TestOwnershipTakeovers(t *testing.T) {
	const me = "web"
	tests := []struct {
		name      string
		labels    map[string]string
		namespace string // the planning Stack's ("": the CLI)
		adopt     bool
		from      string // adopt_from_stack
		refused   bool
		says      string // in the warnings
	}{
		{name: "ours", labels: map[string]string{release.StackLabel: me}},
		{name: "ours, in the controller", labels: map[string]string{release.StackLabel: me, release.StackNamespaceLabel: "team-a"}, namespace: "team-a"},
		{name: "ours before records named namespaces", labels: map[string]string{release.StackLabel: me}, namespace: "team-a"},
		{name: "helm's", labels: nil, refused: true, says: "adopt: installed by helm, not by a stack; apply refuses to change it unless its release block says adopt = true"},
		{name: "helm's, adopt", labels: nil, adopt: true, says: "adopt: installed by helm, not by a stack; this stack takes it over"},
		{name: "helm's, the controller", labels: nil, namespace: "team-a", refused: true, says: "installed by helm, not by a stack"},
		{name: "helm's, the controller, adopt", labels: nil, namespace: "team-a", adopt: true},
		{name: "another stack's", labels: map[string]string{release.StackLabel: "db"}, refused: true, says: `owned by stack "db"`},
		{name: "another stack's, adopt is not enough", labels: map[string]string{release.StackLabel: "db"}, adopt: true, refused: true},
		{name: "another stack's, adopt_from_stack", labels: map[string]string{release.StackLabel: "db"}, from: "db", says: `taken over from stack "db"`},
		{name: "another stack's of this namespace, adopt_from_stack", labels: map[string]string{release.StackLabel: "db", release.StackNamespaceLabel: "team-a"}, namespace: "team-a", from: "db"},
		{name: "a CLI stack's, adopt_from_stack in the controller", labels: map[string]string{release.StackLabel: "db"}, namespace: "team-a", from: "db", refused: true, says: "a Stack takes over only releases a Stack of its namespace (team-a) wrote"},
		{name: "another namespace's Stack's, adopt_from_stack", labels: map[string]string{release.StackLabel: "db", release.StackNamespaceLabel: "platform"}, namespace: "team-a", from: "db", adopt: true, refused: true,
			says: "adopt: installed by stack platform/db; a Stack of namespace team-a never takes over a release a Stack of another namespace wrote"},
		{name: "the same stack name, another namespace's Stack", labels: map[string]string{release.StackLabel: me, release.StackNamespaceLabel: "platform"}, namespace: "team-b", refused: true, says: "installed by stack platform/web"},
		{name: "let go, the CLI", labels: map[string]string{release.LetGoLabel: "old"}, says: "adopt: let go by stack old; this stack takes it over"},
		{name: "let go by a Stack of this namespace", labels: map[string]string{release.LetGoLabel: me, release.StackNamespaceLabel: "platform"}, namespace: "platform"},
		{name: "let go by a Stack of another namespace", labels: map[string]string{release.LetGoLabel: me, release.StackNamespaceLabel: "platform"}, namespace: "team-b", adopt: true, refused: true,
			says: "adopt: let go by stack platform/web; a Stack of namespace team-b never takes over"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &computer{in: Input{Stack: &config.Stack{Name: me}, StackNamespace: tt.namespace}}
			rc := &plan.ReleaseChange{}
			last := &release.Release{Name: "r", Version: 3, Labels: tt.labels, Info: &release.Info{Status: release.StatusDeployed}}
			c.ownership(rc, &config.ReleaseInstance{Adopt: tt.adopt, AdoptFromStack: tt.from}, last)
			if rc.Refused() != tt.refused {
				t.Errorf("refused %v, want %v (warnings %q)", rc.Refused(), tt.refused, rc.Warnings)
			}
			if w := strings.Join(rc.Warnings, "\n"); !strings.Contains(w, tt.says) {
				t.Errorf("warnings %q, want %q", w, tt.says)
			}
		})
	}
}
