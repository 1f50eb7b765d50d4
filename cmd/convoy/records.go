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
	var to, from string
	cmd := newStackCmd("migrate RELEASE | migrate --to DRIVER [RELEASE…]", "Move releases' records to another storage driver (--to), or rewrite a release's newest record without the API versions the cluster no longer serves (as helm-mapkubeapis)",
		`With --to secret|configmap|sql, migrate moves the records of the stack's
releases (or of the ones named) from the driver they are in (the stack's,
or --from) to another: every revision is copied as stored, each copy is
read back and verified (the SHA-256 of its release JSON, the decoded
release, its labels and annotations), and only then are the records where
they were removed, holding the stack lock. A move a kill interrupts is
finished by the next one, or undone by one the other way; until then no
operation writes a revision of that release (docs/storage.md, "Moving
records between drivers"). The sql driver's connection string is the
storage block's, else $HELM_DRIVER_SQL_CONNECTION_STRING. Change the
stack's storage block to the new driver afterwards.

Without --to: a release installed on an older cluster keeps, in its newest
record, the API versions its chart rendered then (policy/v1beta1
PodDisruptionBudget). convoy reads such records as their successors on its
own (docs/releases.md, "Upgrading clusters"); helm does not, and fails every
upgrade and rollback from them. migrate RELEASE rewrites the record as
helm-mapkubeapis does: the newest revision, which must be deployed, becomes
superseded, and a copy of it is written as the next revision with each
removed API version replaced by its successor (convoy's table, the stack's
api_map, --api-map) and the objects of kinds without one dropped. Nothing on
the cluster but the records changes. It shows what it will change and asks
first (--auto-approve does not ask).`,
		cobra.ArbitraryArgs, &o,
		func(ctx context.Context, args []string) error {
			if to == "" && from != "" {
				return errors.New("--from is for a move between drivers: give --to too")
			}
			if to == "" && len(args) != 1 {
				return fmt.Errorf("migrate takes one RELEASE (or, with --to, any number): %d given", len(args))
			}
			opts, err := o.writerOptions(s)
			if err != nil {
				return err
			}
			session, err := run.Open(ctx, opts)
			if err != nil {
				return err
			}
			defer session.Close()
			if to != "" {
				return moveStorage(ctx, s, session, run.StorageMoveRequest{To: to, From: from, Releases: args})
			}
			review := func(m *run.Migration) error {
				writeMigration(s, m)
				return confirm(s, autoApprove, "Write the migrated revision?")
			}
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
	cmd.Flags().StringVar(&to, "to", "", "move the records to this storage driver: secret, configmap or sql")
	cmd.Flags().StringVar(&from, "from", "", "with --to: the driver the records are in now (default: the stack's)")
	return cmd
}

// moveStorage runs a move between drivers and prints each release's
// move as it is done.
func moveStorage(ctx context.Context, s streams, session *run.Session, req run.StorageMoveRequest) error {
	req.Moved = func(m run.StorageMove) {
		for _, r := range m.Resumed {
			fmt.Fprintf(s.Out, "%s: %s.\n", m.Instance.Addr, r)
		}
		where := fmt.Sprintf("%s (namespace %s)", m.Instance.Addr, m.Instance.Namespace)
		switch m.Outcome {
		case "moved":
			fmt.Fprintf(s.Out, "%s: %d revisions moved from %s to %s, each verified:\n", where, len(m.Revisions), m.From, m.To)
			for _, r := range m.Revisions {
				fmt.Fprintf(s.Out, "  revision %d (%s): %d bytes, release JSON sha256:%s\n", r.Version, r.Status, r.Bytes, r.SHA256)
			}
		case "finished":
			fmt.Fprintf(s.Out, "%s: its records are in %s.\n", where, m.To)
		case "already":
			fmt.Fprintf(s.Out, "%s: its records are in %s already.\n", where, m.To)
		default:
			fmt.Fprintf(s.Out, "%s: no records in %s: nothing to move.\n", where, m.From)
		}
	}
	moves, err := session.MoveStorage(ctx, req)
	if err != nil {
		return err
	}
	if len(moves) > 0 {
		fmt.Fprintf(s.Out, "\nThe records are in %[1]s: plans read them there once the stack's storage block says driver = %[1]q.\n", moves[0].To)
	}
	return nil
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
