package config

import (
	"fmt"
	"path/filepath"
	"regexp"

	"github.com/hashicorp/hcl/v2"
)

// labelValueRE is a Kubernetes label value (at most 63 characters): the
// stack's identity is the convoy.dev/stack label of its release records and
// selects them, so a name that is not one would fail every list.
var labelValueRE = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)

const maxLabelValue = 63

// stackIdentity names the stack: the stack block's label, else the base
// name of the directory's absolute, cleaned path (so that `-C .` and
// `-C ../mini` name the same stack "mini"). The name, with the chosen
// environment (Stack.ID), must be a label value; when it is not the
// diagnostic points at what chose it: the stack block, the environment
// block, or the directory.
func (e *evaluator) stackIdentity() (string, hcl.Diagnostics) {
	name, subject, from := "", (*hcl.Range)(nil), ""
	if sb := e.cfg.Stack; sb != nil {
		name, subject, from = sb.Name, sb.LabelRange.Ptr(), "The stack block's label"
	} else {
		dir, err := filepath.Abs(e.cfg.Dir)
		if err != nil {
			dir = filepath.Clean(e.cfg.Dir)
		}
		name = filepath.Base(dir)
		from = fmt.Sprintf("A stack without a stack block is named after its directory, %s, and its name", dir)
	}
	if !isLabelValue(name) {
		return name, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid stack name",
			Detail: fmt.Sprintf("%s %q is not a valid stack name: it labels the stack's release records, so it must be at most %d letters, digits, \"-\", \"_\" and \".\", starting and ending with a letter or digit. %s",
				from, name, maxLabelValue, nameFix(e.cfg.Stack != nil)),
			Subject: subject,
		}}
	}
	id := (&Stack{Name: name, Environment: e.envName}).ID()
	if !isLabelValue(id) {
		var subject *hcl.Range
		if env := e.cfg.Environments[e.envName]; env != nil {
			subject = env.DeclRange.Ptr()
		}
		return name, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid stack name",
			Detail: fmt.Sprintf("The environment %q of stack %q deploys as %q, which is not a valid stack name: it labels the release records, so it must be at most %d letters, digits, \"-\", \"_\" and \".\", starting and ending with a letter or digit. Shorten the stack or environment name.",
				e.envName, name, id, maxLabelValue),
			Subject: subject,
		}}
	}
	return name, nil
}

func isLabelValue(s string) bool {
	return len(s) <= maxLabelValue && labelValueRE.MatchString(s)
}

func nameFix(hasBlock bool) string {
	if hasBlock {
		return "Change the label."
	}
	return `Name the stack with a stack block: stack "NAME" {}.`
}
