package helmfile

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template/parse"
)

// expr is a Go template expression translated into HCL. text refers to
// var.NAME, environment.name and release.name/namespace; the translator
// records which, so the caller can check they are available where the
// expression goes.
type expr struct {
	text string
	// str: the value is a string (quote, printf, upper, ...), so it is
	// written as a string even where the template stood alone.
	str bool
	// quote: the outermost call was quote (or squote, with single quotes),
	// so where the template's output is text it is written quoted.
	quote string
	// yamlOf: the text is the YAML of this expression (toYaml, indented or
	// not), which is what a YAML value made of it alone means.
	yamlOf string
	// truthOf: the expression was `X | default false`, which is true
	// exactly when X is true (for the booleans installed takes).
	truthOf string
}

// refs are what translated expressions refer to.
type refs struct {
	vars    map[string]bool // var.NAME roots
	envs    map[string]bool // environment variables read, true when required (requiredEnv)
	envName bool            // environment.name
	release bool            // release.name or release.namespace
}

func newRefs() refs { return refs{vars: map[string]bool{}, envs: map[string]bool{}} }

func (r *refs) add(o refs) {
	for k := range o.vars {
		r.vars[k] = true
	}
	for k, req := range o.envs {
		r.envs[k] = r.envs[k] || req
	}
	r.envName = r.envName || o.envName
	r.release = r.release || o.release
}

// translator turns template expressions into HCL.
type translator struct{}

var hclIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// translate translates the content of one action, or says why not. The
// refs it uses are added to r.
func (tr translator) translate(content string, r *refs) (expr, error) {
	t := parse.New("action")
	t.Mode = parse.SkipFuncCheck
	tree, err := t.Parse("{{"+content+"}}", "{{", "}}", map[string]*parse.Tree{})
	if err != nil {
		return expr{}, err
	}
	if len(tree.Root.Nodes) != 1 {
		return expr{}, fmt.Errorf("not one action")
	}
	a, ok := tree.Root.Nodes[0].(*parse.ActionNode)
	if !ok {
		return expr{}, fmt.Errorf("not an expression")
	}
	return tr.pipe(a.Pipe, r)
}

func (tr translator) pipe(p *parse.PipeNode, r *refs) (expr, error) {
	if len(p.Decl) > 0 {
		return expr{}, fmt.Errorf("declares a template variable")
	}
	var prev *expr
	for _, c := range p.Cmds {
		e, err := tr.command(c, prev, r)
		if err != nil {
			return expr{}, err
		}
		prev = &e
	}
	if prev == nil {
		return expr{}, fmt.Errorf("empty")
	}
	return *prev, nil
}

