// Command dist builds convoy's release files (`make dist`): a static
// binary per platform in an archive (tar.gz; zip for Windows), an SPDX 2.3
// SBOM of the modules built in, SHA256SUMS of them all, and a signature of
// SHA256SUMS made with convoy's own signing code (internal/signing), in
// cosign's format: `cosign verify-blob --key convoy.pub --signature
// SHA256SUMS.sig --insecure-ignore-tlog SHA256SUMS` accepts it. Archives
// carry the commit's time, so a commit's release files have one digest.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/internal/signing"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

// options are dist's flags.
type options struct {
	out, version, commit, ldflags, key string
	platforms                          []string
	epoch                              int64
	trimpath                           bool
}

func parse(args []string) (options, error) {
	fs := flag.NewFlagSet("dist", flag.ContinueOnError)
	out := fs.String("out", "dist", "directory to write the release files to (emptied first)")
	version := fs.String("version", "dev", "convoy's version")
	commit := fs.String("commit", "", "the commit built")
	ldflags := fs.String("ldflags", "", "linker flags (the version ones, -s -w)")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64,darwin/amd64,darwin/arm64,windows/amd64,windows/arm64", "comma-separated os/arch")
	created := fs.String("created", os.Getenv("SOURCE_DATE_EPOCH"), "the commit's time in Unix seconds: the archives' file times")
	key := fs.String("key", "", "PEM ECDSA P-256 key to sign SHA256SUMS with (a cosign key: COSIGN_PASSWORD); none: unsigned")
	trimpath := fs.Bool("trimpath", true, "build with -trimpath (reproducible on any machine)")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	o := options{out: *out, version: *version, commit: *commit, ldflags: *ldflags, key: *key, trimpath: *trimpath}
	for _, p := range strings.Split(*platforms, ",") {
		if p = strings.TrimSpace(p); !strings.Contains(p, "/") {
			return o, fmt.Errorf("platform %q: want os/arch", p)
		}
		o.platforms = append(o.platforms, p)
	}
	if *created != "" {
		e, err := strconv.ParseInt(*created, 10, 64)
		if err != nil {
			return o, fmt.Errorf("--created %q: want Unix seconds", *created)
		}
		o.epoch = e
	}
	return o, nil
}

func run(ctx context.Context, args []string, log io.Writer) error {
	o, err := parse(args)
	if err != nil {
		return err
	}
	var signer *signing.PrivateKey
	if o.key != "" {
		data, err := os.ReadFile(o.key)
		if err != nil {
			return err
		}
		var pw []byte
		if p, ok := os.LookupEnv("COSIGN_PASSWORD"); ok {
			pw = []byte(p)
		}
		if signer, err = signing.ParsePrivateKey(data, pw); err != nil {
			return fmt.Errorf("%s: %w", o.key, err)
		}
	}
	if err := os.RemoveAll(o.out); err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	mtime := time.Unix(o.epoch, 0).UTC()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		return err
	}
	var files []string
	var sbomBinary string
	build := filepath.Join(o.out, ".build")
	for _, p := range o.platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		exe := "convoy"
		if goos == "windows" {
			exe += ".exe"
		}
		bin := filepath.Join(build, goos+"_"+goarch, exe)
		fmt.Fprintf(log, "build %s\n", p)
		args := []string{"build", "-ldflags", o.ldflags, "-o", bin}
		if o.trimpath {
			args = append(args, "-trimpath")
		}
		cmd := exec.CommandContext(ctx, "go", append(args, "./cmd/convoy")...)
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build %s: %w", p, err)
		}
		if sbomBinary == "" {
			sbomBinary = bin
		}
		name := fmt.Sprintf("convoy_%s_%s_%s", o.version, goos, goarch)
		contents := []entry{{exe, bin, 0o755}, {"README.md", "", 0o644}}
		var archive string
		if goos == "windows" {
			archive = name + ".zip"
			err = writeZip(filepath.Join(o.out, archive), contents, readme, mtime)
		} else {
			archive = name + ".tar.gz"
			err = writeTarGz(filepath.Join(o.out, archive), contents, readme, mtime)
		}
		if err != nil {
			return err
		}
		files = append(files, archive)
	}
	// The controller's chart, carrying the binaries' version: its
	// appVersion is the version, so its default image is the tag `make
	// image` pushes for it (deploy.DefaultImage).
	chartFile, err := packageChart(o.out, chartDir, o.version, mtime)
	if err != nil {
		return err
	}
	files = append(files, chartFile)
	sbom := fmt.Sprintf("convoy_%s.spdx.json", o.version)
	data, err := spdx(sbomBinary, o, mtime)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, sbom), data, 0o644); err != nil {
		return err
	}
	files = append(files, sbom)
	if err := os.RemoveAll(build); err != nil {
		return err
	}
	var sums bytes.Buffer
	slices.Sort(files)
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(o.out, f))
		if err != nil {
			return err
		}
		h := sha256.Sum256(data)
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(h[:]), f)
	}
	if err := os.WriteFile(filepath.Join(o.out, "SHA256SUMS"), sums.Bytes(), 0o644); err != nil {
		return err
	}
	if signer == nil {
		fmt.Fprintln(log, "SHA256SUMS not signed: no --key")
		return nil
	}
	sig, err := signer.Sign(sums.Bytes())
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, "SHA256SUMS.sig"), []byte(base64.StdEncoding.EncodeToString(sig)), 0o644); err != nil {
		return err
	}
	pub, err := signer.Public().PEM()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(o.out, "convoy.pub"), pub, 0o644)
}

// entry is a file of an archive: from path, or README.md's bytes.
type entry struct {
	name, path string
	mode       int64
}

func (e entry) read(readme []byte) ([]byte, error) {
	if e.path == "" {
		return readme, nil
	}
	return os.ReadFile(e.path)
}

