package main

import (
	"context"
	"fmt"
	"os"

	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/spf13/cobra"
)

func newCacheCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "Manage the chart cache shared by all stacks",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newCacheCleanCmd(s), newCacheDirCmd(s))
	return cmd
}

type cacheCleanOptions struct{}

func newCacheCleanCmd(s streams) *cobra.Command {
	var o cacheCleanOptions
	return &cobra.Command{
		Use:   "clean",
		Short: "Remove every cached chart archive and repository index",
		Long: `Clean empties the chart cache ($CONVOY_CACHE_DIR, else the user cache
directory's convoy/charts). Stacks whose lock files name removed charts need
` + "`convoy init`" + ` again before plan or apply.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), s)
		},
	}
}

func (o cacheCleanOptions) Run(_ context.Context, s streams) error {
	dir, err := source.DefaultCacheDir(os.Getenv)
	if err != nil {
		return err
	}
	if err := (source.Cache{Dir: dir}).Clean(); err != nil {
		return fmt.Errorf("clean the chart cache %s: %w", dir, err)
	}
	fmt.Fprintf(s.Out, "Removed the chart cache %s.\n", dir)
	return nil
}

func newCacheDirCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "dir",
		Short: "Print the chart cache directory",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			dir, err := source.DefaultCacheDir(os.Getenv)
			if err != nil {
				return err
			}
			fmt.Fprintln(s.Out, dir)
			return nil
		},
	}
}
