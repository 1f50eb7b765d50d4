package artifact

import (
	"fmt"

	"github.com/opencontainers/go-digest"
)

// Snapshot is a stack directory packed as convoy push packs it (the stack
// files, its lock file and the local charts it names): a saved plan embeds
// one, so that it applies without the directory it was made in.
type Snapshot struct {
	// Archive is the deterministic tar+gzip of the files.
	Archive []byte
	// StackPath is the stack directory inside the archive ("." when it is
	// the archive's root).
	StackPath string
}

// Digest identifies the snapshot's content.
func (s *Snapshot) Digest() string { return digest.FromBytes(s.Archive).String() }

// Snap packs the stack directory.
func Snap(dir string) (*Snapshot, error) {
	p, err := pack(dir, Limits{})
	if err != nil {
		return nil, err
	}
	return &Snapshot{Archive: p.archive, StackPath: p.stackPath}, nil
}

// Extract unpacks a snapshot into the content-addressed cache Fetch uses
// (an entry per digest, reused when present; hostile archives refused as
// in Fetch) and returns the stack directory.
func Extract(cacheDir string, s *Snapshot) (string, error) {
	if err := checkName(s.StackPath, true); err != nil {
		return "", fmt.Errorf("the stack snapshot: %w", err)
	}
	ref := Ref{Repository: "snapshot", Digest: s.Digest()}
	if f, ok := cached(cacheDir, ref); ok {
		return f.Dir, nil
	}
	f, err := unpack(cacheDir, ref, s.StackPath, s.Archive, Limits{})
	if err != nil {
		return "", err
	}
	return f.Dir, nil
}
