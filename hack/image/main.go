// Command image builds convoy's multi-platform OCI image without a
// container engine and pushes it (`make image IMAGE=REGISTRY/REPO:TAG`):
// a static binary per platform on a minimal base assembled in Go. See
// hack/image/imagebuild and docs/controller-image.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/hack/image/imagebuild"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	image := fs.String("image", "", "where to push: REGISTRY/REPO:TAG (loopback registries over plain HTTP)")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated os/arch[/variant]")
	version := fs.String("version", "dev", "convoy's version (the binary's and the image's label)")
	commit := fs.String("commit", "", "the commit built (the binary's and the image's label)")
	ldflags := fs.String("ldflags", "", "linker flags (default: the version and commit ones, -s -w)")
	source := fs.String("source", "https://github.com/convoy-sh/convoy", "the org.opencontainers.image.source label")
	created := fs.String("created", os.Getenv("SOURCE_DATE_EPOCH"), "time of the files and configs, in Unix seconds (default $SOURCE_DATE_EPOCH, else 0)")
	caBundle := fs.String("ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "PEM bundle of CA certificates the image carries")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *image == "" {
		return fmt.Errorf("--image REGISTRY/REPO:TAG is required")
	}
	var ps []v1.Platform
	for _, s := range strings.Split(*platforms, ",") {
		p, err := imagebuild.ParsePlatform(strings.TrimSpace(s))
		if err != nil {
			return err
		}
		ps = append(ps, p)
	}
	epoch := int64(0)
	if *created != "" {
		var err error
		if epoch, err = strconv.ParseInt(*created, 10, 64); err != nil {
			return fmt.Errorf("--created %q: want Unix seconds", *created)
		}
	}
	flags := *ldflags
	if flags == "" {
		flags = imagebuild.VersionLDFlags(*version, *commit) + " -s -w"
	}
	res, err := imagebuild.Build(ctx, imagebuild.Options{
		Image:     *image,
		Platforms: ps,
		LDFlags:   flags,
		CABundle:  *caBundle,
		Meta:      imagebuild.Metadata{Version: *version, Commit: *commit, Source: *source, Created: time.Unix(epoch, 0).UTC()},
		Log:       os.Stderr,
	})
	if err != nil {
		return err
	}
	fmt.Printf("pushed %s@%s (%s)\n", res.Ref, res.Digest, *platforms)
	return nil
}
