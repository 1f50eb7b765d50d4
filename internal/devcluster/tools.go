package devcluster

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// LocateHelm finds the helm oracle: CONVOY_HELM, else the tools cache at the
// version pinned in hack/tools.env (built by hack/build-tools.sh helm).
func LocateHelm(getenv func(string) string) (string, error) {
	path := getenv("CONVOY_HELM")
	if path == "" {
		versions, err := readToolVersions()
		if err != nil {
			return "", err
		}
		cache, err := toolsCacheDir(getenv)
		if err != nil {
			return "", err
		}
		path = filepath.Join(cache, "helm-"+versions["HELM_VERSION"], "bin", "helm")
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("helm oracle not built (%s): run `make tools` (hack/build-tools.sh helm)", path)
	}
	return path, nil
}

// LocateHelm3 finds Helm 3 (client-side apply), whose releases convoy
// upgrades: CONVOY_HELM3, else the tools cache at the version pinned in
// hack/tools.env (built by hack/build-tools.sh helm3).
func LocateHelm3(getenv func(string) string) (string, error) {
	path := getenv("CONVOY_HELM3")
	if path == "" {
		versions, err := readToolVersions()
		if err != nil {
			return "", err
		}
		if versions["HELM3_VERSION"] == "" {
			return "", errors.New("hack/tools.env does not pin HELM3_VERSION")
		}
		cache, err := toolsCacheDir(getenv)
		if err != nil {
			return "", err
		}
		path = filepath.Join(cache, "helm3-"+versions["HELM3_VERSION"], "bin", "helm")
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("helm 3 not built (%s): run `make tools` (hack/build-tools.sh helm3)", path)
	}
	return path, nil
}

// LocateRegistry finds the OCI registry the chart-source tests run
// (distribution's cmd/registry): CONVOY_REGISTRY, else the tools cache at the
// version pinned in hack/tools.env (built by hack/build-tools.sh registry).
func LocateRegistry(getenv func(string) string) (string, error) {
	path := getenv("CONVOY_REGISTRY")
	if path == "" {
		versions, err := readToolVersions()
		if err != nil {
			return "", err
		}
		if versions["REGISTRY_VERSION"] == "" {
			return "", errors.New("hack/tools.env does not pin REGISTRY_VERSION")
		}
		cache, err := toolsCacheDir(getenv)
		if err != nil {
			return "", err
		}
		path = filepath.Join(cache, "registry-"+versions["REGISTRY_VERSION"], "bin", "registry")
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("OCI registry not built (%s): run `make tools` (hack/build-tools.sh registry)", path)
	}
	return path, nil
}

// LocatePrometheus finds the Prometheus server the metric gate's tests
// query: CONVOY_PROMETHEUS, else the tools cache at the version pinned in
// hack/tools.env (built by hack/build-tools.sh prometheus).
func LocatePrometheus(getenv func(string) string) (string, error) {
	path := getenv("CONVOY_PROMETHEUS")
	if path == "" {
		versions, err := readToolVersions()
		if err != nil {
			return "", err
		}
		if versions["PROMETHEUS_VERSION"] == "" {
			return "", errors.New("hack/tools.env does not pin PROMETHEUS_VERSION")
		}
		cache, err := toolsCacheDir(getenv)
		if err != nil {
			return "", err
		}
		path = filepath.Join(cache, "prometheus-"+versions["PROMETHEUS_VERSION"], "bin", "prometheus")
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("prometheus not built (%s): run `make tools` (hack/build-tools.sh prometheus)", path)
	}
	return path, nil
}
