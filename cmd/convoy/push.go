package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/signing"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	"github.com/spf13/cobra"
)

type pushOptions struct {
	Dir, Ref string
	// SignKey is the private key file that signs the pushed digest.
	SignKey string
}

func newPushCmd(s streams) *cobra.Command {
	var o pushOptions
	cmd := &cobra.Command{
		Use:   "push DIR oci://REGISTRY/REPOSITORY:TAG",
		Short: "Package a stack directory as an OCI artifact and push it",
		Long: `Push packs the stack directory (its .hcl files, the lock file, values files)
and the local charts its releases name by relative path into one OCI artifact,
pushes it under the tag, and prints its digest. The same files give the same
digest. A Stack object of the convoy controller names the artifact in its
source (docs/controller.md).

--sign-key KEY signs the pushed digest as cosign sign --key does, so that
Stacks and Pipelines with spec.verify admit it and cosign verify --key
accepts it: the signature is stored under the tag sha256-<hex>.sig of the
same repository. KEY is a PEM ECDSA P-256 private key: PKCS#8 as
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 writes it,
or cosign's encrypted cosign.key (cosign generate-key-pair), whose password
is read from COSIGN_PASSWORD. The key is read before anything is pushed.

Registry credentials come from Helm's registry config and Docker's config, as
for charts; registries on loopback addresses are spoken to over plain HTTP.`,
		Example: `  convoy push ./stacks/shop oci://registry.example/stacks/shop:v1
  COSIGN_PASSWORD=… convoy push ./stacks/shop oci://registry.example/stacks/shop:v1 --sign-key cosign.key
  convoy verify oci://registry.example/stacks/shop:v1 --key cosign.pub`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Dir, o.Ref = args[0], args[1]
			return o.Run(cmd.Context(), s)
		},
	}
	cmd.Flags().StringVar(&o.SignKey, "sign-key", "", "sign the pushed digest with this PEM ECDSA P-256 private key (cosign's format; an encrypted cosign.key reads COSIGN_PASSWORD)")
	return cmd
}

func (o pushOptions) Run(ctx context.Context, s streams) error {
	res, err := newResolver(s, os.Getenv)
	if err != nil {
		return err
	}
	var key *signing.PrivateKey
	if o.SignKey != "" {
		if key, err = readSigningKey(o.SignKey, os.LookupEnv); err != nil {
			return err
		}
	}
	reg := artifact.Registry{Resolver: res}
	p, err := artifact.Push(ctx, reg, o.Dir, o.Ref)
	var de *artifact.DiagnosticsError
	if errors.As(err, &de) {
		return stackDiagnostics(de)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Err, "Pushed %s (%d entries, %d bytes).\n", p.Ref, p.Files, p.Size)
	if key != nil {
		sg, err := artifact.Sign(ctx, reg, p.Ref, key)
		if err != nil {
			return fmt.Errorf("pushed %s, but signing it failed: %w", p.Ref, err)
		}
		if sg.Existing {
			fmt.Fprintf(s.Err, "Signed already with %s (tag %s).\n", o.SignKey, sg.Tag)
		} else {
			fmt.Fprintf(s.Err, "Signed %s with %s (tag %s, %d signature(s)).\n", p.Digest, o.SignKey, sg.Tag, sg.Signatures)
		}
	}
	fmt.Fprintln(s.Out, p.Digest)
	return nil
}

// readSigningKey reads a private key file; an encrypted cosign key takes
// its password from COSIGN_PASSWORD, as cosign does (set and empty is the empty password).
func readSigningKey(path string, lookupEnv func(string) (string, bool)) (*signing.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--sign-key: %w", err)
	}
	var password []byte
	if pw, ok := lookupEnv("COSIGN_PASSWORD"); ok {
		password = []byte(pw)
	}
	key, err := signing.ParsePrivateKey(data, password)
	if errors.Is(err, signing.ErrPasswordNeeded) {
		return nil, fmt.Errorf("--sign-key %s: the key is encrypted: set COSIGN_PASSWORD to its password", path)
	}
	if err != nil {
		return nil, fmt.Errorf("--sign-key %s: %w", path, err)
	}
	return key, nil
}

// stackDiagnostics renders a stack packing error with its source.
func stackDiagnostics(de *artifact.DiagnosticsError) error {
	rde := &run.DiagnosticsError{Diags: de.Diags}
	if de.Config != nil {
		rde.Files = de.Config.Files
	}
	return rde
}
