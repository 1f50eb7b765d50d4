package helmfile

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2/hclwrite"
)

// emit writes stack.hcl: a header listing what is left by hand, the
// variables, environments, repositories and releases, with the notes
// where they stood.
func (c *converter) emit(st *state, source string) []byte {
	var rels strings.Builder
	labels := releaseLabels(st.releases, c)
	for i, r := range st.releases {
		c.release(&rels, r, labels[i], st, labels)
	}
	c.notes(&rels, st.endNotes, "")
	// The notes above the releases (a templates: section) once the
	// releases are written: what they wrote in its place is not repeated.
	var top strings.Builder
	for _, i := range st.topNotes {
		if !c.items[i].commented {
			top.WriteString(c.noteComment(i, ""))
		}
	}
	relsText := top.String() + rels.String()
	// One note per local chart, however many releases (or templates) name it.
	for _, chart := range slices.Sorted(maps.Keys(c.localCharts)) {
		file, rels := c.localCharts[chart][0], strings.Join(c.localCharts[chart][1:], ", ")
		if strings.HasPrefix(chart, "/") {
			c.warn("%s: the local chart %s (%s) is an absolute path: the stack reads it as written, from this machine only", file, chart, rels)
		} else {
			c.warn("%s: the local chart %s (%s) is relative to the helmfile's directory: copy it into the stack directory or adjust the path", file, chart, rels)
		}
	}
	var envs strings.Builder
	c.notes(&envs, st.envNotes, "")
	envKeys := c.environments(&envs, st)
	var repos strings.Builder
	c.notes(&repos, st.repoNotes, "")
	c.repositories(&repos, st)
	// Items left by hand that stood nowhere the stack keeps (a replaced
	// part, an ignored key) are kept at the end.
	var rest strings.Builder
	for i, p := range c.items {
		if p.item.kind == itemHand && !p.commented {
			rest.WriteString(c.noteComment(i, ""))
		}
	}
	vars := c.variables(envKeys)
	slices.SortStableFunc(c.res.LeftByHand, func(a, b string) int {
		fa, la := where(a)
		fb, lb := where(b)
		if fa != fb {
			return strings.Compare(fa, fb)
		}
		return la - lb
	})

	var out strings.Builder
	fmt.Fprintf(&out, "# Imported from %s by `convoy import helmfile`.\n", source)
	if len(c.res.LeftByHand) == 0 {
		out.WriteString("# Nothing was left by hand.\n")
	} else {
		fmt.Fprintf(&out, "#\n# Left by hand (%d): templates are kept as comments (LEFT BY HAND) where they stood.\n", len(c.res.LeftByHand))
		for _, l := range c.res.LeftByHand {
			out.WriteString(commentLines("  - "+l, ""))
		}
	}
	out.WriteString("\n")
	for _, s := range []string{vars, envs.String(), repos.String(), relsText, rest.String()} {
		if s != "" {
			out.WriteString(s)
			if !strings.HasSuffix(s, "\n\n") {
				out.WriteString("\n")
			}
		}
	}
	return hclwrite.Format([]byte(strings.TrimRight(out.String(), "\n") + "\n"))
}

// where splits the "file:line: " or "file: " that starts an item.
func where(item string) (string, int) {
	loc, _, _ := strings.Cut(item, ": ")
	file, line, ok := strings.Cut(loc, ":")
	if !ok {
		return loc, 0
	}
	n, _ := strconv.Atoi(line)
	return file, n
}

func (c *converter) notes(b *strings.Builder, idx []int, indent string) {
	for _, i := range idx {
		if c.inline[i] {
			continue // written in its place, inside the values
		}
		b.WriteString(c.noteComment(i, indent))
	}
}

// variables declares the environment values, the other values the
// templates read, and the environment variables they read.
func (c *converter) variables(envKeys []string) string {
	var b strings.Builder
	declared := map[string]bool{}
	for _, k := range envKeys {
		declared[k] = true
		fmt.Fprintf(&b, "variable %q {\n  default     = null\n  description = %q\n}\n\n", k, "environment value "+k+" (from helmfile environments)")
	}
	for _, k := range slices.Sorted(maps.Keys(c.refs.vars)) {
		if declared[k] {
			continue
		}
		if _, isEnv := c.refs.envs[k]; isEnv {
			continue
		}
		declared[k] = true
		fmt.Fprintf(&b, "variable %q {\n  default     = null\n  description = %q\n}\n\n", k, "helmfile value "+k+" (no environment sets it)")
	}
	for _, k := range slices.Sorted(maps.Keys(c.refs.envs)) {
		if declared[k] {
			c.warn("environment variable %s: a helmfile value has the same name; both are var.%s", k, k)
			continue
		}
		sensitive := ""
		if secretEnvName(k) {
			// A client secret read from the environment was printed in
			// plans: a name that looks secret makes the variable sensitive.
			sensitive = "  sensitive   = true\n"
		}
		if c.refs.envs[k] {
			fmt.Fprintf(&b, "# {{ requiredEnv %q }}: set CONVOY_VAR_%s (or --var %s=...)\nvariable %q {\n  type        = string\n  description = %q\n%s}\n\n", k, k, k, k, "the environment variable "+k+" (helmfile requiredEnv)", sensitive)
		} else {
			fmt.Fprintf(&b, "# {{ env %q }}: set CONVOY_VAR_%s (or --var %s=...)\nvariable %q {\n  type        = string\n  default     = \"\"\n  description = %q\n%s}\n\n", k, k, k, k, "the environment variable "+k+" (helmfile env)", sensitive)
		}
	}
	return b.String()
}

