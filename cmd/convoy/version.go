package main

import (
	"encoding/json"
	"fmt"

	"github.com/convoy-sh/convoy/internal/version"
	"github.com/spf13/cobra"
)

type versionOptions struct {
	JSON bool
}

func newVersionCmd(s streams) *cobra.Command {
	var o versionOptions
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print convoy's version, commit, commit date and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(s)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	return cmd
}

func (o versionOptions) Run(s streams) error {
	info := version.Get()
	if o.JSON {
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	}
	date := ""
	if info.Date != "" {
		date = ", " + info.Date
	}
	_, err := fmt.Fprintf(s.Out, "convoy %s (commit %s%s, %s, %s)\n", info.Version, info.Commit, date, info.GoVersion, info.Platform)
	return err
}
