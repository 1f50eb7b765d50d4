package stack

import (
	"context"
	"errors"
	"os"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/controller/pipeline"
	"github.com/convoy-sh/convoy/internal/signing"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// pipelineStacks is what the Pipeline reconciler needs of the Stack
// reconciler (pipeline.Stacks): a Stack's source and inputs as its
// reconciles read them, the registry access of its credentials,
// spec.verify's keys, a client as a service account.
type pipelineStacks struct{ r *reconciler }

var _ pipeline.Stacks = pipelineStacks{}

// ConfigError makes a configError the Pipeline's pipeline.ConfigError
// (a spec.verify Secret that is wrong stalls it as Invalid).
func (e *configError) ConfigError() {}

func (s pipelineStacks) Registry(ctx context.Context, st *v1alpha1.Stack) (artifact.Registry, func(), error) {
	_, _, tmpDir := s.r.dirs()
	if err := os.MkdirAll(tmpDir, 0o700); err != nil {
		return artifact.Registry{}, nil, err
	}
	res, _, drop, err := s.r.sourceResolver(ctx, st, tmpDir)
	if err != nil {
		return artifact.Registry{}, nil, err
	}
	reg := s.r.registry
	reg.Resolver = res
	return reg, drop, nil
}

func (s pipelineStacks) VerifyKeys(ctx context.Context, ns string, v *v1alpha1.VerifySpec) ([]*signing.PublicKey, error) {
	return verifyKeys(ctx, s.r.reader, ns, v)
}

func (s pipelineStacks) Open(ctx context.Context, st *v1alpha1.Stack) (*pipeline.StackRun, error) {
	sr, err := s.r.openStack(ctx, st, specSource(st))
	var se *sourceError
	if errors.As(err, &se) && se.pull {
		return nil, errors.New("spec.source: " + err.Error())
	}
	if err != nil {
		return nil, err
	}
	// A gate's runs announce nothing on the Stack: its own reconciles do.
	sr.opts.Announce = nil
	if err := sr.open(ctx, false); err != nil {
		sr.close()
		return nil, errors.New(s.r.stripCachePaths(message(err, nil, sr.in)))
	}
	return &pipeline.StackRun{
		Session: sr.session,
		Message: func(err error) string { return message(err, nil, sr.in) },
		Redact:  sr.in.redact,
		Close:   sr.close,
	}, nil
}

func (s pipelineStacks) ClientAs(user string) (client.Client, error) {
	if s.r.readers == nil {
		return s.r.client, nil
	}
	rd, err := s.r.readers.of(user)
	if err != nil {
		return nil, err
	}
	if c, ok := rd.(client.Client); ok {
		return c, nil
	}
	return s.r.client, nil
}

func (s pipelineStacks) StripCachePaths(msg string) string { return s.r.stripCachePaths(msg) }
