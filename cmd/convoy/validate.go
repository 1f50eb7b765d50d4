package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/convoy-sh/convoy/internal/diagtext"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"
)

type validateOptions struct {
	Stack stackFlags
	JSON  bool
	// SARIF is a file to write the diagnostics to (SARIF 2.1.0).
	SARIF string
}

func newValidateCmd(s streams) *cobra.Command {
	var o validateOptions
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check a stack's configuration without contacting any cluster",
		Long: `Validate loads and evaluates the stack: syntax, block and attribute names,
types, references, variables and their validation rules, and the release
dependency graph. It then checks the releases against their charts, offline:
a local chart path that is not a chart, values that break a chart's
values.schema.json (local charts, and repository charts already in the chart
cache), and set or set_sensitive values Helm's --set cannot take. It exits 0
when the stack is valid and 1 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), s)
		},
	}
	addStackFlags(cmd.Flags(), &o.Stack)
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the result and diagnostics as JSON on stdout")
	cmd.Flags().StringVar(&o.SARIF, "sarif", "", "also write the diagnostics to this file as SARIF 2.1.0, each at its file, line and column")
	return cmd
}

// validateResult is the --json output.
type validateResult struct {
	Valid        bool                      `json:"valid"`
	ErrorCount   int                       `json:"error_count"`
	WarningCount int                       `json:"warning_count"`
	Diagnostics  []diagtext.JSONDiagnostic `json:"diagnostics"`
}

func (o validateOptions) Run(ctx context.Context, s streams) error {
	// A malformed --var is reported as the stack's errors are (--json too).
	var ls *run.Loaded
	src, err := o.Stack.source()
	if err == nil {
		ls, err = validate(ctx, run.Options{Source: src, ChartCache: chartCache()})
	}
	var diags hcl.Diagnostics
	var files map[string]*hcl.File
	if ls != nil {
		diags, files = ls.Warnings, ls.Config.Files
	}
	var de *run.DiagnosticsError
	switch {
	case errors.As(err, &de):
		diags, files = de.Diags, de.Files
	case err != nil:
		return err
	}
	valid := !diags.HasErrors()
	if o.SARIF != "" {
		if err := validateSARIF(o.SARIF, diags); err != nil {
			return err
		}
	}
	if o.JSON {
		res := validateResult{Valid: valid, Diagnostics: diagtext.JSON(diags)}
		for _, d := range diags {
			if d.Severity == hcl.DiagError {
				res.ErrorCount++
			} else {
				res.WarningCount++
			}
		}
		if err := writeJSON(s.Out, res); err != nil {
			return err
		}
		if !valid {
			return errSilent
		}
		return nil
	}
	if len(diags) > 0 {
		if err := writeDiagnostics(s.Err, diags, files); err != nil {
			return err
		}
	}
	if !valid {
		return errSilent
	}
	_, err = fmt.Fprintf(s.Out, "The stack %q is valid: %d release blocks, %d release instances.\n", ls.Stack.Name, len(ls.Config.Releases), len(ls.Stack.Releases))
	return err
}

// validate checks the stack offline (Session.Validate).
func validate(ctx context.Context, opts run.Options) (*run.Loaded, error) {
	session, err := run.Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer session.Close()
	return session.Validate(ctx)
}
