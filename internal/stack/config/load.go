package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/safefile"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Limits on a single stack file. HCL's parser and evaluator recurse once per
// nesting level, so unbounded input could exhaust the stack (a fatal error in
// Go, not a recoverable panic); these limits turn hostile input into a
// diagnostic long before that.
const (
	MaxFileSize     = 4 << 20 // bytes
	MaxNestingDepth = 256     // brackets, braces, parentheses, templates, unary operator runs
)

// LoadDir reads every *.hcl file in dir, except *.vars.hcl files (variable
// values, see ReadAutoVarFiles and ReadVarFile) and the lock file, and
// decodes them into a Config. Files are read in name order so that
// diagnostics come out in a stable order.
func LoadDir(dir string) (*Config, hcl.Diagnostics) {
	parses.Add(1)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot read stack directory",
			Detail:   err.Error(),
		}}
	}
	sources := map[string][]byte{}
	var diags hcl.Diagnostics
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !isStackFile(name) {
			continue
		}
		src, d := readConfigFile(dir, name)
		diags = append(diags, d...)
		if src != nil {
			sources[name] = src
		}
	}
	if len(sources) == 0 && !diags.HasErrors() {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "No stack files",
			Detail:   fmt.Sprintf("The directory %s has no .hcl files (other than .vars.hcl files). Use -C to point at a stack directory.", dir),
		})
	}
	cfg, d := LoadSources(dir, sources)
	return cfg, append(diags, d...)
}

// LockFileName is the lock file `convoy init` writes beside the stack
// (internal/chart/source reads and writes it): not stack configuration.
const LockFileName = source.LockFileName

// isStackFile says whether a file name is part of the stack configuration.
func isStackFile(name string) bool {
	return strings.HasSuffix(name, ".hcl") && !strings.HasSuffix(name, ".vars.hcl") && !strings.HasPrefix(name, ".") && name != LockFileName
}

// LoadSources decodes in-memory stack files. Names are file names relative to
// dir; dir is where file() and friends resolve paths and is recorded in the
// Config. LoadDir is LoadSources over the directory's files.
func LoadSources(dir string, sources map[string][]byte) (*Config, hcl.Diagnostics) {
	cfg := &Config{
		Dir:          dir,
		Files:        map[string]*hcl.File{},
		Variables:    map[string]*Variable{},
		Locals:       map[string]*Local{},
		Clusters:     map[string]*Cluster{},
		Repositories: map[string]*Repository{},
		Releases:     map[string]*Release{},
		Environments: map[string]*Environment{},
		Policies:     map[string]*Policy{},
		PolicyFiles:  map[string]*hcl.File{},
	}
	var diags hcl.Diagnostics
	for _, name := range sortedKeys(sources) {
		filename := filepath.Join(dir, name)
		file, d := parseFile(filename, sources[name])
		diags = append(diags, d...)
		if file == nil {
			continue
		}
		cfg.Files[filename] = file
		diags = append(diags, cfg.decodeFile(file)...)
	}
	return cfg, diags
}

// stackDir is the directory relative paths of a stack stay in.
func stackDir(dir string) safefile.Dir {
	return safefile.Dir{Path: dir, Desc: "the stack directory"}
}

// readConfigFile reads a file of the stack directory (a stack file or an
// auto variables file). It must be a regular file inside the directory,
// symlinks followed, of at most MaxFileSize bytes.
func readConfigFile(dir, name string) ([]byte, hcl.Diagnostics) {
	src, err := stackDir(dir).Read(name, MaxFileSize)
	if err != nil {
		return nil, hcl.Diagnostics{fileDiagnostic(filepath.Join(dir, name), err)}
	}
	return src, nil
}

// readVarFileArg reads a --var-file (ReadVarFile) up to MaxFileSize bytes.
func readVarFileArg(path string) ([]byte, hcl.Diagnostics) {
	bad := func(err error) ([]byte, hcl.Diagnostics) {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read variables file", Detail: err.Error()}}
	}
	f, err := os.Open(path)
	if err != nil {
		return bad(err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return bad(fmt.Errorf("%s is a directory", path))
	}
	src, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return bad(err)
	}
	if len(src) > MaxFileSize {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "File too large",
			Detail:   fmt.Sprintf("%s is larger than %d bytes, the limit for stack and variables files.", path, MaxFileSize),
		}}
	}
	return src, nil
}

