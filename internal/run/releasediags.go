package run

import (
	"errors"

	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
	"github.com/hashicorp/hcl/v2"
)

// releaseDiagnostics gives the errors of releases that Validate's offline
// checks explain (a local chart that is not a chart, values that break the
// chart's schema) as the diagnostics Validate gives, at the same source
// ranges, so that plan, apply and render report them as validate does;
// errors that are diagnostics (at a moved block) are given as such. The
// other errors go along as diagnostics without a source; err comes back as
// it is when the checks explain none of it.
func releaseDiagnostics(ls *Loaded, charts *resolve.Charts, err error) error {
	if err == nil || ls == nil || ls.Stack == nil || ls.Config == nil {
		return err
	}
	var diags hcl.Diagnostics
	var rest []error
	for _, e := range joinedErrors(err) {
		// The planner's errors at a block of the files (a moved block's
		// rename across namespaces) keep their source.
		var d hcl.Diagnostics
		if errors.As(e, &d) && d.HasErrors() {
			diags = append(diags, d...)
			continue
		}
		if d := explainRelease(ls, charts, e); d.HasErrors() {
			diags = append(diags, d...)
			continue
		}
		rest = append(rest, e)
	}
	if !diags.HasErrors() {
		return err
	}
	for _, e := range rest {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: e.Error()})
	}
	return &DiagnosticsError{Diags: diags, Files: ls.Config.Files}
}

// explainRelease runs Validate's checks on the release an error names
// (nil when it names none).
func explainRelease(ls *Loaded, charts *resolve.Charts, err error) hcl.Diagnostics {
	var re *resolve.Error
	if !errors.As(err, &re) {
		return nil
	}
	inst := ls.Stack.Release(re.Addr)
	blk := ls.Config.Releases[re.Addr.Release.Name]
	if inst == nil || blk == nil {
		return nil
	}
	return validateRelease(charts, ls.Stack, inst, blk)
}

// joinedErrors splits errors.Join's errors (nested joins too).
func joinedErrors(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, joinedErrors(e)...)
	}
	return out
}

// renderDiagnostics is releaseDiagnostics for one rendered release.
func renderDiagnostics(ls *Loaded, charts *resolve.Charts, inst *config.ReleaseInstance, err error) error {
	if err == nil {
		return nil
	}
	var de *DiagnosticsError
	if d := releaseDiagnostics(ls, charts, resolve.WithAddr(inst.Addr, err)); errors.As(d, &de) {
		return de
	}
	return err
}
