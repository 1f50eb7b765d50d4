package chart

import (
	"bufio"
	"bytes"
	"errors"
	"path/filepath"
	"strings"
)

// ignoreRules is a parsed .helmignore, with Helm's semantics: patterns are
// filepath.Match globs, "**" is rejected, a leading "!" negates, a trailing
// "/" matches directories only, a pattern without "/" matches base names.
type ignoreRules struct {
	patterns []ignorePattern
}

type ignorePattern struct {
	glob    string
	negate  bool
	mustDir bool
	// base: match against the base name (pattern has no "/").
	base bool
}

func parseIgnore(data []byte) (*ignoreRules, error) {
	r := &ignoreRules{}
	s := bufio.NewScanner(bytes.NewReader(bytes.TrimPrefix(data, utf8BOM)))
	for s.Scan() {
		if err := r.add(s.Text()); err != nil {
			return r, err
		}
	}
	return r, s.Err()
}

// addDefaults adds Helm's built-in rule: dot files under templates/.
func (r *ignoreRules) addDefaults() { _ = r.add(`templates/.?*`) }

func (r *ignoreRules) add(rule string) error {
	rule = strings.TrimSpace(rule)
	if rule == "" || strings.HasPrefix(rule, "#") {
		return nil
	}
	if strings.Contains(rule, "**") {
		return errors.New("double-star (**) syntax is not supported")
	}
	if _, err := filepath.Match(rule, "abc"); err != nil {
		return err
	}
	p := ignorePattern{}
	if after, ok := strings.CutPrefix(rule, "!"); ok {
		p.negate = true
		rule = after
	}
	if after, ok := strings.CutSuffix(rule, "/"); ok {
		p.mustDir = true
		rule = after
	}
	switch {
	case strings.HasPrefix(rule, "/"):
		p.glob = rule[1:]
	case strings.Contains(rule, "/"):
		p.glob = rule
	default:
		p.glob = rule
		p.base = true
	}
	r.patterns = append(r.patterns, p)
	return nil
}

// ignore reports whether the chart-relative slash path name is ignored.
func (r *ignoreRules) ignore(name string, isDir bool) bool {
	if name == "" || name == "." || name == "./" {
		return false
	}
	for _, p := range r.patterns {
		n := name
		if p.base {
			n = filepath.Base(name)
		}
		if p.negate {
			if p.mustDir && !isDir {
				return true
			}
			if ok, _ := filepath.Match(p.glob, n); !ok {
				return true
			}
			continue
		}
		if p.mustDir && !isDir {
			continue
		}
		if ok, _ := filepath.Match(p.glob, n); ok {
			return true
		}
	}
	return false
}
