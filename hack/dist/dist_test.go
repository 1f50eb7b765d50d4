package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/deploy"
	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/devcluster"
)

// dist for this machine's platform (the make target builds all six):
// the archive holds a convoy whose `version` names the version, commit and
// date given; SHA256SUMS lists the archive and the SBOM; cosign
// verify-blob (the oracle) accepts the signature of SHA256SUMS made with
// convoy's signing code and refuses it with another key or other sums;
// with CONVOY_DIST_TWICE a second run gives the same SHA256SUMS.
func TestDistSignedSumsCosignOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("builds convoy and runs the cosign oracle")
	}
	cosign, err := devcluster.LocateCosign(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join("..", ".."))
	keys, _ := filepath.Abs(filepath.Join("internal", "signing", "testdata"))
	platform := runtime.GOOS + "/" + runtime.GOARCH
	const commit, date = "0123456789abcdef0123456789abcdef01234567", "2024-05-01T10:00:00Z"
	ldflags := "-X github.com/convoy-sh/convoy/internal/version.version=v9.8.7 -X github.com/convoy-sh/convoy/internal/version.commit=" + commit +
		" -X github.com/convoy-sh/convoy/internal/version.date=" + date + " -s -w"
	dist := func() string {
		out := filepath.Join(t.TempDir(), "dist")
		args := []string{"--out", out, "--version", "v9.8.7", "--commit", commit, "--created", "1714557600", "--ldflags", ldflags,
			"--platforms", platform, "--key", filepath.Join(keys, "openssl-p256.key"),
			// The test shares the build cache of the other tests' builds;
			// make dist trims paths.
			"--trimpath=false"}
		var log bytes.Buffer
		if err := run(context.Background(), args, &log); err != nil {
			t.Fatalf("dist: %v\n%s", err, log.String())
		}
		return out
	}
	out := dist()
	archive := "convoy_v9.8.7_" + runtime.GOOS + "_" + runtime.GOARCH + ".tar.gz"
	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{archive, "convoy_v9.8.7.spdx.json"} {
		data, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(data)
		if !strings.Contains(string(sums), hex.EncodeToString(h[:])+"  "+f+"\n") {
			t.Errorf("SHA256SUMS lacks %s:\n%s", f, sums)
		}
	}

	verify := func(pub, sumsFile string) (string, error) {
		cmd := exec.Command(cosign, "verify-blob", "--key", pub, "--signature", filepath.Join(out, "SHA256SUMS.sig"), "--insecure-ignore-tlog=true", sumsFile)
		home := t.TempDir()
		cmd.Env = append(os.Environ(), "HOME="+home, "TUF_ROOT="+filepath.Join(home, "tuf"))
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	if b, err := verify(filepath.Join(out, "convoy.pub"), filepath.Join(out, "SHA256SUMS")); err != nil {
		t.Fatalf("cosign verify-blob refused the signature: %v\n%s", err, b)
	}
	if b, err := verify(filepath.Join(keys, "cosign.pub"), filepath.Join(out, "SHA256SUMS")); err == nil {
		t.Errorf("cosign verify-blob accepted another key:\n%s", b)
	}
	tampered := filepath.Join(t.TempDir(), "SHA256SUMS")
	os.WriteFile(tampered, append(sums, "0000  evil.tar.gz\n"...), 0o644)
	if b, err := verify(filepath.Join(out, "convoy.pub"), tampered); err == nil {
		t.Errorf("cosign verify-blob accepted other sums:\n%s", b)
	}

	// The binary in the archive says which build it is.
	bin := filepath.Join(t.TempDir(), "convoy")
	extract(t, filepath.Join(out, archive), "convoy", bin)
	got, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Version, Commit, Date, GoVersion string }
	if err := json.Unmarshal(got, &v); err != nil || v.Version != "v9.8.7" || v.Commit != commit || v.Date != date || v.GoVersion != runtime.Version() {
		t.Errorf("convoy version: %s (%v)", got, err)
	}

	// The controller's chart carries the same version, and its default
	// image is the one `make image` pushes for it.
	checkChartVersion(t, out, sums, v.Version)

	var sbom struct {
		SPDXVersion string `json:"spdxVersion"`
		Packages    []struct{ Name, VersionInfo string }
	}
	data, _ := os.ReadFile(filepath.Join(out, "convoy_v9.8.7.spdx.json"))
	if err := json.Unmarshal(data, &sbom); err != nil || sbom.SPDXVersion != "SPDX-2.3" || len(sbom.Packages) < 20 || !strings.Contains(string(data), `"pkg:golang/github.com/hashicorp/hcl/v2@v2.25.0"`) {
		t.Errorf("SBOM: %v %s, %d packages", err, sbom.SPDXVersion, len(sbom.Packages))
	}

	// A second build takes minutes on a shared machine: asked for.
	if os.Getenv("CONVOY_DIST_TWICE") == "" {
		t.Log("set CONVOY_DIST_TWICE=1 to check that a second build gives the same SHA256SUMS")
		return
	}
	if again, _ := os.ReadFile(filepath.Join(dist(), "SHA256SUMS")); !bytes.Equal(again, sums) {
		t.Errorf("a second build differs:\n%s\n%s", sums, again)
	}
}

