package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/stack/importer/helmfile"
	"github.com/convoy-sh/convoy/internal/stack/importer/releases"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
)

func newImportCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Convert another tool's configuration into a stack",
	}
	var out string
	hf := &cobra.Command{
		Use:   "helmfile FILE",
		Short: "Convert a helmfile.yaml into a stack directory",
		Long: `Import helmfile writes a stack (stack.hcl, and the values files the helmfile
reads) from a helmfile.yaml or helmfile.yaml.gotmpl: repositories, releases
(values, set, secrets as sops_file, needs as depends_on, installed as count,
labels, patches, helmDefaults) and environments (their values as variables).
bases and ---separated parts are merged as helmfile merges them. Go
templates are translated where they can be ({{ .Environment.Name }},
{{ .Values.x }}, {{ requiredEnv "X" }}, quote, default, printf, ...; a
.gotmpl values file becomes an HCL template read with templatefile); the
rest is kept as comments (LEFT BY HAND) where it stood. Everything left by
hand is printed, one warning per item, and listed at the head of stack.hcl.
Check the result with convoy validate.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("-o DIR is required")
			}
			res, err := helmfile.Convert(args[0])
			if err != nil {
				return err
			}
			if err := res.Write(out); err != nil {
				return err
			}
			for _, w := range res.LeftByHand {
				fmt.Fprintf(s.Err, "Warning: %s\n", w)
			}
			fmt.Fprintf(s.Out, "Wrote %s (%d files). Check it with: convoy validate -C %s\n", filepath.Join(out, "stack.hcl"), len(res.Files), out)
			if n := len(res.LeftByHand); n > 0 {
				fmt.Fprintf(s.Out, "%d left by hand: listed at the head of stack.hcl, each kept as a comment where it stood.\n", n)
			}
			return nil
		},
	}
	hf.Flags().StringVarP(&out, "out", "o", "", "the stack directory to write (created if missing)")
	cmd.AddCommand(hf, newImportReleasesCmd(s))
	return cmd
}

func newImportReleasesCmd(s streams) *cobra.Command {
	var (
		out, namespace, selector, clusterName string
		all                                   bool
		repos                                 []string
		cf                                    clusterFlags
	)
	cmd := &cobra.Command{
		Use:   "releases -o DIR",
		Short: "Write a stack from the Helm releases installed on a cluster",
		Long: `Import releases reads the Helm release records on the cluster (convoy's,
helm v3's and v4's) and writes a stack that convoy plan shows unchanged: one
release block per deployed release with the user values of its deployed
revision (values/NAME.yaml), its chart written from the record into
charts/NAME-VERSION/ (or named in a repository: --repo CHART=URL, or the
chart's convoy.dev/repository annotation), and adopt_from_stack where
another stack owns it. Sensitive-looking values (password, token, secret,
apiKey, ...) go to secrets/NAME.yaml, to encrypt with SOPS. Releases whose
newest revision is not deployed are listed and skipped. Nothing on the
cluster changes. Check the result with convoy init && convoy plan.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("-o DIR is required")
			}
			if all && namespace != "" {
				return errors.New("--namespace and --all-namespaces cannot be used together")
			}
			ns := namespace
			if !all && ns == "" {
				n, err := run.KubeconfigNamespace(cf.Kubeconfig, cf.Context)
				if err != nil {
					return err
				}
				ns = n
			}
			req := run.ImportRequest{Namespace: ns, Stack: releases.Options{ClusterName: clusterName, Repos: map[string]string{}}}
			if clusterName != "" {
				req.Stack.Kubeconfig, req.Stack.Context = cf.Kubeconfig, cf.Context
			}
			abs, err := filepath.Abs(out)
			if err != nil {
				return err
			}
			req.Stack.StackName = filepath.Base(abs)
			if selector != "" {
				sel, err := labels.Parse(selector)
				if err != nil {
					return fmt.Errorf("-l %q: %w", selector, err)
				}
				req.Stack.Selector = sel
			}
			for _, r := range repos {
				name, url, ok := strings.Cut(r, "=")
				if !ok || name == "" || url == "" {
					return fmt.Errorf("--repo %q: want CHART=URL", r)
				}
				req.Stack.Repos[name] = url
			}
			res, err := run.ImportReleases(cmd.Context(), run.ClusterOptions{Kubeconfig: cf.Kubeconfig, Context: cf.Context, QPS: cf.QPS, Burst: cf.Burst, StorageDriver: cf.StorageDriver, SQLConnection: os.Getenv("HELM_DRIVER_SQL_CONNECTION_STRING"), Unreachable: cf.Unreachable, Warnings: s.Err}, req)
			if err != nil {
				return err
			}
			if err := res.Write(out); err != nil {
				return err
			}
			for _, sk := range res.Skipped {
				fmt.Fprintf(s.Err, "Skipped %s\n", sk)
			}
			for _, w := range res.LeftByHand {
				fmt.Fprintf(s.Err, "Warning: %s\n", w)
			}
			releases := "releases"
			if len(res.Imported) == 1 {
				releases = "release"
			}
			fmt.Fprintf(s.Out, "Imported %d %s into %s. Check it with: convoy init -C %s && convoy plan -C %s\n", len(res.Imported), releases, filepath.Join(out, "stack.hcl"), out, out)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&out, "out", "o", "", "the stack directory to write (created if missing)")
	fs.StringVarP(&namespace, "namespace", "n", "", "the namespace whose releases are imported (default: the kubeconfig context's)")
	fs.BoolVarP(&all, "all-namespaces", "A", false, "import the releases of every namespace")
	fs.StringVarP(&selector, "selector", "l", "", "import only releases whose record labels match (key=value, key!=value, ...)")
	fs.StringVar(&clusterName, "cluster-name", "", "write a cluster block of this name (with --kubeconfig and --kube-context) and put every release on it")
	fs.StringArrayVar(&repos, "repo", nil, "CHART=URL: releases of this chart name it in this chart repository instead of writing it from the record (repeatable)")
	addClusterFlags(fs, &cf)
	return cmd
}
