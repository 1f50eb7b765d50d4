package main

import (
	"cmp"
	"context"
	"fmt"
	"os"

	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/spf13/cobra"
)

type initOptions struct {
	Stack stackFlags
	// Upgrade re-resolves every chart to the highest version its
	// constraint admits, ignoring the lock file.
	Upgrade bool
}

func newInitCmd(s streams) *cobra.Command {
	var o initOptions
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Resolve the charts of repository and registry releases, lock them and fill the chart cache",
		Long: `Init resolves every release whose chart comes from a repository block or an
oci:// reference: it picks the highest version the release's version
constraint admits, downloads the archive (and dependencies its charts/ lacks)
into the chart cache shared by all stacks, and records version and digest in
convoy.lock.hcl beside the stack. plan and apply then use exactly these
charts, offline.

Releases already in the lock file keep their locked version while it still
satisfies the constraint; --upgrade resolves them all again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), s)
		},
	}
	addStackFlags(cmd.Flags(), &o.Stack)
	cmd.Flags().BoolVar(&o.Upgrade, "upgrade", false, "resolve every chart again, ignoring the versions in the lock file")
	return cmd
}

// newResolver is the chart source resolver of the CLI: the default chart
// cache, Helm's registry config then Docker's for registry credentials.
func newResolver(s streams, getenv func(string) string) (*source.Resolver, error) {
	dir, err := source.DefaultCacheDir(getenv)
	if err != nil {
		return nil, err
	}
	return &source.Resolver{Cache: source.Cache{Dir: dir}, RegistryConfigs: registryConfigs(getenv), Warn: s.Err}, nil
}

func (o initOptions) Run(ctx context.Context, s streams) error {
	res, err := newResolver(s, os.Getenv)
	if err != nil {
		return err
	}
	src, err := o.Stack.source()
	if err != nil {
		return err
	}
	session, err := run.Open(ctx, run.Options{Source: src})
	if err != nil {
		return err
	}
	defer session.Close()
	out, err := session.Init(ctx, run.InitRequest{Upgrade: o.Upgrade, Resolver: res, Warn: s.Err})
	if err != nil {
		return err
	}
	for _, e := range out.Entries {
		switch {
		case e.Dependency != "":
			fmt.Fprintf(s.Out, "%s: %s dependency %s %s\n", e.Release, e.Chart, e.Dependency, e.Version)
		case e.Kept:
			fmt.Fprintf(s.Out, "%s: %s %s (locked)\n", e.Release, e.Chart, e.Version)
		default:
			change := ""
			if e.Was != "" {
				change = fmt.Sprintf(" (was %s)", e.Was)
			}
			fmt.Fprintf(s.Out, "%s: %s %s → %s%s\n", e.Release, e.Chart, cmp.Or(e.Constraint, "latest"), e.Version, change)
		}
	}
	if out.LockFile == "" {
		fmt.Fprintln(s.Out, "No release takes its chart from a repository or registry; nothing to lock.")
		return nil
	}
	fmt.Fprintf(s.Out, "Wrote %s (%d charts); the chart cache is %s.\n", out.LockFile, out.Charts, res.Cache.Dir)
	return nil
}
