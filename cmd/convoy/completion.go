package main

import (
	"strings"

	"github.com/convoy-sh/convoy/internal/run"
	"github.com/spf13/cobra"
)

// completePlanFiles completes saved plan files (*.cvp) and directories.
func completePlanFiles(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return []string{"cvp"}, cobra.ShellCompDirectiveFilterFileExt
}

// completeReleases completes release addresses of the stack that the
// command's -C names (loaded offline; nothing when it does not load).
// With one, only the first argument is a release.
func completeReleases(f *stackFlags, one bool) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if one && len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		src, err := f.source()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		session, err := run.Open(cmd.Context(), run.Options{Source: src})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		defer session.Close()
		ls, err := session.Loaded(false)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		var out []string
		for _, r := range ls.Stack.Releases {
			a := r.Addr.String()
			if strings.HasPrefix(a, toComplete) {
				out = append(out, a)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeEnvironments completes --env with the environment blocks of the
// stack that the command's -C names (parsed only, so a stack whose
// variables are not all set still completes; nothing when it does not
// parse).
func completeEnvironments(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	dir := "."
	if f := cmd.Flags().Lookup("dir"); f != nil {
		dir = f.Value.String()
	}
	names, err := run.EnvironmentNames(dir)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// registerEnvCompletion gives --env its completion on every command that
// has the flag.
func registerEnvCompletion(cmd *cobra.Command) {
	if cmd.Flags().Lookup("env") != nil {
		_ = cmd.RegisterFlagCompletionFunc("env", completeEnvironments)
	}
	for _, c := range cmd.Commands() {
		registerEnvCompletion(c)
	}
}