func writeTarGz(path string, entries []entry, readme []byte, mtime time.Time) error {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.ModTime = mtime
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		data, err := e.read(readme)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: e.name, Mode: e.mode, Size: int64(len(data)), ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatPAX, Uname: "root", Gname: "root"}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func writeZip(path string, entries []entry, readme []byte, mtime time.Time) error {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		data, err := e.read(readme)
		if err != nil {
			return err
		}
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: mtime}
		h.SetMode(os.FileMode(e.mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// spdx is an SPDX 2.3 document of the binary: convoy, the Go standard
// library and every module the build info names, each with its purl.
func spdx(binary string, o options, created time.Time) ([]byte, error) {
	bi, err := buildinfo.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	type ref struct {
		Category string `json:"referenceCategory"`
		Type     string `json:"referenceType"`
		Locator  string `json:"referenceLocator"`
	}
	type pkg struct {
		Name             string `json:"name"`
		SPDXID           string `json:"SPDXID"`
		VersionInfo      string `json:"versionInfo"`
		DownloadLocation string `json:"downloadLocation"`
		FilesAnalyzed    bool   `json:"filesAnalyzed"`
		ExternalRefs     []ref  `json:"externalRefs,omitempty"`
	}
	type rel struct {
		Element string `json:"spdxElementId"`
		Type    string `json:"relationshipType"`
		Related string `json:"relatedSpdxElement"`
	}
	purl := func(path, v string) []ref {
		return []ref{{"PACKAGE-MANAGER", "purl", "pkg:golang/" + path + "@" + v}}
	}
	root := pkg{Name: "convoy", SPDXID: "SPDXRef-Package-convoy", VersionInfo: o.version, DownloadLocation: "https://github.com/convoy-sh/convoy", ExternalRefs: purl(bi.Main.Path, o.version)}
	pkgs := []pkg{root, {Name: "stdlib", SPDXID: "SPDXRef-Package-stdlib", VersionInfo: bi.GoVersion, DownloadLocation: "https://go.dev/dl/", ExternalRefs: purl("stdlib", bi.GoVersion)}}
	rels := []rel{{"SPDXRef-DOCUMENT", "DESCRIBES", root.SPDXID}, {root.SPDXID, "DEPENDS_ON", "SPDXRef-Package-stdlib"}}
	for i, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		id := fmt.Sprintf("SPDXRef-Package-go-%d", i)
		pkgs = append(pkgs, pkg{Name: d.Path, SPDXID: id, VersionInfo: d.Version, DownloadLocation: "https://proxy.golang.org/" + d.Path + "/@v/" + d.Version + ".zip", ExternalRefs: purl(d.Path, d.Version)})
		rels = append(rels, rel{root.SPDXID, "DEPENDS_ON", id})
	}
	doc := map[string]any{
		"spdxVersion":       "SPDX-2.3",
		"dataLicense":       "CC0-1.0",
		"SPDXID":            "SPDXRef-DOCUMENT",
		"name":              "convoy-" + o.version,
		"documentNamespace": "https://github.com/convoy-sh/convoy/spdx/convoy-" + o.version + "-" + o.commit,
		"creationInfo":      map[string]any{"created": created.Format(time.RFC3339), "creators": []string{"Tool: convoy-hack-dist"}},
		"packages":          pkgs,
		"relationships":     rels,
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	return append(out, '\n'), err
}

// chartDir is the controller's chart in the repository.
const chartDir = "deploy/chart/convoy-controller"

// ChartVersion is the chart version of a convoy version: the version
// without its v when it is MAJOR.MINOR.PATCH[-pre][+build], else a
// pre-release of 0.0.0 (a git describe such as 8e0fa20-dirty).
func ChartVersion(version string) string {
	v := strings.TrimPrefix(version, "v")
	if semverRE.MatchString(v) {
		return v
	}
	return "0.0.0-" + strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '.' {
			return r
		}
		return '-'
	}, version)
}

var semverRE = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// packageChart writes dir as a Helm chart archive (the files under the
// chart's name, as helm package lays them out) whose Chart.yaml has the
// chart version of version and appVersion version.
func packageChart(out, dir, version string, mtime time.Time) (string, error) {
	meta, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return "", err
	}
	nameRE := regexp.MustCompile(`(?m)^name:\s*(\S+)\s*$`)
	m := nameRE.FindSubmatch(meta)
	if m == nil {
		return "", fmt.Errorf("%s/Chart.yaml names no chart", dir)
	}
	name := string(m[1])
	cv := ChartVersion(version)
	for _, f := range []struct{ key, value string }{{"version", cv}, {"appVersion", strconv.Quote(version)}} {
		re := regexp.MustCompile(`(?m)^` + f.key + `:.*$`)
		if !re.Match(meta) {
			return "", fmt.Errorf("%s/Chart.yaml has no %s", dir, f.key)
		}
		meta = re.ReplaceAll(meta, []byte(f.key+": "+f.value))
	}
	var paths []string
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err == nil {
			paths = append(paths, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		return "", err
	}
	slices.Sort(paths)
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.ModTime = mtime
	tw := tar.NewWriter(zw)
	for _, rel := range paths {
		data := meta
		if rel != "Chart.yaml" {
			if data, err = os.ReadFile(filepath.Join(dir, rel)); err != nil {
				return "", err
			}
		}
		hdr := &tar.Header{Name: name + "/" + rel, Mode: 0o644, Size: int64(len(data)), ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return "", err
		}
		if _, err := tw.Write(data); err != nil {
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	file := fmt.Sprintf("%s-%s.tgz", name, cv)
	return file, os.WriteFile(filepath.Join(out, file), buf.Bytes(), 0o644)
}
