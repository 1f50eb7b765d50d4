package deploy_test

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/deploy"
	"github.com/convoy-sh/convoy/internal/chart"
	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// docs decodes a multi-document YAML into maps, by kind/name.
func docs(t *testing.T, text []byte) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(text), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatal(err)
		}
		if len(m) == 0 {
			continue
		}
		name, _ := m["metadata"].(map[string]any)["name"].(string)
		out[m["kind"].(string)+"/"+name] = m
	}
}

// The chart installs the approval policies and user roles of `convoy
// controller install`, named after the release: a release named convoy
// installs the very same objects, another release its own (so that charts
// of two shards do not claim one object); both can be left out.
func TestChartInstallsTheApprovalPolicies(t *testing.T) {
	ch, err := chart.Load("chart/convoy-controller")
	if err != nil {
		t.Fatal(err)
	}
	render := func(release string, values map[string]any) map[string]map[string]any {
		r, err := chart.Render(ch, chart.RenderOptions{ReleaseName: release, Namespace: "ops", UserValues: values})
		if err != nil {
			t.Fatal(err)
		}
		var all []byte
		for _, m := range r.Manifests {
			all = append(all, []byte("---\n"+m.Content+"\n")...)
		}
		return docs(t, all)
	}
	want := docs(t, deploy.ApprovalPolicy)
	for k, v := range docs(t, deploy.RBAC) {
		if k == "ClusterRole/convoy-editor" || k == "ClusterRole/convoy-approver" {
			want[k] = v
		}
	}
	if len(want) != 8 {
		t.Fatalf("deploy/ has %d approval policies, bindings and user roles, want 8: %v", len(want), want)
	}
	got := render("convoy", nil)
	for k, w := range want {
		if !reflect.DeepEqual(got[k], w) {
			t.Errorf("the chart's %s differs from deploy/'s:\n%v\nwant\n%v", k, got[k], w)
		}
	}
	other := render("convoy-a", nil)
	for k := range want {
		renamed := strings.Replace(k, "/convoy-", "/convoy-a-", 1)
		if other[renamed] == nil {
			t.Errorf("release convoy-a renders no %s", renamed)
		}
	}
	if b := other["ValidatingAdmissionPolicyBinding/convoy-a-stack-approval"]; b["spec"].(map[string]any)["policyName"] != "convoy-a-stack-approval" {
		t.Errorf("release convoy-a binds another policy: %v", b)
	}
	off := render("convoy", map[string]any{"approvalPolicy": map[string]any{"create": false}, "rbac": map[string]any{"userRoles": false}})
	for k := range want {
		if off[k] != nil {
			t.Errorf("%s rendered with approvalPolicy.create and rbac.userRoles false", k)
		}
	}
}

// convoy-editor edits Stacks and Pipelines but may not approve;
// convoy-approver may approve, and write the approval it records.
func TestUserRoles(t *testing.T) {
	roles := map[string]rbacv1.ClusterRole{}
	for k, m := range docs(t, deploy.RBAC) {
		if !strings.HasPrefix(k, "ClusterRole/") {
			continue
		}
		b, _ := yaml.Marshal(m)
		var r rbacv1.ClusterRole
		if err := yaml.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		roles[r.Name] = r
	}
	may := func(role, resource, verb string) bool {
		for _, rule := range roles[role].Rules {
			if slices.Contains(rule.APIGroups, "convoy.dev") && slices.Contains(rule.Resources, resource) && (slices.Contains(rule.Verbs, verb) || slices.Contains(rule.Verbs, "*")) {
				return true
			}
		}
		return false
	}
	for _, res := range []string{"stacks", "pipelines"} {
		for _, verb := range []string{"create", "update", "patch", "delete"} {
			if !may("convoy-editor", res, verb) {
				t.Errorf("convoy-editor may not %s %s", verb, res)
			}
		}
		if may("convoy-editor", res, "approve") {
			t.Errorf("convoy-editor may approve %s", res)
		}
		for _, verb := range []string{"approve", "get", "patch"} {
			if !may("convoy-approver", res, verb) {
				t.Errorf("convoy-approver may not %s %s", verb, res)
			}
		}
	}
	// convoy stackset approve reads the groups of plans in its status.
	if !may("convoy-approver", "stacksets", "get") || !may("convoy-approver", "stacksets", "approve") || may("convoy-approver", "stacksets", "update") {
		t.Errorf("convoy-approver should read StackSets, not edit them: %+v", roles["convoy-approver"].Rules)
	}
}