// command translates one command of a pipeline; prev, if not nil, is the
// value piped into it (its last argument).
func (tr translator) command(c *parse.CommandNode, prev *expr, r *refs) (expr, error) {
	if len(c.Args) == 1 && prev == nil {
		if _, isFunc := c.Args[0].(*parse.IdentifierNode); !isFunc {
			return tr.operand(c.Args[0], r)
		}
	}
	id, ok := c.Args[0].(*parse.IdentifierNode)
	if !ok {
		return expr{}, fmt.Errorf("%s is not a function", c.Args[0])
	}
	if id.Ident == "index" {
		return index(c, prev, r)
	}
	var args []expr
	for _, a := range c.Args[1:] {
		e, err := tr.operand(a, r)
		if err != nil {
			return expr{}, err
		}
		args = append(args, e)
	}
	if prev != nil {
		args = append(args, *prev)
	}
	for _, a := range args {
		if a.quote != "" {
			return expr{}, fmt.Errorf("quote inside a pipeline")
		}
	}
	n := len(args)
	want := func(k int) error {
		if n != k {
			return fmt.Errorf("%s with %d arguments", id.Ident, n)
		}
		return nil
	}
	switch id.Ident {
	case "env", "requiredEnv":
		if err := want(1); err != nil {
			return expr{}, err
		}
		s, ok := c.Args[1].(*parse.StringNode)
		if !ok || len(c.Args) != 2 {
			return expr{}, fmt.Errorf("%s of a computed name", id.Ident)
		}
		name := s.Text
		if !hclIdent.MatchString(name) {
			return expr{}, fmt.Errorf("environment variable %q is not a usable variable name", name)
		}
		r.envs[name] = r.envs[name] || id.Ident == "requiredEnv"
		return expr{text: "var." + envVarName(name), str: true}, nil
	case "quote", "squote", "toString":
		if err := want(1); err != nil {
			return expr{}, err
		}
		q := map[string]string{"quote": `"`, "squote": "'"}[id.Ident]
		return expr{text: "tostring(" + args[0].text + ")", str: true, quote: q}, nil
	case "upper", "lower", "trim", "title":
		if err := want(1); err != nil {
			return expr{}, err
		}
		f := map[string]string{"upper": "upper", "lower": "lower", "trim": "trimspace", "title": "title"}[id.Ident]
		return expr{text: f + "(" + args[0].text + ")", str: true}, nil
	case "default":
		if err := want(2); err != nil {
			return expr{}, err
		}
		// sprig's default replaces empty values: null, "", false and 0
		// (and empty lists and maps, which are left as they are here).
		x, d := args[1].text, args[0].text
		empty := func(v string) string {
			return v + " == null || " + v + ` == "" || ` + v + " == false || " + v + " == 0"
		}
		text := empty(x) + " ? " + d + " : " + x
		if strings.ContainsAny(strings.TrimPrefix(x, "var."), ".()") {
			text = empty("try("+x+", null)") + " ? " + d + " : try(" + x + ", " + d + ")"
		}
		e := expr{text: "(" + text + ")", str: args[0].str && args[1].str}
		if d == "false" {
			e.truthOf = x
		}
		return e, nil
	case "toYaml":
		if err := want(1); err != nil {
			return expr{}, err
		}
		return expr{text: "chomp(yamlencode(" + args[0].text + "))", str: true, yamlOf: args[0].text}, nil
	case "toJson", "toRawJson":
		if err := want(1); err != nil {
			return expr{}, err
		}
		return expr{text: "jsonencode(" + args[0].text + ")", str: true}, nil
	case "indent", "nindent":
		if err := want(2); err != nil {
			return expr{}, err
		}
		n, ok := c.Args[1].(*parse.NumberNode)
		if !ok || !n.IsInt || n.Int64 < 0 || n.Int64 > 100 {
			return expr{}, fmt.Errorf("%s by a computed width", id.Ident)
		}
		// HCL's indent leaves the first line as it is; sprig's indents it too
		lead := strings.Repeat(" ", int(n.Int64))
		if id.Ident == "nindent" {
			lead = `\n` + lead
		}
		return expr{text: `"` + lead + "${indent(" + n.Text + ", " + args[1].text + `)}"`, str: true, yamlOf: args[1].yamlOf}, nil
	case "not":
		if err := want(1); err != nil {
			return expr{}, err
		}
		return expr{text: "!" + paren(args[0].text)}, nil
	case "and", "or":
		if n < 2 {
			return expr{}, fmt.Errorf("%s with %d arguments", id.Ident, n)
		}
		op := map[string]string{"and": " && ", "or": " || "}[id.Ident]
		texts := make([]string, n)
		for i, a := range args {
			texts[i] = a.text
		}
		return expr{text: "(" + strings.Join(texts, op) + ")"}, nil
	case "eq":
		// Go's eq compares its first argument with each of the others.
		if n < 2 {
			return expr{}, fmt.Errorf("eq with %d arguments", n)
		}
		var alts []string
		for _, a := range args[1:] {
			alts = append(alts, args[0].text+" == "+a.text)
		}
		return expr{text: "(" + strings.Join(alts, " || ") + ")"}, nil
	case "ne":
		if err := want(2); err != nil {
			return expr{}, err
		}
		return expr{text: "(" + args[0].text + " != " + args[1].text + ")"}, nil
	case "list":
		texts := make([]string, n)
		for i, a := range args {
			texts[i] = a.text
		}
		return expr{text: "[" + strings.Join(texts, ", ") + "]"}, nil
	case "join":
		if err := want(2); err != nil {
			return expr{}, err
		}
		return expr{text: "join(" + args[0].text + ", " + args[1].text + ")", str: true}, nil
	case "printf":
		if n < 1 {
			return expr{}, fmt.Errorf("printf without a format")
		}
		texts := make([]string, n)
		for i, a := range args {
			texts[i] = a.text
		}
		return expr{text: "format(" + strings.Join(texts, ", ") + ")", str: true}, nil
	}
	return expr{}, fmt.Errorf("the function %s has no translation", id.Ident)
}

