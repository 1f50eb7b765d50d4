package config

import "github.com/hashicorp/hcl/v2"

// This file is what provenance (internal/stack/provenance) reads of an
// evaluated stack besides its releases: where each variable's value was
// given, and the source the stack was evaluated from. Neither holds a
// value.

// VariableGiven says how a variable's value was given.
type VariableGiven uint8

const (
	GivenDefault     VariableGiven = iota + 1 // the variable block's default
	GivenAutoFile                             // a *.auto.vars.hcl file (ValueFromAutoFile)
	GivenEnvironment                          // the chosen environment block's vars or var_files
	GivenVarFile                              // a --var-file (ValueFromNamedFile)
	GivenEnvVar                               // CONVOY_VAR_<name> (ValueFromEnvVar)
	GivenFlag                                 // --var name=value (ValueFromCLIArg)
	GivenCaller                               // the controller's spec.vars and varsFrom (ValueFromCaller)
)

// givenBy is how a raw value of the source src is given.
func givenBy(src ValueSource) VariableGiven {
	switch src {
	case ValueFromAutoFile:
		return GivenAutoFile
	case ValueFromNamedFile:
		return GivenVarFile
	case ValueFromEnvVar:
		return GivenEnvVar
	case ValueFromCLIArg:
		return GivenFlag
	case ValueFromCaller:
		return GivenCaller
	}
	return 0
}

// VariableOrigin is where the value a variable evaluated to was given:
// the value that won by precedence.
type VariableOrigin struct {
	Given VariableGiven
	// Where names it as messages do: "default", "--var",
	// "CONVOY_VAR_replicas", "spec.vars", "ConfigMap shop/vars",
	// `environment "prod"`, or a file's name as given (a --var-file's
	// path as on the command line; other files joined to the stack
	// directory).
	Where string
	// Range is where the value is written (a default, an attribute of a
	// variables file, an item of an environment's vars); nil for values
	// given as text (--var, CONVOY_VAR_*, the controller's).
	Range *hcl.Range
}

// VariableOrigin returns where the value of the variable name was given;
// false for an undeclared variable, one without a value, or a stack not
// made by Evaluate.
func (s *Stack) VariableOrigin(name string) (VariableOrigin, bool) {
	if s.ev == nil {
		return VariableOrigin{}, false
	}
	o, ok := s.ev.varOrigins[name]
	return o, ok
}

// Source is the configuration the stack was evaluated from (its blocks'
// expressions and ranges), nil for a stack not made by Evaluate. It must
// not be modified.
func (s *Stack) Source() *Config {
	if s.ev == nil {
		return nil
	}
	return s.ev.cfg
}
