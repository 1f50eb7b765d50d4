package main

import (
	"fmt"
	"os"

	"github.com/convoy-sh/convoy/internal/diagtext"
	"github.com/convoy-sh/convoy/internal/plan/view"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/safefile"
	"github.com/convoy-sh/convoy/internal/sarif"
	"github.com/convoy-sh/convoy/internal/version"
	"github.com/hashicorp/hcl/v2"
)

// sarifBase is the directory SARIF file URIs are relative to: the working
// directory, which is the repository's root in CI.
func sarifBase() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return wd
}

// writePlanSARIF writes the planned findings to path.
func writePlanSARIF(path string, res *run.Planned) error {
	o := view.SARIFOptions{ToolVersion: version.Get().Version, Base: sarifBase()}
	if ls := res.Loaded; ls != nil {
		o.StackDir = ls.Stack.Dir
		o.Block = func(name string) (hcl.Range, bool) {
			b, ok := ls.Config.Releases[name]
			if !ok {
				return hcl.Range{}, false
			}
			return b.DeclRange, true
		}
	}
	data, err := view.SARIF(res.Plan, o)
	if err != nil {
		return err
	}
	return writeSARIF(path, data)
}

// validateSARIF writes diagnostics as SARIF: one result per diagnostic,
// at its subject.
func validateSARIF(path string, diags hcl.Diagnostics) error {
	l := &sarif.Log{Tool: "convoy", ToolVersion: version.Get().Version, InformationURI: "https://github.com/convoy-sh/convoy", Base: sarifBase(),
		Rules: []sarif.Rule{
			{ID: "validate/error", Description: "The stack is not valid", Level: sarif.LevelError},
			{ID: "validate/warning", Description: "A warning about the stack", Level: sarif.LevelWarning},
		}}
	for _, d := range diagtext.JSON(diags) {
		f := sarif.Finding{Rule: "validate/warning", Level: sarif.LevelWarning, Message: d.Summary}
		if d.Severity == "error" {
			f.Rule, f.Level = "validate/error", sarif.LevelError
		}
		if d.Detail != "" {
			f.Message += ": " + d.Detail
		}
		if r := d.Range; r != nil && r.Filename != "" {
			f.Where = &sarif.Location{File: r.Filename, Line: r.Start.Line, Column: r.Start.Column, EndLine: r.End.Line, EndColumn: r.End.Column}
		}
		l.Findings = append(l.Findings, f)
	}
	data, err := l.JSON()
	if err != nil {
		return err
	}
	return writeSARIF(path, data)
}

func writeSARIF(path string, data []byte) error {
	if err := safefile.WriteAtomic(path, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
