package kube

import (
	"crypto/sha256"
	"encoding/json"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Recent is how long a client trusts what its own requests found out
// without asking again: a namespace found absent (CheckNamespace), and an
// object a dry run accepted. A plan validates every object it installs or
// changes by a dry run; the apply that follows it at once (convoy apply
// without a saved plan, the controller's apply of the plan it just made)
// validates them again before it writes a revision, so that an object the
// API server refuses leaves no record behind. Within Recent, an identical
// request this client saw accepted is not sent again: the apply's
// validation of a first install was a third of its writes. What changed in
// between (an admission policy added, a quota filled, a namespace deleted)
// then shows in the apply itself, as in Helm, which validates nothing
// before it writes a revision. Past Recent (an approval that took longer),
// everything is validated again; and as soon as the client writes an
// object that may change how the API server admits others (anything but
// the workload and configuration kinds of inertKinds: a webhook, an
// admission policy, a quota, a CRD, RBAC, a policy engine's resource),
// every validation it remembers is forgotten.
const Recent = time.Minute

// validationKey identifies one dry-run request: its kind of request and
// options and the object exactly as sent.
type validationKey [sha256.Size]byte

// validationKeyOf is the key of a dry-run request of kind ("apply",
// "create") with force, sending obj.
func (c *Client) validationKeyOf(kind string, force bool, obj *unstructured.Unstructured) (validationKey, bool) {
	b, err := json.Marshal(obj.Object)
	if err != nil {
		return validationKey{}, false
	}
	h := sha256.New()
	h.Write([]byte(kind))
	if force {
		h.Write([]byte{0, 1})
	} else {
		h.Write([]byte{0, 0})
	}
	h.Write([]byte(c.fieldManager))
	h.Write([]byte{0})
	h.Write(b)
	var k validationKey
	h.Sum(k[:0])
	return k, true
}

// validatedRecently tells whether a dry run of this client accepted the
// request k within Recent.
func (c *Client) validatedRecently(k validationKey) bool {
	at, ok := c.validated.Load(k)
	return ok && time.Since(at.(time.Time)) < Recent
}

// remember keeps that a dry run accepted the request k. Every
// validationSweep remembered requests, those older than Recent are
// dropped: a controller's client lives across many runs.
func (c *Client) remember(k validationKey) {
	c.validated.Store(k, time.Now())
	if c.remembered.Add(1)%validationSweep != 0 {
		return
	}
	c.validated.Range(func(key, at any) bool {
		if time.Since(at.(time.Time)) >= Recent {
			c.validated.Delete(key)
		}
		return true
	})
}

// validationSweep is how many remembered validations pass between two
// sweeps of the expired ones.
const validationSweep = 1024

// wrote forgets every remembered validation when ref, which the client
// just created, changed or deleted, is not of an inert kind.
func (c *Client) wrote(ref Ref) {
	gk := schema.GroupKind{Group: ref.Group, Kind: ref.Kind}
	if !inertKinds[gk] {
		c.validated.Clear()
	}
	if servingKinds[gk] {
		c.lastRediscovery.Store(0) // what discovery lists may have changed
	}
}

// servingKinds are the kinds whose objects change which kinds the API
// server serves.
var servingKinds = map[schema.GroupKind]bool{
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:             true,
}

// inertKinds are the kinds whose objects change nothing in how the API
// server admits other objects: no admission plugin or webhook of
// Kubernetes reads them. (A ResourceQuota, a LimitRange, a PriorityClass,
// a Namespace, RBAC, webhooks and admission policies, CRDs and
// APIServices do; so may any custom resource, a policy engine's say; and
// an Ingress, which ingress controllers' webhooks check against the
// others.) Objects of these kinds can still collide (two Services asking
// for one node port): the second is then refused by its apply, not its
// validation, and its release fails with a revision, as in Helm.
var inertKinds = map[schema.GroupKind]bool{
	{Kind: "ConfigMap"}:                                     true,
	{Kind: "Secret"}:                                        true,
	{Kind: "Service"}:                                       true,
	{Kind: "ServiceAccount"}:                                true,
	{Kind: "Pod"}:                                           true,
	{Kind: "PersistentVolumeClaim"}:                         true,
	{Group: "apps", Kind: "Deployment"}:                     true,
	{Group: "apps", Kind: "StatefulSet"}:                    true,
	{Group: "apps", Kind: "DaemonSet"}:                      true,
	{Group: "apps", Kind: "ReplicaSet"}:                     true,
	{Group: "batch", Kind: "Job"}:                           true,
	{Group: "batch", Kind: "CronJob"}:                       true,
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}:     true,
	{Group: "policy", Kind: "PodDisruptionBudget"}:          true,
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: true,
	{Group: "coordination.k8s.io", Kind: "Lease"}:           true,
}
