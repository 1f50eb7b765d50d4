package config

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// This file is the source side of variable values: the raw values the
// edge (the command line, the controller) collects and Evaluate turns into
// typed values. Nothing here reads the process environment; the caller
// hands it over.

// ValueSource says where a raw variable value came from. The sources are
// declared in order of precedence, lowest first: a value from a later
// source wins. The chosen environment block's var_files and vars come
// between ValueFromAutoFile and ValueFromNamedFile; a variable's default
// comes before them all.
type ValueSource int

const (
	// ValueFromAutoFile is a *.auto.vars.hcl file of the stack directory.
	ValueFromAutoFile ValueSource = iota + 1
	// ValueFromNamedFile is a --var-file.
	ValueFromNamedFile
	// ValueFromEnvVar is a CONVOY_VAR_<name> environment variable.
	ValueFromEnvVar
	// ValueFromCLIArg is a --var name=value.
	ValueFromCLIArg
	// ValueFromCaller is set by the program running the stack: the
	// controller's spec.vars and varsFrom ConfigMaps and Secrets.
	ValueFromCaller
)

var valueSourceNames = map[ValueSource]string{
	ValueFromAutoFile:  "auto-file",
	ValueFromNamedFile: "var-file",
	ValueFromEnvVar:    "env",
	ValueFromCLIArg:    "var",
	ValueFromCaller:    "caller",
}

func (s ValueSource) String() string {
	if n, ok := valueSourceNames[s]; ok {
		return n
	}
	return fmt.Sprintf("ValueSource(%d)", int(s))
}

// MarshalText names the source (saved plans record it).
func (s ValueSource) MarshalText() ([]byte, error) {
	if _, ok := valueSourceNames[s]; !ok {
		return nil, fmt.Errorf("invalid variable value source %d", int(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads a name written by MarshalText.
func (s *ValueSource) UnmarshalText(b []byte) error {
	for src, n := range valueSourceNames {
		if n == string(b) {
			*s = src
			return nil
		}
	}
	return fmt.Errorf("unknown variable value source %q", b)
}

// RawValue is a variable value as collected, before evaluation: either one
// variable's value as text (Name set), or a whole variables file (Name "",
// File its content) that Evaluate parses as HCL. Build them with
// VariableValue and VariablesFile.
type RawValue struct {
	Source ValueSource
	// Where names the origin in messages: "--var", "CONVOY_VAR_replicas",
	// "spec.vars", "ConfigMap shop/vars"; for a file, its name, which the
	// ranges of its diagnostics carry.
	Where string
	// Name is the variable a single value sets.
	Name string `json:",omitempty"`
	// Text is a single value as written: values of primitive types are
	// converted from it, others are parsed as an HCL expression.
	Text string `json:",omitempty"`
	// File is a variables file's content.
	File []byte `json:",omitempty"`
	// Sensitive marks the value sensitive whatever the variable's
	// declaration says (the controller's values from Secrets).
	Sensitive bool `json:",omitempty"`
}

// RawValues are the variable values of a run, in the order they were
// given. Evaluate applies them by the precedence of their sources and, for
// one source, in this order: the last value of a variable wins.
type RawValues []RawValue

// VariableValue is one variable's value as text.
func VariableValue(src ValueSource, where, name, text string) RawValue {
	return RawValue{Source: src, Where: where, Name: name, Text: text}
}

// VariablesFile is a whole variables file, named as in messages.
func VariablesFile(src ValueSource, name string, content []byte) RawValue {
	return RawValue{Source: src, Where: name, File: content}
}

// IsFile says whether v is a whole variables file.
func (v RawValue) IsFile() bool { return v.Name == "" }

// EnvVarPrefix prefixes environment variables that set stack variables:
// CONVOY_VAR_replicas=3.
const EnvVarPrefix = "CONVOY_VAR_"

// EnvVarValues are the CONVOY_VAR_* entries of environ ("K=V", as
// os.Environ returns them), in its order. Values for variables the stack
// does not declare are ignored at evaluation: the environment may hold
// values for other stacks.
func EnvVarValues(environ []string) RawValues {
	var out RawValues
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, EnvVarPrefix) || k == EnvVarPrefix {
			continue
		}
		out = append(out, VariableValue(ValueFromEnvVar, k, strings.TrimPrefix(k, EnvVarPrefix), v))
	}
	return out
}

// ParseVarArg reads a --var name=value.
func ParseVarArg(arg string) (RawValue, hcl.Diagnostics) {
	name, val, ok := strings.Cut(arg, "=")
	if !ok || name == "" {
		return RawValue{}, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid --var",
			Detail:   fmt.Sprintf("%q is not of the form name=value.", arg),
		}}
	}
	return VariableValue(ValueFromCLIArg, "--var", name, val), nil
}

// ReadVarFile reads a --var-file argument once (it may be a pipe such as
// <(sops -d vars.hcl)), with the size limit of stack files. The path comes
// from the command line, not the stack, so it may lead anywhere.
func ReadVarFile(path string) (RawValue, hcl.Diagnostics) {
	src, diags := readVarFileArg(path)
	if src == nil {
		src = []byte{}
	}
	return VariablesFile(ValueFromNamedFile, path, src), diags
}

// ReadAutoVarFiles reads the *.auto.vars.hcl files of a stack directory, in
// name order, as its other files are read: regular files inside the
// directory, of bounded size. A file that cannot be read is a diagnostic
// and left out.
func ReadAutoVarFiles(dir string) (RawValues, hcl.Diagnostics) {
	if dir == "" {
		return nil, nil
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*.auto.vars.hcl"))
	sort.Strings(matches)
	var out RawValues
	var diags hcl.Diagnostics
	for _, m := range matches {
		src, d := readConfigFile(dir, filepath.Base(m))
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		out = append(out, VariablesFile(ValueFromAutoFile, m, src))
	}
	return out, diags
}