func extract(t *testing.T, archive, name, to string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s has no %s: %v", archive, name, err)
		}
		if h.Name == name {
			w, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(w, tr)
			w.Close()
			return
		}
	}
}

// checkChartVersion checks that the release's chart is listed in
// SHA256SUMS, carries version (appVersion; the chart version without the
// v) and runs deploy.DefaultImage(version) by default, and that the
// Makefile's image target pushes that image with the binary of that
// version.
func checkChartVersion(t *testing.T, out string, sums []byte, version string) {
	t.Helper()
	file := "convoy-controller-" + ChartVersion(version) + ".tgz"
	data, err := os.ReadFile(filepath.Join(out, file))
	if err != nil {
		t.Fatalf("no chart in the release files: %v", err)
	}
	h := sha256.Sum256(data)
	if !strings.Contains(string(sums), hex.EncodeToString(h[:])+"  "+file+"\n") {
		t.Errorf("SHA256SUMS lacks %s:\n%s", file, sums)
	}
	ch, err := chart.LoadArchive(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if ch.Metadata.AppVersion != version || ch.Metadata.Version != strings.TrimPrefix(version, "v") {
		t.Errorf("the chart is version %s, appVersion %s; convoy is %s", ch.Metadata.Version, ch.Metadata.AppVersion, version)
	}
	r, err := chart.Render(ch, chart.RenderOptions{ReleaseName: "convoy", Namespace: "convoy-system"})
	if err != nil {
		t.Fatal(err)
	}
	image := ""
	for _, m := range r.Manifests {
		if m.Kind == "Deployment" {
			if i := strings.Index(m.Content, "image: "); i >= 0 {
				image = strings.Trim(strings.Fields(m.Content[i+len("image: "):])[0], `"'`)
			}
		}
	}
	if want := deploy.DefaultImage(version); image != want {
		t.Errorf("the chart runs image %q, want %q", image, want)
	}
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"IMAGE ?= " + deploy.DefaultImage("$(VERSION)") + "\n", "go run ./hack/image --image '$(IMAGE)'", "--version '$(VERSION)'"} {
		if !strings.Contains(string(mk), w) {
			t.Errorf("the Makefile's image target lacks %q: the image would not carry the binaries' version", w)
		}
	}
}

func TestChartVersion(t *testing.T) {
	for in, want := range map[string]string{"v1.2.3": "1.2.3", "1.2.3-rc.1": "1.2.3-rc.1", "8e0fa20": "0.0.0-8e0fa20", "v0.3.0-4-g8e0fa20-dirty": "0.3.0-4-g8e0fa20-dirty", "dev": "0.0.0-dev"} {
		if got := ChartVersion(in); got != want {
			t.Errorf("ChartVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

// convoy compiles for Windows, where syscalls of Unix (kill(2) to see
// whether a lock's holder still runs) do not exist: make dist failed
// there once, and the test above builds only this machine's platform.
// Type-checked and compiled, not linked.
func TestConvoyCompilesForWindows(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles convoy for windows/amd64")
	}
	cmd := exec.Command("go", "build", "-o", os.DevNull, "./cmd/convoy")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/convoy for windows/amd64: %v\n%s", err, out)
	}
}
