package imagebuild

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's user: distroless's "nonroot", which the Deployment's
// securityContext names too (runAsUser 65532).
const (
	UID      = 65532
	GID      = 65532
	UserName = "nonroot"
	Home     = "/home/nonroot"
)

// Entrypoint is where the convoy binary lives in the image.
const Entrypoint = "/usr/local/bin/convoy"

// CABundlePath is where the image's CA certificates are (Go's crypto/x509
// looks there on Linux; SSL_CERT_FILE names it too).
const CABundlePath = "/etc/ssl/certs/ca-certificates.crt"

// entry is one file or directory of a layer.
type entry struct {
	path     string // without a leading slash
	dir      bool
	mode     int64
	uid, gid int
	data     []byte
}

// baseEntries are the base layer's files: the CA bundle, the users and
// groups, and the directories a static binary needs. /tmp is world
// writable with the sticky bit; in the cluster an emptyDir covers it so
// that the root file system can stay read-only.
func baseEntries(caBundle []byte) []entry {
	passwd := "root:x:0:0:root:/root:/sbin/nologin\n" +
		fmt.Sprintf("%s:x:%d:%d:%s:%s:/sbin/nologin\n", UserName, UID, GID, UserName, Home)
	group := "root:x:0:\n" + fmt.Sprintf("%s:x:%d:\n", UserName, GID)
	return []entry{
		{path: "etc/", dir: true, mode: 0o755},
		{path: "etc/group", mode: 0o644, data: []byte(group)},
		{path: "etc/nsswitch.conf", mode: 0o644, data: []byte("hosts: files dns\n")},
		{path: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{path: "etc/ssl/", dir: true, mode: 0o755},
		{path: "etc/ssl/certs/", dir: true, mode: 0o755},
		{path: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: caBundle},
		{path: "home/", dir: true, mode: 0o755},
		{path: "home/nonroot/", dir: true, mode: 0o700, uid: UID, gid: GID},
		{path: "root/", dir: true, mode: 0o700},
		{path: "tmp/", dir: true, mode: 0o1777},
		{path: "usr/", dir: true, mode: 0o755},
		{path: "usr/local/", dir: true, mode: 0o755},
		{path: "usr/local/bin/", dir: true, mode: 0o755},
	}
}

// tarOf writes entries, in their order, with the time mtime and no
// host-specific fields, so that the same entries give the same bytes.
func tarOf(entries []entry, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Name:    e.path,
			Mode:    e.mode,
			Uid:     e.uid,
			Gid:     e.gid,
			ModTime: mtime,
			Format:  tar.FormatPAX,
		}
		if e.uid == UID {
			h.Uname, h.Gname = UserName, UserName
		} else {
			h.Uname, h.Gname = "root", "root"
		}
		if e.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", e.path, err)
		}
		if !e.dir {
			if _, err := tw.Write(e.data); err != nil {
				return nil, fmt.Errorf("layer entry %s: %w", e.path, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// layerOf is an OCI gzip layer of a tar archive held in memory.
func layerOf(archive []byte) (v1.Layer, error) {
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(archive)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
}

// baseLayer is the layer every platform shares.
func baseLayer(caBundle []byte, mtime time.Time) (v1.Layer, error) {
	b, err := tarOf(baseEntries(caBundle), mtime)
	if err != nil {
		return nil, err
	}
	return layerOf(b)
}

// binaryLayer holds the convoy binary at Entrypoint.
func binaryLayer(binary string, mtime time.Time) (v1.Layer, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	b, err := tarOf([]entry{{path: Entrypoint[1:], mode: 0o755, data: data}}, mtime)
	if err != nil {
		return nil, err
	}
	return layerOf(b)
}
