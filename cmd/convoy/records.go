package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/convoy-sh/convoy/internal/cluster/apimap"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/safefile"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// addAPIMapFlag registers --api-map on the commands that run a stack.
func addAPIMapFlag(fs *pflag.FlagSet, path *string) {
	fs.StringVar(path, "api-map", "", "a map file of removed Kubernetes APIs in helm-mapkubeapis' shape, over convoy's table and the stack's api_map: stored revisions naming them are read as their successors (docs/releases.md, \"Upgrading clusters\")")
}

// addKubeVersionFlag registers --kube-version on the commands that plan.
func addKubeVersionFlag(fs *pflag.FlagSet, v *string) {
	fs.StringVar(v, "kube-version", "", "report the objects whose API versions this Kubernetes release (1.37) deprecates or no longer serves (default: the stack's kube_version, else the cluster's version)")
}

// readAPIMap reads and parses an --api-map file ("": none).
func readAPIMap(path string) (*apimap.Map, error) {
	if path == "" {
		return nil, nil
	}
	data, err := safefile.Read(path, 1<<20)
	if err != nil {
		return nil, fmt.Errorf("--api-map: %w", err)
	}
	m, err := apimap.Parse(data, path)
	if err != nil {
		return nil, fmt.Errorf("--api-map: %w", err)
	}
	return m, nil
}

// parseKubeVersion reads a --kube-version ("": none).
func parseKubeVersion(s string) (apimap.Version, error) {
	if s == "" {
		return apimap.Version{}, nil
	}
	v, err := apimap.ParseVersion(s)
	if err != nil {
		return v, fmt.Errorf("--kube-version: %w", err)
	}
	return v, nil
}

func newRecordsCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "records",
		Short: "Work on the release records themselves",
	}
	cmd.AddCommand(newRecordsMigrateCmd(s))
	return cmd
}

func newRecordsMigrateCmd(s streams) *cobra.Command {
	var o stackRun
	var autoApprove bool
	cmd := newStackCmd("migrate RELEASE", "Rewrite a release's newest record without the API versions the cluster no longer serves (as helm-mapkubeapis)",
		`A release installed on an older cluster keeps, in its newest record, the API
versions its chart rendered then (policy/v1beta1 PodDisruptionBudget). convoy
reads such records as their successors on its own (docs/releases.md,
"Upgrading clusters"); helm does not, and fails every upgrade and rollback
from them. migrate rewrites the record as helm-mapkubeapis does: the newest
revision, which must be deployed, becomes superseded, and a copy of it is
written as the next revision with each removed API version replaced by its
successor (convoy's table, the stack's api_map, --api-map) and the objects of
kinds without one dropped. Nothing on the cluster but the records changes.
It shows what it will change and asks first (--auto-approve does not ask).`,
		cobra.ExactArgs(1), &o,
		func(ctx context.Context, args []string) error {
			opts, err := o.writerOptions(s)
			if err != nil {
				return err
			}
			review := func(m *run.Migration) error {
				writeMigration(s, m)
				return confirm(s, autoApprove, "Write the migrated revision?")
			}
			session, err := run.Open(ctx, opts)
			if err != nil {
				return err
			}
			defer session.Close()
			m, rev, err := session.MigrateRecords(ctx, run.MigrateRequest{Release: args[0], Review: review})
			if errors.Is(err, run.ErrNothingToMigrate) {
				fmt.Fprintf(s.Out, "%s (namespace %s) revision %d names no API version the cluster no longer serves: nothing to migrate.\n", m.Name, m.Namespace, m.Revision)
				return nil
			}
			if rev != nil {
				fmt.Fprintf(s.Out, "%s revision %d written (%s); revision %d is superseded.\n", m.Name, rev.Version, rev.Status, m.Revision)
			}
			return err
		})
	cmd.Flags().BoolVar(&autoApprove, "auto-approve", false, "write without asking for confirmation (required when not on a terminal)")
	return cmd
}

// writeMigration prints what a migration changes, one object a line.
func writeMigration(s streams, m *run.Migration) {
	fmt.Fprintf(s.Out, "convoy will migrate the records of %s (namespace %s): revision %d becomes superseded and revision %d is written with:\n\n", m.Name, m.Namespace, m.Revision, m.Revision+1)
	for _, r := range m.Rewrites {
		name := r.Name
		if r.Namespace != "" {
			name = r.Namespace + "/" + r.Name
		}
		removed := "no longer served"
		if !r.Entry.RemovedIn.IsZero() {
			removed = "removed in " + r.Entry.RemovedIn.String()
		}
		where := ""
		if r.Source != "" {
			where = " (" + r.Source + ")"
		}
		if r.To == nil {
			fmt.Fprintf(s.Out, "  - %s %s%s: %s, with no successor: dropped from the record\n", r.From, name, where, removed)
			continue
		}
		fmt.Fprintf(s.Out, "  ~ %s %s%s: %s: %s → %s\n", r.From, name, where, removed, r.From.APIVersion, r.To.APIVersion)
	}
	fmt.Fprintf(s.Out, "\n%s\n\n", strings.TrimSpace(`Nothing on the cluster but the records changes. Rolling back to revision `+fmt.Sprint(m.Revision)+` or earlier afterwards restores the removed API versions.`))
}
