package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/convoy-sh/convoy/internal/run"
	"github.com/spf13/cobra"
)

type outdatedOptions struct {
	Stack            stackFlags
	JSON             bool
	DetailedExitCode bool
	// Update rewrites the stack's version constraints (and the lock file)
	// to admit the newest version of the kind To names.
	Update bool
	To     updateTarget
	// Images also reports the images the releases render.
	Images bool
}

func newOutdatedCmd(s streams) *cobra.Command {
	o := outdatedOptions{To: updateMajor}
	cmd := &cobra.Command{
		Use:   "outdated",
		Short: "Show which repository and registry charts have newer versions",
		Long: `Outdated asks the repository of every release whose chart comes from a
repository block or an oci:// reference what it publishes, and prints for
each: the version locked in convoy.lock.hcl, the newest version the release's
constraint admits, and the newest patch, minor and major version published.
Only MAJOR.MINOR.PATCH versions count: tags such as latest, main or nightlies
never do, and pre-releases only when the constraint names one. A chart whose
newest version is marked deprecated in its Chart.yaml is flagged.

Each repository is asked once (its index.yaml, revalidated by ETag against the
copy in the chart cache; an OCI repository's tag list), several at once. A
repository that does not answer is reported on its releases; the others still
print, and the command exits 1.

With --detailed-exitcode the exit code is 0 when everything is current, 1 on
error, 2 when a newer version is published.

--update rewrites each outdated release's version constraint in the stack's
.hcl files (only the constraint's string: comments and layout are kept) so
that it admits the newest version of the kind --to names, then locks the new
versions in convoy.lock.hcl, as convoy init does.

--images also renders every release offline (as convoy render) and lists
the images its pods run (containers, init containers): for each, the tag
and the newest tag of the same major that its registry lists, if newer.
Only MAJOR.MINOR.PATCH tags count (latest, main or a date never do); a
pre-release only when the image runs one. Each image repository's tag list
is read once (every page), with the registry credentials of Docker's
config. A registry that does not answer is reported on its images, the
others still print, and the command exits 1; a newer tag counts as
outdated for --detailed-exitcode.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), s)
		},
	}
	addStackFlags(cmd.Flags(), &o.Stack)
	fs := cmd.Flags()
	fs.BoolVar(&o.JSON, "json", false, "print the result as JSON")
	fs.BoolVar(&o.DetailedExitCode, "detailed-exitcode", false, "exit 0 when everything is current, 1 on error, 2 when something is outdated")
	fs.BoolVar(&o.Update, "update", false, "rewrite the version constraints of outdated releases and the lock file")
	fs.BoolVar(&o.Images, "images", false, "also list the images each release renders and whether their registry has a newer tag of the same major")
	fs.Var(&o.To, "to", "with --update, the newest version to move to: patch, minor or major")
	return cmd
}

// outdatedImageJSON is one image of --json --images.
type outdatedImageJSON struct {
	Release    string `json:"release"`
	Object     string `json:"object,omitempty"`
	Image      string `json:"image,omitempty"`
	Repository string `json:"repository,omitempty"`
	Tag        string `json:"tag,omitempty"`
	Newer      string `json:"newer,omitempty"`
	NotVersion bool   `json:"not_version,omitempty"`
	Error      string `json:"error,omitempty"`
}

// outdatedJSON is one release of --json.
type outdatedJSON struct {
	Release     string   `json:"release"`
	Chart       string   `json:"chart"`
	Source      string   `json:"source,omitempty"`
	Constraint  string   `json:"constraint"`
	Locked      string   `json:"locked"`
	Wanted      string   `json:"wanted"`
	LatestPatch string   `json:"latest_patch"`
	LatestMinor string   `json:"latest_minor"`
	LatestMajor string   `json:"latest_major"`
	Deprecated  bool     `json:"deprecated"`
	Outdated    bool     `json:"outdated"`
	File        string   `json:"file,omitempty"`
	Line        int      `json:"line,omitempty"`
	Error       string   `json:"error,omitempty"`
	Skipped     []string `json:"skipped_entries,omitempty"`
	Updated     string   `json:"updated_constraint,omitempty"`
}

func (o outdatedOptions) Run(ctx context.Context, s streams) error {
	res, err := newResolver(s, os.Getenv)
	if err != nil {
		return err
	}
	src, err := o.Stack.source()
	if err != nil {
		return err
	}
	session, err := run.Open(ctx, run.Options{Source: src})
	if err != nil {
		return err
	}
	defer session.Close()
	rels, err := session.Outdated(ctx, run.OutdatedRequest{Resolver: res})
	if err != nil {
		return err
	}
	var images []run.OutdatedImage
	if o.Images {
		if images, err = session.OutdatedImages(ctx, run.OutdatedRequest{Resolver: res}); err != nil {
			return err
		}
	}
	var updated map[string]string
	if o.Update {
		updated, err = o.update(ctx, s, src, rels, res)
		if err != nil {
			return err
		}
	}
	failed, outdated := 0, 0
	for _, r := range rels {
		if r.Err != nil {
			failed++
		}
		if r.Outdated {
			outdated++
		}
	}
	for _, im := range images {
		if im.Err != nil {
			failed++
		}
		if im.Newer != "" {
			outdated++
		}
	}
	if o.JSON {
		doc := struct {
			Releases []outdatedJSON      `json:"releases"`
			Images   []outdatedImageJSON `json:"images,omitempty"`
		}{Releases: []outdatedJSON{}}
		if o.Images {
			doc.Images = []outdatedImageJSON{}
		}
		for _, im := range images {
			j := outdatedImageJSON{Release: im.Release.String(), Object: im.Object, Image: im.Image, Repository: im.Ref.Name(), Tag: im.Ref.Tag, Newer: im.Newer, NotVersion: im.NotVersion}
			if im.Image == "" {
				j.Repository = ""
			}
			if im.Err != nil {
				j.Error = im.Err.Error()
			}
			doc.Images = append(doc.Images, j)
		}
		for _, r := range rels {
			j := outdatedJSON{
				Release: r.Release.Name, Chart: r.Chart, Source: r.Source, Constraint: r.Constraint,
				Locked: r.Locked, Wanted: r.Wanted, LatestPatch: r.Patch, LatestMinor: r.Minor, LatestMajor: r.Major,
				Deprecated: r.Deprecated, Outdated: r.Outdated, File: r.Block.Filename, Line: r.Block.Start.Line,
				Skipped: r.Skipped, Updated: updated[r.Release.Name],
			}
			if r.Err != nil {
				j.Error = r.Err.Error()
			}
			doc.Releases = append(doc.Releases, j)
		}
		if err := writeJSON(s.Out, doc); err != nil {
			return err
		}
	} else {
		printOutdated(s, rels, updated)
		if o.Images {
			printOutdatedImages(s, images)
		}
	}
	for _, im := range images {
		if im.Err != nil {
			fmt.Fprintf(s.Err, "Error: %s: %s: %v\n", im.Release, cmp.Or(im.Image, "render"), im.Err)
		}
	}
	for _, r := range rels {
		for _, sk := range r.Skipped {
			fmt.Fprintf(s.Err, "Warning: %s (%s:%d): skipped %s\n", r.Release, r.Block.Filename, r.Block.Start.Line, sk)
		}
		if r.Err != nil {
			fmt.Fprintf(s.Err, "Error: %s (%s:%d): %v\n", r.Release, r.Block.Filename, r.Block.Start.Line, r.Err)
		}
	}
	switch {
	case failed > 0:
		return errSilent
	case o.DetailedExitCode && outdated > 0 && !o.Update:
		return &exitError{code: 2}
	}
	return nil
}

func printOutdated(s streams, rels []run.OutdatedRelease, updated map[string]string) {
	if len(rels) == 0 {
		fmt.Fprintln(s.Out, "No release takes its chart from a repository or registry.")
		return
	}
	tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RELEASE\tCHART\tCONSTRAINT\tLOCKED\tWANTED\tPATCH\tMINOR\tMAJOR\tNOTE")
	dash := func(v string) string { return cmp.Or(v, "-") }
	for _, r := range rels {
		note := ""
		switch {
		case r.Err != nil:
			note = "error (below)"
		case r.Locked == "":
			note = "not locked"
		case r.Outdated:
			note = "outdated"
		}
		if r.Deprecated {
			note = joinNote(note, "deprecated")
		}
		if u, ok := updated[r.Release.Name]; ok {
			note = joinNote(note, "constraint → "+cmp.Or(u, "(unchanged)"))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Release, r.Chart, cmp.Or(r.Constraint, "*"),
			dash(r.Locked), dash(r.Wanted), dash(r.Patch), dash(r.Minor), dash(r.Major), note)
	}
	tw.Flush()
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}

func printOutdatedImages(s streams, images []run.OutdatedImage) {
	fmt.Fprintln(s.Out)
	if len(images) == 0 {
		fmt.Fprintln(s.Out, "No release renders a container image.")
		return
	}
	tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RELEASE\tIMAGE\tTAG\tNEWER\tNOTE")
	for _, im := range images {
		note := ""
		switch {
		case im.Err != nil:
			note = "error (below)"
		case im.NotVersion:
			note = "tag is no version"
		case im.Newer != "":
			note = "outdated"
		}
		name := "-"
		if im.Image != "" {
			name = im.Ref.Name()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", im.Release, name, cmp.Or(im.Ref.Tag, "-"), cmp.Or(im.Newer, "-"), note)
	}
	tw.Flush()
}
