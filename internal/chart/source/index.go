package source

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"go.yaml.in/yaml/v3"
)

// indexEntries returns the versions of one chart in a repository index on
// disk. Indexes of large repositories run to tens of megabytes, almost all
// of it other charts, so the file is streamed line by line and only the
// wanted chart's block is decoded: top-level keys at column 0, chart names
// under `entries:` at one indentation, as every index writer lays them out.
// A file laid out otherwise is decoded whole.
func indexEntries(path, chart string) ([]*indexEntry, error) {
	node, err := indexChartNode(path, chart)
	if err != nil || node == nil {
		return nil, err
	}
	if node.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("not a chart repository index: entries of %q are not a list (line %d)", chart, node.Line)
	}
	// An entry that does not decode is skipped, not fatal: one broken
	// version must not hide the others (`convoy outdated` names it).
	var entries []*indexEntry
	for _, item := range node.Content {
		var e indexEntry
		if item.Decode(&e) == nil {
			entries = append(entries, &e)
		}
	}
	return entries, nil
}

// indexChartNode returns the YAML node of one chart's list of versions in
// an index on disk (nil if the index has no such chart), undecoded, so
// that a caller may decode the entries one by one.
func indexChartNode(path, chart string) (*yaml.Node, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	block, err := scanIndex(f, chart)
	if err == nil {
		var doc yaml.Node
		if err := yaml.Unmarshal(block, &doc); err != nil {
			return nil, fmt.Errorf("not a chart repository index: entries of %q: %w", chart, err)
		}
		if len(doc.Content) == 0 {
			return nil, nil
		}
		return doc.Content[0], nil
	}
	if !errors.Is(err, errIndexLayout) {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	var idx struct {
		APIVersion string               `yaml:"apiVersion"`
		Entries    map[string]yaml.Node `yaml:"entries"`
	}
	if err := yaml.NewDecoder(f).Decode(&idx); err != nil {
		return nil, fmt.Errorf("not a chart repository index: %w", err)
	}
	switch {
	case idx.APIVersion == "":
		return nil, errors.New("not a chart repository index: no apiVersion")
	case idx.Entries == nil:
		return nil, errors.New("not a chart repository index: no entries")
	}
	node, ok := idx.Entries[chart]
	if !ok {
		return nil, nil
	}
	return &node, nil
}

var errIndexLayout = errors.New("unrecognised index layout")

// scanIndex returns the YAML text of one chart's list of versions
// (dedented; empty when the index has no such chart), or errIndexLayout
// when the file is not laid out as index writers lay it out.
func scanIndex(r io.Reader, chart string) ([]byte, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var (
		sawAPIVersion, inEntries, sawEntries, inChart bool
		keyIndent                                     = -1
		block                                         bytes.Buffer
	)
	// Bytes, not Text: a string per line would allocate the whole index.
	for sc.Scan() {
		line := sc.Bytes()
		trimmed := bytes.TrimLeft(line, " ")
		if len(trimmed) == 0 || trimmed[0] == '#' {
			if inChart {
				block.Write(line)
				block.WriteByte('\n')
			}
			continue
		}
		indent := len(line) - len(trimmed)
		if line[0] == '\t' {
			return nil, errIndexLayout
		}
		if indent == 0 {
			inChart = false
			inEntries = false
			key, rest, ok := bytes.Cut(line, []byte(":"))
			if !ok {
				return nil, errIndexLayout // a flow mapping, a document marker, …
			}
			switch string(key) {
			case "apiVersion":
				sawAPIVersion = len(bytes.TrimSpace(rest)) > 0
			case "entries":
				if len(bytes.TrimSpace(rest)) > 0 {
					return nil, errIndexLayout // entries: {…}
				}
				inEntries, sawEntries = true, true
			}
			continue
		}
		if !inEntries {
			continue
		}
		if keyIndent < 0 {
			keyIndent = indent
		}
		if indent < keyIndent {
			return nil, errIndexLayout
		}
		if indent == keyIndent && !bytes.HasPrefix(trimmed, []byte("- ")) && !bytes.Equal(trimmed, []byte("-")) {
			key, rest, ok := bytes.Cut(trimmed, []byte(":"))
			rest = bytes.TrimSpace(rest)
			if !ok || len(rest) > 0 && !bytes.Equal(rest, []byte("[]")) {
				return nil, errIndexLayout
			}
			if key[0] == '"' || key[0] == '\'' {
				var name string
				if err := yaml.Unmarshal(key, &name); err != nil {
					return nil, errIndexLayout
				}
				inChart = name == chart
			} else {
				inChart = string(key) == chart
			}
			continue
		}
		if inChart {
			block.Write(line[keyIndent:])
			block.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, errIndexLayout
		}
		return nil, err
	}
	if !sawAPIVersion || !sawEntries {
		return nil, errIndexLayout // the full decode says what is wrong
	}
	return block.Bytes(), nil
}
