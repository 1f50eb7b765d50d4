package releases

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// maxValuesFile is the largest file a stack reads (internal/safefile): a
// larger values file is written, and listed as left by hand.
const maxValuesFile = 4 << 20

// Options shape the stack written.
type Options struct {
	// StackName is the name the written stack will have (its directory's):
	// a release this stack already owns needs no adopt_from_stack.
	StackName string
	// Selector keeps only releases whose record labels match (-l).
	Selector labels.Selector
	// ClusterName, when set, writes a cluster block of that name (with
	// Kubeconfig and Context, when set) and puts every release on it.
	ClusterName         string
	Kubeconfig, Context string
	// Repos maps a chart name to the URL of the chart repository it comes
	// from (--repo NAME=URL): its releases name the chart there instead of
	// writing it from the record.
	Repos map[string]string
}

// Skipped is a release left out of the stack, and why.
type Skipped struct {
	Namespace, Name string
	Reason          string
}

func (s Skipped) String() string { return fmt.Sprintf("%s/%s: %s", s.Namespace, s.Name, s.Reason) }

// Result is the stack written from the records.
type Result struct {
	// Files are the stack's files by slash-separated path relative to the
	// stack directory.
	Files map[string][]byte
	// Imported are the releases written, as namespace/name.
	Imported []string
	// Skipped are the releases left out, with the reason.
	Skipped []Skipped
	// LeftByHand lists what the stack still needs by hand, one line each;
	// the same list heads stack.hcl.
	LeftByHand []string
}

// RepoAnnotation, in a chart's Chart.yaml annotations, names the chart
// repository the chart comes from (as --repo does): its releases name the
// chart there instead of writing it from the record.
const RepoAnnotation = "convoy.dev/repository"

// imported is one release being written.
type imported struct {
	rec   release.Newest
	label string
	block string
}

// Generate writes a stack from the newest record of each release.
func Generate(records []release.Newest, opts Options) *Result {
	res := &Result{Files: map[string][]byte{}}
	var keep []release.Newest
	for _, n := range records {
		switch {
		case n.Release == nil:
			res.Skipped = append(res.Skipped, Skipped{n.Namespace, n.Name, fmt.Sprintf("its newest record (revision %d) cannot be read: %v", n.Revision, n.Err)})
		case opts.Selector != nil && !opts.Selector.Matches(labels.Set(n.Release.Labels)):
		case n.Status != release.StatusDeployed:
			reason := fmt.Sprintf("its newest revision (%d) is %s, not deployed", n.Revision, n.Status)
			if d := n.Release.Info.Description; d != "" {
				reason += ": " + d
			}
			res.Skipped = append(res.Skipped, Skipped{n.Namespace, n.Name, reason})
		case n.Release.Chart == nil || n.Release.Chart.Metadata == nil:
			res.Skipped = append(res.Skipped, Skipped{n.Namespace, n.Name, "its record holds no chart"})
		default:
			keep = append(keep, n)
		}
	}
	// Block labels: the release name, with its namespace when two
	// namespaces hold releases of the same name.
	count := map[string]int{}
	for _, n := range keep {
		count[identifier(n.Name)]++
	}
	used := map[string]bool{}
	repos := map[string]string{} // URL → repository block label
	var blocks []string
	for _, n := range keep {
		label := identifier(n.Name)
		if count[label] > 1 {
			label = identifier(n.Name + "_" + n.Namespace)
		}
		for base, i := label, 2; used[label]; i++ {
			label = fmt.Sprintf("%s_%d", base, i)
		}
		block, err := res.release(n, label, opts, repos)
		if err != nil {
			res.Skipped = append(res.Skipped, Skipped{n.Namespace, n.Name, err.Error()})
			continue
		}
		used[label] = true
		blocks = append(blocks, block)
		res.Imported = append(res.Imported, n.Namespace+"/"+n.Name)
	}
	res.Files["stack.hcl"] = res.stackFile(blocks, repos, opts)
	return res
}