// index translates index .Values "a" "b" as .Values.a.b: keys that are
// not template names (or that someone wrote that way).
func index(c *parse.CommandNode, prev *expr, r *refs) (expr, error) {
	if len(c.Args) < 3 || prev != nil {
		return expr{}, fmt.Errorf("index of something other than .Values")
	}
	root, ok := c.Args[1].(*parse.FieldNode)
	if !ok {
		return expr{}, fmt.Errorf("index of something other than .Values")
	}
	path := slices.Clone(root.Ident)
	for _, a := range c.Args[2:] {
		s, ok := a.(*parse.StringNode)
		if !ok {
			return expr{}, fmt.Errorf("index by a computed key")
		}
		path = append(path, s.Text)
	}
	return field(path, r)
}

// paren wraps an expression in parentheses unless it is one name, call or
// parenthesised expression already.
func paren(text string) string {
	if hclIdent.MatchString(strings.ReplaceAll(text, ".", "_")) || (strings.HasPrefix(text, "(") && strings.HasSuffix(text, ")")) {
		return text
	}
	return "(" + text + ")"
}

func (tr translator) operand(n parse.Node, r *refs) (expr, error) {
	switch n := n.(type) {
	case *parse.FieldNode:
		return field(n.Ident, r)
	case *parse.VariableNode:
		// $.Values.x is .Values.x: $ is the template's root.
		if len(n.Ident) > 1 && n.Ident[0] == "$" {
			return field(n.Ident[1:], r)
		}
		return expr{}, fmt.Errorf("the template variable %s has no translation", n)
	case *parse.StringNode:
		return expr{text: strconv.Quote(n.Text), str: true}, nil
	case *parse.NumberNode:
		return expr{text: n.Text}, nil
	case *parse.BoolNode:
		return expr{text: strconv.FormatBool(n.True)}, nil
	case *parse.PipeNode:
		return tr.pipe(n, r)
	}
	return expr{}, fmt.Errorf("%s has no translation", n)
}

// field translates .Values.a.b, .StateValues.a.b, .Environment.Values.a.b,
// .Environment.Name and .Release.Name / .Release.Namespace.
func field(path []string, r *refs) (expr, error) {
	dotted := "." + strings.Join(path, ".")
	switch {
	case len(path) == 2 && path[0] == "Environment" && path[1] == "Name":
		r.envName = true
		return expr{text: "environment.name", str: true}, nil
	case len(path) == 2 && path[0] == "Release" && (path[1] == "Name" || path[1] == "Namespace"):
		r.release = true
		return expr{text: "release." + strings.ToLower(path[1]), str: true}, nil
	}
	var rest []string
	switch {
	case len(path) >= 2 && (path[0] == "Values" || path[0] == "StateValues"):
		rest = path[1:]
	case len(path) >= 3 && path[0] == "Environment" && path[1] == "Values":
		rest = path[2:]
	default:
		return expr{}, fmt.Errorf("%s has no translation", dotted)
	}
	for _, p := range rest {
		if !hclIdent.MatchString(p) {
			return expr{}, fmt.Errorf("%s: %q is not an HCL name", dotted, p)
		}
	}
	r.vars[rest[0]] = true
	return expr{text: "var." + strings.Join(rest, ".")}, nil
}

// envVarName is the stack variable of an environment variable: its name
// (set it with CONVOY_VAR_<name>).
func envVarName(name string) string { return name }
