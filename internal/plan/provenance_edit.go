package plan

import (
	"fmt"
	"slices"
	"strings"
)

// Edit is where a user changes an input: the input by the name people know
// it ("var.replicas", "values image.tag", "chart 1.4.0 → 1.5.0",
// "drift (kubectl-scale)") and where its value is written.
type Edit struct {
	Input  string     `json:"input"`
	Kind   OriginKind `json:"kind"`
	Source *Source    `json:"source,omitempty"`
}

func (e Edit) String() string {
	if s := e.Source.String(); s != "" {
		return e.Input + " (" + s + ")"
	}
	return e.Input
}

// String is the source as printed: "prod.auto.vars.hcl:1",
// "stack.hcl:12:5", "CONVOY_VAR_tag", "--var"; "" for none.
func (s *Source) String() string {
	switch {
	case s == nil:
		return ""
	case s.File != "" && s.Column > 0:
		return fmt.Sprintf("%s:%d:%d", s.File, s.Line, s.Column)
	case s.File != "" && s.Line > 0:
		return fmt.Sprintf("%s:%d", s.File, s.Line)
	case s.File != "":
		return s.File
	case s.Env != "":
		return s.Env
	}
	return s.Flag
}

// Edits are the innermost origins of o, those a user edits: Via followed
// down to the origins that read nothing further, each named by the
// nearest variable, local or release output above it (a variable's value
// is given in a file, the environment or a flag: the edit is
// "var.replicas (prod.auto.vars.hcl:1)"). An origin without Via is its
// own edit.
func (o Origin) Edits() []Edit {
	var out []Edit
	var walk func(o Origin, name string)
	walk = func(o Origin, name string) {
		switch o.Kind {
		case OriginVariable, OriginLocal, OriginOutput:
			name = o.Input
		}
		if len(o.Via) == 0 {
			in := o.Input
			if name != "" && valueSource(o.Kind) {
				in = name
			}
			e := Edit{Input: in, Kind: o.Kind, Source: o.Source}
			if !slices.ContainsFunc(out, func(x Edit) bool { return x.String() == e.String() }) {
				out = append(out, e)
			}
			return
		}
		for _, v := range o.Via {
			walk(v, name)
		}
	}
	walk(o, "")
	return out
}

// valueSource reports whether k is where a variable's value was given.
func valueSource(k OriginKind) bool {
	switch k {
	case OriginVarDefault, OriginAutoVarFile, OriginEnvironment, OriginVarFile, OriginEnv, OriginFlag, OriginVarsFrom:
		return true
	}
	return false
}

// ProvenanceText is the short note the text and markdown views print after
// a changed field: "← var.replicas (prod.auto.vars.hcl:1)", the edits of
// each origin; "" when the change names none.
func ProvenanceText(c *Change) string {
	if c == nil || len(c.Provenance) == 0 {
		return ""
	}
	var parts []string
	for _, o := range c.Provenance {
		for _, e := range o.Edits() {
			if s := e.String(); !slices.Contains(parts, s) {
				parts = append(parts, s)
			}
		}
	}
	if c.ProvenanceJoint {
		return "← together: " + strings.Join(parts, " + ")
	}
	return "← " + strings.Join(parts, ", ")
}