// release writes one release's block and files.
func (res *Result) release(n release.Newest, label string, opts Options, repos map[string]string) (string, error) {
	r := n.Release
	md := r.Chart.Metadata
	var b strings.Builder
	fmt.Fprintf(&b, "release %q {\n", label)
	if label != r.Name {
		fmt.Fprintf(&b, "  name = %s\n", hclString(r.Name))
	}
	fmt.Fprintf(&b, "  namespace = %s\n", hclString(r.Namespace))

	repoURL := opts.Repos[md.Name]
	if repoURL == "" {
		repoURL = md.Annotations[RepoAnnotation]
	}
	if repoURL != "" {
		repo, ok := repos[repoURL]
		if !ok {
			repo = identifier(md.Name)
			for taken := slices.Collect(maps.Values(repos)); slices.Contains(taken, repo); {
				repo += "_"
			}
			repos[repoURL] = repo
		}
		fmt.Fprintf(&b, "  chart = %s\n", hclString(repo+"/"+md.Name))
		fmt.Fprintf(&b, "  version = %s\n", hclString(md.Version))
	} else {
		files, err := chartFiles(r.Chart)
		if err != nil {
			return "", err
		}
		dir := "charts/" + chartDirName(md)
		if err := res.addChart(dir, files); err != nil {
			// Another release's chart of the same name and version with
			// other files: keep both.
			dir = "charts/" + chartDirName(md) + "-" + label
			if err := res.addChart(dir, files); err != nil {
				return "", err
			}
		}
		fmt.Fprintf(&b, "  chart = %s\n", hclString("./"+dir))
		if len(md.Dependencies) > 0 {
			names := make([]string, 0, len(md.Dependencies))
			for _, d := range md.Dependencies {
				if d != nil {
					names = append(names, d.Name)
				}
			}
			res.LeftByHand = append(res.LeftByHand, fmt.Sprintf("release.%s: the chart %s declares dependencies (%s) that Helm release records do not carry: add them under %s/charts/ (helm dependency build %s), or name the chart's repository with --repo %s=URL",
				label, md.Name, strings.Join(names, ", "), dir, dir, md.Name))
		}
	}
	if opts.ClusterName != "" {
		fmt.Fprintf(&b, "  cluster = cluster.%s\n", identifier(opts.ClusterName))
	}

	if len(r.Config) > 0 {
		plain, secret := splitSensitive(r.Config)
		b.WriteString("  values = [\n")
		if len(plain) > 0 {
			p := "values/" + label + ".yaml"
			if err := res.addValues(p, plain, ""); err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "    file(%s),\n", hclString(p))
		}
		if secret != nil {
			p := "secrets/" + label + ".yaml"
			if err := res.addValues(p, secret, sopsHeader(p)); err != nil {
				return "", err
			}
			b.WriteString(comment("    ", fmt.Sprintf("Sensitive-looking values, in plain text: encrypt the file with SOPS\n(sops --encrypt --in-place %s), then read it with sops_file instead of file.", p)))
			fmt.Fprintf(&b, "    file(%s),\n", hclString(p))
			res.LeftByHand = append(res.LeftByHand, fmt.Sprintf("release.%s: %s holds sensitive-looking values in plain text: encrypt it with SOPS and read it with sops_file", label, p))
		}
		b.WriteString("  ]\n")
	}

	userLabels := map[string]string{}
	for k, v := range r.Labels {
		if !strings.HasPrefix(k, "convoy.dev/") {
			userLabels[k] = v
		}
	}
	if len(userLabels) > 0 {
		b.WriteString("  labels = {\n")
		for _, k := range slices.Sorted(maps.Keys(userLabels)) {
			fmt.Fprintf(&b, "    %s = %s\n", hclString(k), hclString(userLabels[k]))
		}
		b.WriteString("  }\n")
	}
	switch owner := r.Labels[release.StackLabel]; {
	case owner != "" && owner != opts.StackName:
		fmt.Fprintf(&b, "  adopt_from_stack = %s\n", hclString(owner))
	case owner == "":
		// No stack wrote it (helm did, or a stack let it go): the stack
		// takes it over only when it says so.
		b.WriteString("  adopt            = true\n")
	}
	b.WriteString(comment("  ", "wait and timeout: Helm's records do not say whether it waited; convoy waits\nfor readiness by default (wait = true, timeout = \"5m\")."))
	b.WriteString(comment("  ", "depends_on: the cluster does not say which releases this one needs first;\nadd them by hand, e.g. depends_on = [release.db]."))
	b.WriteString("}\n")
	return b.String(), nil
}

