package plan

// Provenance: where a release's values leaves and its objects' changed
// fields come from. Sources are named (a file and line, an environment
// variable, a flag); values never are, so a sensitive value's origin is
// shown as freely as any other.

// OriginKind is the kind of input a value, or a changed field, comes from.
type OriginKind string

const (
	// Where a values leaf is set.
	OriginChartDefault OriginKind = "chart_default" // the chart's (or a subchart's) values.yaml
	OriginValuesFile   OriginKind = "values_file"   // a values layer read whole with file(PATH)
	OriginValues       OriginKind = "values"        // a values layer written in HCL (an object, or YAML text)
	OriginSet          OriginKind = "set"           // a set = {...} entry
	OriginSetSensitive OriginKind = "set_sensitive" // a set_sensitive = {...} entry

	// What an HCL expression read (Origin.Via).
	OriginVariable OriginKind = "variable" // var.NAME, with where its value was given in Via
	OriginLocal    OriginKind = "local"    // local.NAME, with what its expression read in Via
	OriginOutput   OriginKind = "output"   // release.NAME.outputs.KEY (or another attribute of a release)

	// Where a variable's value was given (config.ValueSource).
	OriginVarDefault  OriginKind = "var_default"   // the variable block's default
	OriginAutoVarFile OriginKind = "auto_var_file" // *.auto.vars.hcl (and the like) in the stack directory
	OriginEnvironment OriginKind = "environment"   // the chosen environment block's vars or var_files
	OriginVarFile     OriginKind = "var_file"      // --var-file FILE
	OriginEnv         OriginKind = "env"           // CONVOY_VAR_NAME
	OriginFlag        OriginKind = "flag"          // --var NAME=VALUE
	OriginVarsFrom    OriginKind = "vars_from"     // a Stack's spec.vars / varsFrom (the controller)

	// Inputs of a changed object field that are not values leaves.
	OriginChart       OriginKind = "chart"        // the chart changed (version or content): its templates or defaults
	OriginDrift       OriginKind = "drift"        // the live object differs from what convoy last applied
	OriginReleaseName OriginKind = "release_name" // the Helm release name changed (a moved block renames it)
	OriginNamespace   OriginKind = "namespace"    // the release's namespace changed
)

// Source is where an origin is written: a position in a file (relative to
// the stack directory when inside it), or an environment variable, or a
// command-line flag.
type Source struct {
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	Env    string `json:"env,omitempty"`
	Flag   string `json:"flag,omitempty"`
}

// Origin is one input and where it was set.
type Origin struct {
	// Input names the input: "values image.tag", "var.replicas",
	// "local.tag", "release.db.outputs.host", "chart 1.4.0 → 1.5.0",
	// "drift".
	Input  string     `json:"input"`
	Kind   OriginKind `json:"kind"`
	Source *Source    `json:"source,omitempty"`
	// Via is what the input read, in order: the variables, locals and
	// release outputs an HCL expression refers to, and for a variable
	// where its value was given.
	Via []Origin `json:"via,omitempty"`
	// Overrode are the lower layers that set the same values leaf and
	// lost to this one (the chart default first).
	Overrode []Origin `json:"overrode,omitempty"`
}
