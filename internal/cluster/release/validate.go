package release

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// MaxRecordBytes is the largest record payload the cluster stores: the API
// server refuses a Secret, and a ConfigMap, whose data exceed 1 MiB
// (core/v1 MaxSecretSize: the sum of the lengths of its data's values, here
// the one payload, base64 text; bigger requests hit its 3 MiB body limit
// first, "Request entity too large"). Helm sets no limit of its own.
const MaxRecordBytes = corev1.MaxSecretSize

// record is the pending record of the revision p prepares.
func (p *Prepared) record(now time.Time) *Release {
	req := p.Request
	rel := &Release{
		Name:      req.Name,
		Namespace: req.Namespace,
		Chart:     p.Rendered.Chart,
		Config:    req.Values,
		Manifest:  cmp.Or(p.joined, p.Rendered.Manifest(false)),
		Hooks:     hooksFromChart(p.Rendered.Hooks),
		Version:   p.Revision,
		Info: &Info{
			FirstDeployed: now,
			LastDeployed:  now,
			Status:        StatusPendingInstall,
			Description:   "Initial install underway",
			Notes:         p.Rendered.Notes,
		},
		ApplyMethod: ApplyMethodSSA,
		Labels:      withRun(req.Labels, req.RunID),
	}
	if f := RevisionFingerprint(req.Fingerprint, p.Revision); f != "" && !p.Rendered.Impure && req.PostRender.Exec == nil {
		rel.Labels[FingerprintLabel] = f
	}
	if !p.IsInstall {
		rel.Info.Status, rel.Info.Description = StatusPendingUpgrade, "Preparing upgrade"
		// As Helm: the deployed revision's (else the newest's) first
		// deploy, which each upgrade carries over.
		if base := cmp.Or(p.Deployed, p.Last); base != nil && base.Info != nil && !base.Info.FirstDeployed.IsZero() {
			rel.Info.FirstDeployed = base.Info.FirstDeployed
		}
	}
	return rel
}

// validate asks the API server, creating nothing, whether it would accept
// the release: the namespace create_namespace creates and every object
// (server-side dry-run apply). An object whose namespace does not exist yet
// (create_namespace, a Namespace of the release) cannot be dry-run there:
// it is dry-run created in kube.ValidationNamespace instead — right away
// when the namespace create_namespace creates was just found absent.
func (e *Engine) validate(ctx context.Context, req *Request, objs []*unstructured.Unstructured, src sources) error {
	absent := ""
	if req.CreateNamespace {
		exists, err := e.kube.CheckNamespace(ctx, req.Namespace)
		if err != nil {
			return err
		}
		if !exists {
			absent = req.Namespace
		}
	}
	for len(objs) > 0 {
		n := len(objs)
		if absent != "" {
			n = slices.IndexFunc(objs, func(o *unstructured.Unstructured) bool { return o.GetNamespace() == absent })
			if n == 0 {
				if err := e.validateElsewhere(ctx, req, objs[0], src); err != nil {
					return err
				}
				objs = objs[1:]
				continue
			}
			if n < 0 {
				n = len(objs)
			}
		}
		got, err := e.kube.Apply(ctx, objs[:n], kube.ApplyOptions{Force: true, DryRun: kube.DryRunServer, Ignore: req.IgnoreChanges, Replace: req.Replace, Unread: true})
		err = src.inTemplate(err)
		if err == nil {
			objs = objs[n:]
			continue
		}
		if len(got) >= n {
			return err
		}
		obj := objs[len(got)]
		if ns, ok := kube.IsNamespaceNotFound(err); !ok || ns != obj.GetNamespace() {
			return err
		}
		if err := e.validateElsewhere(ctx, req, obj, src); err != nil {
			return err
		}
		objs = objs[len(got)+1:]
	}
	return nil
}

// validateElsewhere dry-run creates obj, whose namespace does not exist
// yet, in kube.ValidationNamespace. Where that is forbidden, obj is not
// validated before its apply (logged).
func (e *Engine) validateElsewhere(ctx context.Context, req *Request, obj *unstructured.Unstructured, src sources) error {
	switch err := e.kube.DryRunCreateIn(ctx, obj, kube.ValidationNamespace); {
	case apierrors.IsForbidden(err):
		e.logf(req.Namespace, req.Name, PhaseRendering, "%s not validated: %v", kube.RefOf(obj), err)
	case err != nil:
		return src.inTemplate(err)
	}
	return nil
}
