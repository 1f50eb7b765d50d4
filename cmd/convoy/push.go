package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/stacksource"
	"github.com/spf13/cobra"
)

type pushOptions struct {
	Dir, Ref string
}

func newPushCmd(s streams) *cobra.Command {
	var o pushOptions
	return &cobra.Command{
		Use:   "push DIR oci://REGISTRY/REPOSITORY:TAG",
		Short: "Package a stack directory as an OCI artifact and push it",
		Long: `Push packs the stack directory (its .hcl files, the lock file, values files)
and the local charts its releases name by relative path into one OCI artifact,
pushes it under the tag, and prints its digest. The same files give the same
digest. A Stack object of the convoy controller names the artifact in its
source (docs/controller.md).

Registry credentials come from Helm's registry config and Docker's config, as
for charts; registries on loopback addresses are spoken to over plain HTTP.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Dir, o.Ref = args[0], args[1]
			return o.Run(cmd.Context(), s)
		},
	}
}

func (o pushOptions) Run(ctx context.Context, s streams) error {
	res, err := newResolver(s, os.Getenv)
	if err != nil {
		return err
	}
	p, err := stacksource.Push(ctx, stacksource.Registry{Resolver: res}, o.Dir, o.Ref)
	var de *stacksource.DiagnosticsError
	if errors.As(err, &de) {
		return stackDiagnostics(de)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Err, "Pushed %s (%d entries, %d bytes).\n", p.Ref, p.Files, p.Size)
	fmt.Fprintln(s.Out, p.Digest)
	return nil
}

// stackDiagnostics renders a stack packing error with its source.
func stackDiagnostics(de *stacksource.DiagnosticsError) error {
	rde := &run.DiagnosticsError{Diags: de.Diags}
	if de.Config != nil {
		rde.Files = de.Config.Files
	}
	return rde
}
