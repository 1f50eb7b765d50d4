package apply_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/run/apply"
	"github.com/convoy-sh/convoy/internal/run/apply/applytest"
	"github.com/convoy-sh/convoy/internal/sensitive"
	"github.com/convoy-sh/convoy/internal/stack/dag"
)

var (
	errWeb      = errors.New("Deployment shop/web: exceeded its progress deadline")
	errRollback = errors.New("Service shop/db: field is immutable")
)

func TestOnFailureAnAtomicRunRestoresWhatItChanged(t *testing.T) {
	var (
		deployed   = []release.Status{release.StatusDeployed}
		dbUpgraded = []release.Status{release.StatusSuperseded, release.StatusDeployed}
		// db rolled back to revision 1 as revision 3.
		dbRestored = []release.Status{release.StatusSuperseded, release.StatusSuperseded, release.StatusDeployed}
		all        = []string{"db", "docs", "api", "worker", "web"}
	)
	for _, tc := range []struct {
		name   string
		atomic bool
		setup  func(f *applytest.Engine)
		// restores are the calls after the steps', in order.
		restores   []string
		restored   []string
		restoreErr map[string]error
		records    map[string][]release.Status
	}{
		{
			name:    "not atomic: what changed stays",
			setup:   func(f *applytest.Engine) { f.Fail(applytest.OpExecute, ns, "web", errWeb) },
			records: map[string][]release.Status{"db": dbUpgraded, "docs": deployed, "api": deployed, "worker": deployed, "web": {release.StatusFailed}},
		},
		{
			name:     "atomic: installs uninstalled, upgrades rolled back, dependents first",
			atomic:   true,
			setup:    func(f *applytest.Engine) { f.Fail(applytest.OpExecute, ns, "web", errWeb) },
			restores: []string{"uninstall web", "uninstall worker", "uninstall api", "uninstall docs", "rollback db 1"},
			restored: all,
			records:  map[string][]release.Status{"db": dbRestored},
		},
		{
			name:     "atomic: a deploy that failed before recording anything is not restored",
			atomic:   true,
			setup:    func(f *applytest.Engine) { f.FailUnrecorded(ns, "web", errWeb) },
			restores: []string{"uninstall worker", "uninstall api", "uninstall docs", "rollback db 1"},
			restored: []string{"db", "docs", "api", "worker"},
			records:  map[string][]release.Status{"db": dbRestored},
		},
		{
			name:   "atomic: an upgrade is rolled back to the revision deployed before the run, not the newest",
			atomic: true,
			setup: func(f *applytest.Engine) {
				f.Seed(ns, "db", release.StatusDeployed, release.StatusFailed)
				f.Fail(applytest.OpExecute, ns, "web", errWeb)
			},
			restores: []string{"uninstall web", "uninstall worker", "uninstall api", "uninstall docs", "rollback db 1"},
			restored: all,
			records:  map[string][]release.Status{"db": {release.StatusSuperseded, release.StatusFailed, release.StatusSuperseded, release.StatusDeployed}},
		},
		{
			name:   "atomic: a restore that fails is reported and the others go on",
			atomic: true,
			setup: func(f *applytest.Engine) {
				f.Fail(applytest.OpExecute, ns, "web", errWeb)
				f.Fail(applytest.OpRollback, ns, "db", errRollback)
			},
			restores:   []string{"uninstall web", "uninstall worker", "uninstall api", "uninstall docs", "rollback db 1"},
			restored:   []string{"docs", "api", "worker", "web"},
			restoreErr: map[string]error{"db": errRollback},
			records:    map[string][]release.Status{"db": dbUpgraded},
		},
		{
			name:   "atomic: a failed install already gone is not restored",
			atomic: true,
			setup: func(f *applytest.Engine) {
				f.Fail(applytest.OpExecute, ns, "web", errWeb)
				f.Fail(applytest.OpUninstall, ns, "web", fmt.Errorf("release web: %w", release.ErrReleaseNotFound))
			},
			restores: []string{"uninstall web", "uninstall worker", "uninstall api", "uninstall docs", "rollback db 1"},
			restored: []string{"db", "docs", "api", "worker"},
			records:  map[string][]release.Status{"db": dbRestored, "web": {release.StatusFailed}},
		},
		{
			name:    "atomic without a failure: nothing restored",
			atomic:  true,
			setup:   func(*applytest.Engine) {},
			records: map[string][]release.Status{"db": dbUpgraded, "docs": deployed, "api": deployed, "worker": deployed, "web": deployed},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := applytest.New()
			steps := shop(f)
			ignore := kube.IgnoreRules{{Kind: "Deployment", Paths: []kube.Pointer{{"spec", "replicas"}}}}
			redact := sensitive.New([]string{"s3cret-password"})
			steps[0].Prepare = f.Prepare(release.Request{Name: "db", Namespace: ns, IgnoreChanges: ignore, Redact: redact})
			tc.setup(f)
			res := execute(t, context.Background(), steps, apply.ExecOptions{Atomic: tc.atomic, Parallelism: 5})

			calls := f.Calls()
			var restores []string
			for _, c := range calls[len(calls)-len(tc.restores):] {
				switch c.Op {
				case applytest.OpUninstall:
					restores = append(restores, "uninstall "+c.Name)
					if u := c.Uninstall; u.Name != c.Name || u.Namespace != ns || !u.Wait || u.RunID != "run-1" || u.KeepHistory {
						t.Errorf("restoring %s: %+v", c.Name, u)
					}
				case applytest.OpRollback:
					restores = append(restores, fmt.Sprintf("rollback %s %d", c.Name, c.Revision))
					if r := c.Rollback; r.Wait != release.WaitReady || r.RunID != "run-1" || !reflect.DeepEqual(r.IgnoreChanges, ignore) || r.Redact != redact {
						t.Errorf("restoring %s: %+v (a restore keeps the release's ignore_changes and masks as it does)", c.Name, r)
					}
				default:
					restores = append(restores, string(c.Op)+" "+c.Name)
				}
			}
			if len(calls) != len(steps)+len(tc.restores) || !slices.Equal(restores, tc.restores) {
				t.Errorf("restores %v (%d calls), want %v", restores, len(calls), tc.restores)
			}
			for _, c := range calls {
				if c.CtxErr != nil {
					t.Errorf("%s %s with a context that had ended", c.Op, c.Name)
				}
			}
			for _, id := range all {
				r := res[id]
				if r.Restored != slices.Contains(tc.restored, id) || !errors.Is(r.RestoreErr, tc.restoreErr[id]) || (r.RestoreErr == nil) != (tc.restoreErr[id] == nil) {
					t.Errorf("%s: restored %v (%v)", id, r.Restored, r.RestoreErr)
				}
				if st := f.Statuses(ns, id); !slices.Equal(st, tc.records[id]) {
					t.Errorf("%s's records %v, want %v", id, st, tc.records[id])
				}
			}
			if tc.atomic && slices.Contains(tc.restored, "db") {
				// The result holds the record the restore wrote.
				if db := res["db"].Release; db.Version != len(tc.records["db"]) || db.Info.RollbackRevision != 1 || res["db"].Status != dag.Succeeded {
					t.Errorf("db's result: %s, revision %d rolling back to %d", res["db"].Status, db.Version, db.Info.RollbackRevision)
				}
			}
			if r := res["web"]; r.Status != dag.Failed && tc.restores != nil {
				t.Errorf("web: %s", r.Status)
			}
		})
	}
}
