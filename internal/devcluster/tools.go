package devcluster

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Tools locates the binaries a cluster runs.
type Tools struct {
	KubeBinDir string // holds etcd, kube-apiserver, kube-controller-manager, kube-scheduler
	Kwok       string // the kwok binary
}

var kubeBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}

// check reports every missing binary at once.
func (t Tools) check() error {
	var missing []string
	for _, b := range kubeBinaries {
		if _, err := os.Stat(filepath.Join(t.KubeBinDir, b)); err != nil {
			missing = append(missing, filepath.Join(t.KubeBinDir, b))
		}
	}
	if _, err := os.Stat(t.Kwok); err != nil {
		missing = append(missing, t.Kwok)
	}
	if len(missing) > 0 {
		return fmt.Errorf("devcluster tools not built (missing %s): run `make tools` (hack/build-tools.sh)", strings.Join(missing, ", "))
	}
	return nil
}

// LocateTools finds the tool binaries. getenv is injected (os.Getenv in
// production). CONVOY_KUBE_BIN_DIR and CONVOY_KWOK_BIN name them directly (the
// Makefile sets both); otherwise the pinned versions are read from
// hack/tools.env in the enclosing convoy checkout and looked up in the tools
// cache, exactly where hack/build-tools.sh puts them.
func LocateTools(getenv func(string) string) (Tools, error) {
	t := Tools{KubeBinDir: getenv("CONVOY_KUBE_BIN_DIR"), Kwok: getenv("CONVOY_KWOK_BIN")}
	if t.KubeBinDir == "" || t.Kwok == "" {
		versions, err := readToolVersions()
		if err != nil {
			return Tools{}, err
		}
		cache, err := toolsCacheDir(getenv)
		if err != nil {
			return Tools{}, err
		}
		t.KubeBinDir = cmp.Or(t.KubeBinDir, filepath.Join(cache, "k8s-"+versions["K8S_VERSION"], "bin"))
		t.Kwok = cmp.Or(t.Kwok, filepath.Join(cache, "kwok-"+versions["KWOK_VERSION"], "bin", "kwok"))
	}
	return t, t.check()
}

// toolsCacheDir mirrors hack/build-tools.sh.
func toolsCacheDir(getenv func(string) string) (string, error) {
	if d := getenv("CONVOY_TOOLS_DIR"); d != "" {
		return d, nil
	}
	if d := getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "convoy", "tools"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("cannot find the tools cache: neither CONVOY_TOOLS_DIR, XDG_CACHE_HOME nor HOME is set")
	}
	return filepath.Join(home, ".cache", "convoy", "tools"), nil
}

// readToolVersions parses hack/tools.env of the checkout containing the
// working directory.
func readToolVersions() (map[string]string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	for {
		path := filepath.Join(dir, "hack", "tools.env")
		f, err := os.Open(path)
		if err == nil {
			defer f.Close()
			versions := map[string]string{}
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				line := strings.TrimSpace(sc.Text())
				if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
					versions[k] = v
				}
			}
			if versions["K8S_VERSION"] == "" || versions["KWOK_VERSION"] == "" {
				return nil, fmt.Errorf("%s does not pin K8S_VERSION and KWOK_VERSION", path)
			}
			return versions, sc.Err()
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, errors.New("cannot locate the devcluster tools: set CONVOY_KUBE_BIN_DIR and CONVOY_KWOK_BIN, or run from a convoy checkout (hack/tools.env)")
		}
		dir = parent
	}
}

// oracle describes a binary that some tests run, built by
// hack/build-tools.sh NAME into the tools cache.
type oracle struct {
	name    string // hack/build-tools.sh's name for it; its lock is $TOOLS/.build-NAME.lock
	env     string // the variable that names it directly (the Makefile sets it)
	version string // its pin in hack/tools.env
	bin     string // the path below $TOOLS/NAME-VERSION
	system  bool   // a package manager's build on PATH will do
	// onPath is its name on PATH, when it differs from bin's base name.
	onPath string
	// unpacked is where build-tools.sh puts a package manager's build
	// below $TOOLS, when it unpacks one there ("": never).
	unpacked string
	what     string // for errors
}

var (
	helmOracle       = oracle{name: "helm", env: "CONVOY_HELM", version: "HELM_VERSION", bin: "bin/helm", what: "helm oracle"}
	helm3Oracle      = oracle{name: "helm3", env: "CONVOY_HELM3", version: "HELM3_VERSION", bin: "bin/helm", what: "helm 3"}
	registryOracle   = oracle{name: "registry", env: "CONVOY_REGISTRY", version: "REGISTRY_VERSION", bin: "bin/registry", unpacked: "registry-debian/bin/registry", system: true, onPath: "docker-registry", what: "OCI registry"}
	helmfileOracle   = oracle{name: "helmfile", env: "CONVOY_HELMFILE", version: "HELMFILE_VERSION", bin: "bin/helmfile", what: "helmfile oracle"}
	cosignOracle     = oracle{name: "cosign", env: "CONVOY_COSIGN", version: "COSIGN_VERSION", bin: "bin/cosign", what: "cosign oracle"}
	prometheusOracle = oracle{name: "prometheus", env: "CONVOY_PROMETHEUS", version: "PROMETHEUS_VERSION", bin: "bin/prometheus", system: true, what: "prometheus"}
	// Chromium is never built: Debian's package (hack/build-tools.sh
	// chromium installs it), found on PATH.
	chromiumOracle = oracle{name: "chromium", env: "CONVOY_CHROMIUM", bin: "chromium", system: true, what: "chromium (Debian's package)"}
)