// fileDiagnostic reports a stack file that was refused or could not be
// read, at the start of the file.
func fileDiagnostic(filename string, err error) *hcl.Diagnostic {
	summary := "Cannot read file"
	switch {
	case errors.Is(err, safefile.ErrTooLarge):
		summary = "File too large"
	case errors.Is(err, safefile.ErrOutside), errors.Is(err, safefile.ErrNotRegular):
		summary = "Invalid stack file"
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   err.Error() + ". Stack files must be regular files inside the stack directory, of at most " + fmt.Sprint(MaxFileSize) + " bytes.",
		Subject:  &hcl.Range{Filename: filename, Start: hcl.InitialPos, End: hcl.InitialPos},
	}
}

func tooLarge(path string, size int64) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "File too large",
		Detail:   fmt.Sprintf("%s is %d bytes; stack files may be at most %d bytes.", path, size, MaxFileSize),
		Subject:  &hcl.Range{Filename: path, Start: hcl.InitialPos, End: hcl.InitialPos},
	}
}

// parseFile checks src against the limits above and parses it as native HCL
// syntax. The returned file is nil when src was refused before parsing.
func parseFile(filename string, src []byte) (*hcl.File, hcl.Diagnostics) {
	if diags := checkSource(filename, src); diags.HasErrors() {
		return nil, diags
	}
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		// A partial body from a file with syntax errors would only add
		// follow-on errors; report the syntax errors alone.
		if file != nil {
			return &hcl.File{Body: hcl.EmptyBody(), Bytes: file.Bytes}, diags
		}
		return nil, diags
	}
	if body, ok := file.Body.(*hclsyntax.Body); ok {
		wholeText(body)
	}
	return file, diags
}

// checkSource refuses sources that are too large, not UTF-8, or nested too
// deeply for the recursive parser.
func checkSource(filename string, src []byte) hcl.Diagnostics {
	if len(src) > MaxFileSize {
		return hcl.Diagnostics{tooLarge(filename, int64(len(src)))}
	}
	if !utf8.Valid(src) {
		pos := firstInvalidUTF8(src)
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid character encoding",
			Detail:   "Stack files must be UTF-8 encoded.",
			Subject:  &hcl.Range{Filename: filename, Start: pos, End: hcl.Pos{Line: pos.Line, Column: pos.Column + 1, Byte: pos.Byte + 1}},
		}}
	}
	return checkNesting(filename, src, hcl.InitialPos)
}

// checkNesting lexes src (the lexer is not recursive) and refuses input whose
// nesting exceeds MaxNestingDepth.
func checkNesting(filename string, src []byte, start hcl.Pos) hcl.Diagnostics {
	toks, _ := hclsyntax.LexConfig(src, filename, start)
	return checkTokenNesting(toks)
}

func checkTokenNesting(toks hclsyntax.Tokens) hcl.Diagnostics {
	// openers is the stack of open brackets; chain counts operator runs
	// (`!!!!x`, `- - - x`, `a ? b : c ? d : ...`), which recurse in the
	// parser just like brackets do. A newline ends a chain unless it is
	// inside parentheses or brackets, where expressions continue over lines.
	var openers []hclsyntax.TokenType
	chain := 0
	var prev hclsyntax.TokenType
	for _, t := range toks {
		switch t.Type {
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen,
			hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc,
			hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			openers = append(openers, t.Type)
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen,
			hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc, hclsyntax.TokenTemplateSeqEnd:
			if len(openers) > 0 {
				openers = openers[:len(openers)-1]
			}
		case hclsyntax.TokenBang, hclsyntax.TokenMinus:
			if prev == t.Type {
				chain++
			}
		case hclsyntax.TokenQuestion:
			chain++
		case hclsyntax.TokenNewline:
			if n := len(openers); n == 0 || (openers[n-1] != hclsyntax.TokenOParen && openers[n-1] != hclsyntax.TokenOBrack) {
				chain = 0
			}
		}
		prev = t.Type
		if len(openers)+chain > MaxNestingDepth {
			rng := t.Range
			return hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Nesting too deep",
				Detail:   fmt.Sprintf("Expressions and blocks may be nested at most %d levels deep.", MaxNestingDepth),
				Subject:  &rng,
			}}
		}
	}
	return nil
}

func firstInvalidUTF8(src []byte) hcl.Pos {
	pos := hcl.InitialPos
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && size <= 1 {
			pos.Byte = i
			return pos
		}
		if r == '\n' {
			pos.Line++
			pos.Column = 1
		} else {
			pos.Column++
		}
		i += size
	}
	return pos
}