// secretEnvName reports whether an environment variable's name looks
// like it holds a secret: *SECRET*, *PASSWORD*, *TOKEN*, *KEY*.
func secretEnvName(name string) bool {
	u := strings.ToUpper(name)
	for _, w := range []string{"SECRET", "PASSWORD", "PASSWD", "TOKEN", "KEY", "CREDENTIAL"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}

// environments writes the environment blocks and returns the names of
// their values, which become variables.
func (c *converter) environments(b *strings.Builder, st *state) []string {
	keys := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(st.envs)) {
		e := st.envs[name]
		vals := newOmap()
		for _, v := range e.values {
			switch v := v.(type) {
			case string:
				if placeholderRE.MatchString(v) {
					c.warn("%s: environment %s: the values path %s is templated: not read", e.file, name, c.canon(v))
					continue
				}
				m, err := c.readValues(v)
				if err != nil {
					c.warn("%s: environment %s: %v", e.file, name, err)
					continue
				}
				deepMerge(vals, m)
			case *omap:
				deepMerge(vals, v)
			default:
				c.warn("%s: environment %s: a values entry that is neither a path nor a mapping: not imported", e.file, name)
			}
		}
		for _, s := range e.secrets {
			c.warn("%s: environment %s: secrets %s: read it with sops_file() in vars (vars = { x = yamldecode(sops_file(%q)).x })", e.file, name, c.canon(s), c.canon(s))
		}
		for _, k := range e.other {
			c.warn("%s: environment %s: %s is not imported", e.file, name, k)
		}
		fmt.Fprintf(b, "environment %q {\n", ident(name))
		if len(vals.keys) > 0 {
			b.WriteString("  vars = {\n")
			for _, k := range vals.keys {
				t, ok := c.hclText(vals.vals[k], inEnvironment, "    ")
				if !ok {
					b.WriteString(c.handComments(vals.vals[k], "    "))
					continue
				}
				keys[ident(k)] = true
				fmt.Fprintf(b, "    %s = %s\n", ident(k), t)
			}
			b.WriteString("  }\n")
		}
		b.WriteString("}\n\n")
	}
	return slices.Sorted(maps.Keys(keys))
}

// readValues reads an environment values file; a .gotmpl one is read
// through placeholders, as a helmfile part.
func (c *converter) readValues(name string) (*omap, error) {
	src, err := c.readFile(name)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(name, ".gotmpl") {
		src = c.placeholders(name, src, 1)
	}
	v, err := parseYAML(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if v == nil {
		return newOmap(), nil
	}
	m, ok := v.(*omap)
	if !ok {
		return nil, fmt.Errorf("%s is not a mapping", name)
	}
	return m, nil
}

func (c *converter) repositories(b *strings.Builder, st *state) {
	seen := map[string]bool{}
	for _, r := range st.repos {
		c.notes(b, r.before, "")
		name, _ := str(r.m.get("name"))
		if name == "" {
			c.warn("%s: a repository without a literal name: not imported", r.file)
			continue
		}
		if seen[name] {
			c.warn("%s: repository %s is declared twice: the first is kept", r.file, name)
			continue
		}
		seen[name] = true
		url, _ := r.m.get("url").(string)
		oci, _ := boolVal(r.m.get("oci"))
		switch {
		case oci && !strings.HasPrefix(url, "oci://"):
			url = "oci://" + url
		case !strings.Contains(url, "://"):
			url = "https://" + url
		}
		t, ok := c.stringText(url, inStack)
		if !ok {
			b.WriteString(c.handComments(url, ""))
			continue
		}
		fmt.Fprintf(b, "repository %q {\n  url = %s\n}\n\n", ident(name), t)
		for _, k := range r.m.keys {
			switch k {
			case "name", "url", "oci", "plainHttp":
			case "username", "password":
				c.warn("%s: repository %s: credentials are not imported: set username and password (from a sensitive variable)", r.file, name)
			default:
				c.warn("%s: repository %s: %s is not imported", r.file, name, k)
			}
		}
	}
}

// canon is a value as text, its placeholders written as ${expression}.
func (c *converter) canon(v any) string {
	switch v := v.(type) {
	case rawExpr:
		return "${" + c.items[v].item.expr.text + "}"
	case string:
		return placeholderRE.ReplaceAllStringFunc(v, func(m string) string {
			i, _ := strconv.Atoi(placeholderRE.FindStringSubmatch(m)[1])
			return "${" + c.items[i].item.expr.text + "}"
		})
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

var interp = regexp.MustCompile(`\$\{[^}]*\}`)

// releaseLabels names the release blocks: the release name (without its
// templated parts), made unique with the namespace, then a number.
func releaseLabels(rs []*entry, c *converter) []string {
	base := make([]string, len(rs))
	count := map[string]int{}
	for i, r := range rs {
		n := strings.Trim(interp.ReplaceAllString(c.canon(r.m.get("name")), ""), "-_.")
		if n == "" {
			n = "release"
		}
		base[i] = ident(n)
		count[base[i]]++
	}
	out := make([]string, len(rs))
	used := map[string]bool{}
	for i, r := range rs {
		l := base[i]
		if count[l] > 1 {
			if ns := strings.Trim(interp.ReplaceAllString(c.canon(r.m.get("namespace")), ""), "-_."); ns != "" {
				l = ident(ns + "_" + l)
			}
		}
		for n := 2; used[l]; n++ {
			l = fmt.Sprintf("%s_%d", base[i], n)
		}
		used[l] = true
		out[i] = l
	}
	return out
}

var notIdent = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// ident makes a name usable as a block label or attribute name.
func ident(s string) string {
	s = notIdent.ReplaceAllString(s, "_")
	if s == "" || !(s[0] == '_' || s[0] >= 'A' && s[0] <= 'Z' || s[0] >= 'a' && s[0] <= 'z') {
		s = "_" + s
	}
	return s
}