// locate finds o: the path its variable names, else the tools cache at the
// version pinned in hack/tools.env, else (for a tool a package manager may
// give) the PATH. When it is not there yet and hack/build-tools.sh is
// building it (hack/test.sh builds the oracles while the tests run), locate
// waits for that build to end, then looks again.
func locate(getenv func(string) string, o oracle) (string, error) {
	path := getenv(o.env)
	if path != "" && exists(path) {
		return path, nil
	}
	cache, cacheErr := toolsCacheDir(getenv)
	if cacheErr == nil {
		waitForBuild(filepath.Join(cache, ".build-"+o.name+".lock"))
	}
	var tried []string
	if path != "" {
		if exists(path) {
			return path, nil
		}
		tried = append(tried, path)
	}
	versions, err := readToolVersions()
	switch {
	case o.version == "": // only a package manager's build, on PATH
	case err != nil && path == "":
		return "", err
	case err == nil && versions[o.version] == "":
		return "", fmt.Errorf("hack/tools.env does not pin %s", o.version)
	case err == nil && cacheErr == nil:
		p := filepath.Join(cache, o.name+"-"+versions[o.version], filepath.FromSlash(o.bin))
		if exists(p) {
			return p, nil
		}
		tried = append(tried, p)
	}
	if o.unpacked != "" && cacheErr == nil {
		p := filepath.Join(cache, filepath.FromSlash(o.unpacked))
		if exists(p) {
			return p, nil
		}
		tried = append(tried, p)
	}
	if o.system {
		name := cmp.Or(o.onPath, filepath.Base(o.bin))
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
		tried = append(tried, name+" on PATH")
	}
	return "", fmt.Errorf("%s not built (looked for %s): run `make tools` (hack/build-tools.sh %s)", o.what, strings.Join(tried, ", "), o.name)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// LocateHelm finds the helm oracle (v4), built by hack/build-tools.sh helm.
func LocateHelm(getenv func(string) string) (string, error) { return locate(getenv, helmOracle) }

// LocateHelm3 finds Helm 3 (client-side apply), whose releases convoy
// upgrades (hack/build-tools.sh helm3).
func LocateHelm3(getenv func(string) string) (string, error) { return locate(getenv, helm3Oracle) }

// LocateRegistry finds the OCI registry the chart-source tests run
// (distribution's cmd/registry, 2.8 or later; hack/build-tools.sh
// registry): a source build at the pinned version, else Debian's
// docker-registry unpacked into the tools cache, else one on PATH.
func LocateRegistry(getenv func(string) string) (string, error) {
	return locate(getenv, registryOracle)
}

// LocateHelmfile finds helmfile, the oracle of `convoy import helmfile`
// (hack/build-tools.sh helmfile).
func LocateHelmfile(getenv func(string) string) (string, error) {
	return locate(getenv, helmfileOracle)
}

// LocateCosign finds cosign, the oracle of convoy push --sign-key's
// signatures (hack/build-tools.sh cosign).
func LocateCosign(getenv func(string) string) (string, error) {
	return locate(getenv, cosignOracle)
}

// LocatePrometheus finds the Prometheus server the metric gate's tests
// query: a source build in the tools cache, or one on PATH (Debian's
// package, which hack/build-tools.sh prometheus installs where it can).
func LocatePrometheus(getenv func(string) string) (string, error) {
	return locate(getenv, prometheusOracle)
}

// LocateChromium finds the headless browser convoy ui's tests drive:
// Debian's chromium package on PATH (hack/build-tools.sh chromium).
func LocateChromium(getenv func(string) string) (string, error) {
	return locate(getenv, chromiumOracle)
}

// LocatePostgreSQL finds the directory of PostgreSQL's server binaries
// (initdb, postgres, pg_ctl) the SQL storage's tests run: the directory
// CONVOY_POSTGRESQL_BIN_DIR names, else initdb and postgres on PATH, else
// Debian's package's newest /usr/lib/postgresql/VERSION/bin
// (hack/build-tools.sh postgresql installs it). Never built.
func LocatePostgreSQL(getenv func(string) string) (string, error) {
	if dir := getenv("CONVOY_POSTGRESQL_BIN_DIR"); dir != "" {
		if exists(filepath.Join(dir, "postgres")) && exists(filepath.Join(dir, "initdb")) {
			return dir, nil
		}
		return "", fmt.Errorf("CONVOY_POSTGRESQL_BIN_DIR=%s holds no postgres and initdb", dir)
	}
	if cache, err := toolsCacheDir(getenv); err == nil {
		waitForBuild(filepath.Join(cache, ".build-postgresql.lock"))
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		if dir := filepath.Dir(p); exists(filepath.Join(dir, "initdb")) {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	for _, dir := range dirs {
		if exists(filepath.Join(dir, "postgres")) && exists(filepath.Join(dir, "initdb")) {
			return dir, nil
		}
	}
	return "", errors.New("PostgreSQL not installed (looked for initdb and postgres on PATH and in /usr/lib/postgresql/*/bin): run `make tools` (hack/build-tools.sh postgresql installs Debian's postgresql package)")
}
