package controller

import (
	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/controller/pipeline"
	"github.com/convoy-sh/convoy/internal/controller/stack"
	"github.com/convoy-sh/convoy/internal/controller/stackset"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
)

// Tenancy is how far the controller keeps Stacks of different namespaces
// apart (stack.Tenancy).
type Tenancy = stack.Tenancy

const (
	TenancyNone   = stack.TenancyNone
	TenancyStrict = stack.TenancyStrict
)

// ParseTenancy reads --tenancy.
func ParseTenancy(s string) (Tenancy, error) { return stack.ParseTenancy(s) }

// DefaultMinInterval is the controller's --min-interval unless set.
const DefaultMinInterval = stack.DefaultMinInterval

// stackOptions are the controller's settings a Stack reads.
func (o Options) stackOptions() stack.Options {
	return stack.Options{
		Kubeconfig: o.Kubeconfig, Context: o.Context, QPS: o.QPS, Burst: o.Burst,
		Shard: o.Shard, Namespace: o.Namespace, Parallelism: o.Parallelism, MaxPlanSize: o.MaxPlanSize,
		CacheDir: o.CacheDir, Warnings: o.Warnings, MinInterval: o.MinInterval,
		DefaultServiceAccount: o.DefaultServiceAccount, NoCrossNamespaceRefs: o.NoCrossNamespaceRefs, Tenancy: o.Tenancy,
	}
}

// pipelineOptions are the controller's settings a Pipeline reads.
func (o Options) pipelineOptions() pipeline.Options {
	so := o.stackOptions()
	return pipeline.Options{
		MinInterval: so.IntervalFloor(), DefaultServiceAccount: o.DefaultServiceAccount,
		NoCrossNamespaceRefs: so.RefusesCrossNamespaceRefs(), Strict: o.Tenancy == TenancyStrict, Timeout: o.PipelineTimeout,
	}
}

func (o Options) stackSetOptions() stackset.Options {
	return stackset.Options{Strict: o.Tenancy == TenancyStrict, Namespace: o.Namespace}
}

// Hold and Evict make the janitor the Stack reconciler's stack.Cache.
func (j *cacheJanitor) Hold(f *artifact.Fetched) (release func(), ok bool) { return j.hold(f) }
func (j *cacheJanitor) Evict()                                             { j.evict() }

// Awaited makes the pushes the Stack reconciler's stack.Pushes.
func (p *pushes) Awaited(st *v1alpha1.Stack) string { return p.awaited(st) }