// addChart adds a chart directory's files; an error when the directory
// already holds other files.
func (res *Result) addChart(dir string, files map[string][]byte) error {
	for name, data := range files {
		if old, ok := res.Files[path.Join(dir, name)]; ok && string(old) != string(data) {
			return fmt.Errorf("%s holds another chart", dir)
		}
	}
	for name, data := range files {
		res.Files[path.Join(dir, name)] = data
	}
	return nil
}

// addValues writes a values file.
func (res *Result) addValues(p string, v map[string]any, header string) error {
	out, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Errorf("values: %w", err)
	}
	data := append([]byte(header), out...)
	if len(data) > maxValuesFile {
		res.LeftByHand = append(res.LeftByHand, fmt.Sprintf("%s is larger than the %d MiB a stack reads: split it", p, maxValuesFile>>20))
	}
	res.Files[p] = data
	return nil
}

func sopsHeader(p string) string {
	return fmt.Sprintf("# Sensitive-looking values of the release, in plain text. Encrypt this file\n# with SOPS before committing it: sops --encrypt --in-place %s\n# then read it in stack.hcl with sops_file instead of file.\n", p)
}

// stackFile is stack.hcl: what is left by hand and what was skipped, the
// cluster and repository blocks, then the releases.
func (res *Result) stackFile(blocks []string, repos map[string]string, opts Options) []byte {
	var b strings.Builder
	b.WriteString("# Written by convoy import releases from the Helm release records on the\n# cluster. Check it with: convoy init && convoy plan (it should show no changes).\n")
	if len(res.LeftByHand) > 0 {
		b.WriteString("#\n# LEFT BY HAND:\n")
		for _, l := range res.LeftByHand {
			b.WriteString(comment("", "- "+l))
		}
	}
	if len(res.Skipped) > 0 {
		b.WriteString("#\n# Releases not imported:\n")
		for _, s := range res.Skipped {
			b.WriteString(comment("", "- "+s.String()))
		}
	}
	if opts.ClusterName != "" {
		fmt.Fprintf(&b, "\ncluster %q {\n", identifier(opts.ClusterName))
		if opts.Kubeconfig != "" {
			fmt.Fprintf(&b, "  kubeconfig = %s\n", hclString(opts.Kubeconfig))
		}
		if opts.Context != "" {
			fmt.Fprintf(&b, "  context = %s\n", hclString(opts.Context))
		}
		b.WriteString("}\n")
	}
	for _, url := range slices.SortedFunc(maps.Keys(repos), func(a, b string) int { return strings.Compare(repos[a], repos[b]) }) {
		fmt.Fprintf(&b, "\nrepository %q {\n  url = %s\n}\n", repos[url], hclString(url))
	}
	for _, bl := range blocks {
		b.WriteString("\n")
		b.WriteString(bl)
	}
	return hclwrite.Format([]byte(b.String()))
}

// Write writes the stack under dir (created if missing), refusing a
// directory that already holds a stack.hcl. Every file is written through
// an os.Root of dir: nothing lands outside it, whatever a path says or a
// symbolic link in dir points to. The secrets files are written 0600.
func (res *Result) Write(dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, "stack.hcl")); err == nil {
		return fmt.Errorf("%s already holds a stack.hcl: choose an empty directory", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(res.Files)) {
		p := filepath.FromSlash(name)
		if err := root.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			errs = append(errs, err)
			continue
		}
		perm := os.FileMode(0o644)
		if strings.HasPrefix(name, "secrets/") {
			perm = 0o600
		}
		if err := root.WriteFile(p, res.Files[name], perm); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
