package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestPlanReadsManyRecordsWithOneList: the request economy of records
// (issue 26). A plan of eight releases in one namespace with six of them
// changed makes two record requests for that namespace, with both of
// Helm's storage drivers: the list of the records' metadata and one list
// of the deployed records whole, no GET of a record; and its plan is the
// full refresh's, which reads the records from lists of their own. A plan
// with one release changed reads that release's record with one GET, not
// a list.
func TestPlanReadsManyRecordsWithOneList(t *testing.T) {
	cluster.Need(t)
	scaffold, err := filepath.Abs(filepath.Join("..", "..", "internal", "chart", "testdata", "charts", "scaffold"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ driver, resource string }{{"secret", "secrets"}, {"configmap", "configmaps"}} {
		t.Run(tc.driver, func(t *testing.T) {
			ns := cluster.Namespace(t)
			dir := writeStack(t, fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
variable "changed" {
  type    = number
  default = 0
}
release "app" {
  count  = 8
  name   = format("app-%%d", count.index)
  chart  = %[1]q
  wait   = false
  values = [{ replicaCount = count.index < var.changed ? 2 : 1 }]
}
`, scaffold, ns))
			base := []string{"-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--storage-driver", tc.driver}
			if code, out, errOut := runConvoy(t, append([]string{"apply", "--auto-approve", "--no-progress"}, base...)...); code != 0 {
				t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
			}
			// stats plans with var.changed = changed and returns the
			// count of each --stats entry (the planner's and the requests
			// by verb and resource).
			stats := func(changed int) map[string]int {
				t.Helper()
				code, out, errOut := runConvoy(t, append([]string{"plan", "--stats", "--var", fmt.Sprintf("changed=%d", changed)}, base...)...)
				if code != 0 {
					t.Fatalf("plan, %d changed: exit %d\n%s\n%s", changed, code, out, errOut)
				}
				line := regexp.MustCompile(`(?m)^stats: .*$`).FindString(errOut)
				counts := map[string]int{}
				for _, m := range regexp.MustCompile(`([a-z-]+(?: [a-z]+)?)=(\d+)\b`).FindAllStringSubmatch(line, -1) {
					counts[m[1]], _ = strconv.Atoi(m[2])
				}
				if counts["releases-planned-in-full"] != changed {
					t.Fatalf("plan, %d changed: %d releases planned in full, want %d\n%s", changed, counts["releases-planned-in-full"], changed, line)
				}
				t.Logf("%d changed: %s", changed, line)
				return counts
			}
			get := "get " + tc.resource // the chart makes no Secret or ConfigMap: these are records

			many := stats(6)
			if many["record-lists"] != 2 || many["record-reads"] != 0 || many[get] != 0 {
				t.Errorf("6 of 8 changed: record-lists=%d record-reads=%d %s=%d, want 2 lists (metadata, the deployed records) and no GET",
					many["record-lists"], many["record-reads"], get, many[get])
			}
			one := stats(1)
			if one["record-lists"] != 1 || one["record-reads"] != 1 || one[get] != 1 {
				t.Errorf("1 of 8 changed: record-lists=%d record-reads=%d %s=%d, want the metadata list and one GET",
					one["record-lists"], one["record-reads"], get, one[get])
			}

			if list := "list " + tc.resource; many[list] != one[list]+1 {
				t.Errorf("%s=%d with 6 changed, %d with 1: want one list more (the deployed records)", list, many[list], one[list])
			}

			// The plan that read the deployed records by list is the full
			// refresh's.
			planJSON := func(refresh string) string {
				t.Helper()
				code, out, errOut := runConvoy(t, append([]string{"plan", "--json", "--refresh", refresh, "--var", "changed=6"}, base...)...)
				if code != 0 {
					t.Fatalf("plan --refresh=%s: exit %d\n%s\n%s", refresh, code, out, errOut)
				}
				var p map[string]any
				if err := json.Unmarshal([]byte(out), &p); err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				delete(p, "created_at")
				b, _ := json.MarshalIndent(p, "", " ")
				return string(b)
			}
			if inc, full := planJSON("incremental"), planJSON("full"); inc != full {
				t.Fatalf("the incremental plan differs from the full one\nincremental:\n%s\nfull:\n%s", inc, full)
			}
		})
	}
}
