package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/convoy-sh/convoy/internal/signing"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	"github.com/spf13/cobra"
)

type verifyOptions struct {
	Ref  string
	Keys []string
}

func newVerifyCmd(s streams) *cobra.Command {
	var o verifyOptions
	cmd := &cobra.Command{
		Use:   "verify oci://REGISTRY/REPOSITORY:TAG|@sha256:… --key PUB",
		Short: "Check a stack artifact's cosign signature",
		Long: `Verify resolves the artifact to its digest and checks that a signature stored
for that digest (the tag sha256-<hex>.sig of its repository, as convoy push
--sign-key and cosign sign --key store it) verifies with one of the public
keys and signs that very digest, as a Stack's spec.verify does. It prints the
digest, and exits 1 saying why when the artifact is unsigned, signed by none
of the keys, or its signature is for another digest.

--key is a PEM public key file (cosign.pub); give it several times to accept
a signature by any of them.`,
		Example: `  convoy verify oci://registry.example/stacks/shop:v1 --key cosign.pub`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Ref = args[0]
			return o.Run(cmd.Context(), s)
		},
	}
	cmd.Flags().StringArrayVar(&o.Keys, "key", nil, "a PEM public key file (cosign.pub); repeat for several")
	return cmd
}

func (o verifyOptions) Run(ctx context.Context, s streams) error {
	if len(o.Keys) == 0 {
		return errors.New("give the public key to verify with: --key cosign.pub")
	}
	var keys []*signing.PublicKey
	for _, path := range o.Keys {
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("--key: %w", err)
		}
		ks, err := signing.ParsePublicKeys(path, data)
		if err != nil {
			return fmt.Errorf("--key %w", err)
		}
		keys = append(keys, ks...)
	}
	ref, err := artifact.ParseRef(o.Ref)
	if err != nil {
		return err
	}
	res, err := newResolver(s, os.Getenv)
	if err != nil {
		return err
	}
	reg := artifact.Registry{Resolver: res}
	if ref.Digest == "" {
		d, err := artifact.Resolve(ctx, reg, artifact.Ref{Repository: ref.Repository}, ref.Tag)
		if err != nil {
			return err
		}
		ref = ref.WithDigest(d)
	}
	v, err := artifact.Verify(ctx, reg, ref, keys)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Err, "Verified %s: signed by %s (%s).\n", v.Ref, v.Key.Name, v.Key.Fingerprint())
	fmt.Fprintln(s.Out, v.Ref.Digest)
	return nil
}
