package main

import (
	"github.com/spf13/cobra"
)

// completePlanFiles completes saved plan files (*.cvp) and directories.
func completePlanFiles(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return []string{"cvp"}, cobra.ShellCompDirectiveFilterFileExt
}
