package helmfile

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// scope says which references an HCL expression may make where it goes.
type scope int

const (
	// inStack: a release or repository attribute: var.*, environment.name.
	inStack scope = iota
	// inEnvironment: an environment block, which sees environment.name only.
	inEnvironment
)

func (s scope) allows(r refs) error {
	if r.release {
		return fmt.Errorf(".Release is not known here")
	}
	if s == inEnvironment && (len(r.vars) > 0 || len(r.envs) > 0) {
		return fmt.Errorf("an environment block sees only environment.name, not variables")
	}
	return nil
}

// hclText writes v as an HCL expression. Placeholders become the
// expressions they stand for; a value containing one left by hand (or one
// not allowed in this scope) is left out, and a comment with its source
// stands in its place inside maps and lists. ok is false when v itself is
// left out; the items left out are recorded as notes in either case.
func (c *converter) hclText(v any, sc scope, indent string) (text string, ok bool) {
	switch v := v.(type) {
	case nil:
		return "null", true
	case bool:
		return strconv.FormatBool(v), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case *big.Int:
		return v.String(), true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case rawExpr:
		p := c.items[v]
		if !c.usable(int(v), sc) {
			return "", false
		}
		if p.item.expr.yamlOf != "" {
			return p.item.expr.yamlOf, true
		}
		return p.item.expr.text, true
	case string:
		return c.stringText(v, sc)
	case []any:
		if len(v) == 0 {
			return "[]", true
		}
		var b strings.Builder
		b.WriteString("[\n")
		for _, x := range v {
			t, ok := c.hclText(x, sc, indent+"  ")
			if !ok {
				b.WriteString(c.handComments(x, indent+"  "))
				continue
			}
			b.WriteString(indent + "  " + t + ",\n")
		}
		b.WriteString(indent + "]")
		return b.String(), true
	case *omap:
		if len(v.keys) == 0 {
			return "{}", true
		}
		var b strings.Builder
		b.WriteString("{\n")
		for i, k := range v.keys {
			if i > 0 {
				b.WriteString(c.blocksBetween(v, v.lines[v.keys[i-1]], v.lines[k], indent+"  "))
			}
			key, kok := c.keyText(k, sc)
			t, ok := c.hclText(v.vals[k], sc, indent+"  ")
			if !ok || !kok {
				b.WriteString(c.handComments(k, indent+"  "))
				b.WriteString(c.handComments(v.vals[k], indent+"  "))
				continue
			}
			b.WriteString(indent + "  " + key + " = " + t + "\n")
		}
		b.WriteString(indent + "}")
		return b.String(), true
	}
	return fmt.Sprintf("%q", fmt.Sprint(v)), true
}

// blocksBetween writes, as comments, the template blocks left by hand
// (if, with, range, ...) that stood alone on their lines between two keys
// of m (lines of m's part): in their place, not after the attribute.
func (c *converter) blocksBetween(m *omap, from, to int, indent string) string {
	if m.file == "" {
		return ""
	}
	from, to = m.first+from-1, m.first+to-1
	var b strings.Builder
	for i, p := range c.items {
		if p.item.alone && p.item.kind == itemHand && p.file == m.file && p.line > from && p.line < to && !c.inline[i] {
			c.inline[i] = true
			b.WriteString(c.noteComment(i, indent))
		}
	}
	return b.String()
}

// usable reports whether placeholder i is a translated expression allowed
// in sc; if not, it becomes a note (once).
func (c *converter) usable(i int, sc scope) bool {
	p := c.items[i]
	if p.item.kind == itemExpr {
		if err := sc.allows(p.refs); err == nil {
			c.refs.add(p.refs)
			return true
		} else if p.why == "" {
			p.why = err.Error()
		}
	}
	c.leftByHand(i)
	return false
}

func (c *converter) keyText(k string, sc scope) (string, bool) {
	if !placeholderRE.MatchString(k) && hclIdent.MatchString(k) {
		return k, true
	}
	return c.stringText(k, sc)
}

// stringText writes s as an HCL string, a template when it holds
// placeholders: "api.${var.domain}".
func (c *converter) stringText(s string, sc scope) (string, bool) {
	var b strings.Builder
	b.WriteByte('"')
	last := 0
	ok := true
	for _, m := range placeholderRE.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(escapeHCL(s[last:m[0]]))
		i, _ := strconv.Atoi(s[m[2]:m[3]])
		if !c.usable(i, sc) {
			ok = false
		}
		b.WriteString("${" + c.items[i].item.expr.text + "}")
		last = m[1]
	}
	b.WriteString(escapeHCL(s[last:]))
	b.WriteByte('"')
	return b.String(), ok
}

// escapeHCL escapes text for an HCL quoted string.
func escapeHCL(s string) string {
	q := strconv.Quote(s)
	q = q[1 : len(q)-1]
	q = strings.ReplaceAll(q, "${", "$${")
	return strings.ReplaceAll(q, "%{", "%%{")
}

// handComments writes, for every placeholder in v left by hand, the
// source lines it came from as comments.
func (c *converter) handComments(v any, indent string) string {
	var b strings.Builder
	for _, i := range placeholdersIn(v) {
		if c.items[i].item.kind == itemExpr && c.items[i].why == "" {
			continue
		}
		b.WriteString(c.noteComment(i, indent))
	}
	return b.String()
}

func placeholdersIn(v any) []int {
	var out []int
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case rawExpr:
			out = append(out, int(v))
		case string:
			for _, m := range placeholderRE.FindAllStringSubmatch(v, -1) {
				i, _ := strconv.Atoi(m[1])
				out = append(out, i)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case *omap:
			for _, k := range v.keys {
				walk(k)
				walk(v.vals[k])
			}
		}
	}
	walk(v)
	return out
}
