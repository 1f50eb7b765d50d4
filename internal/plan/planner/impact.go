package planner

import (
	"context"
	"fmt"
	"regexp"
	"slices"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
)

// impact sets rc.Impact (plan.ComputeImpact) once its objects are planned,
// with what it needs from the cluster besides: the live claims of the
// StatefulSets rc replaces or deletes.
func (c *computer) impact(ctx context.Context, rd *release.Renderer, rc *plan.ReleaseChange) error {
	if rc.Action == plan.ActionNoOp || rc.KnownAfterApply {
		return nil
	}
	facts := plan.ImpactFacts{Claims: map[plan.ObjectRef][]string{}}
	for _, o := range rc.Objects {
		if o.Ref.Group != "apps" || o.Ref.Kind != "StatefulSet" || (o.Action != plan.ObjectReplace && o.Action != plan.ObjectDelete) || o.Before == nil {
			continue
		}
		claims, err := c.claimsOf(ctx, rd, o)
		if err != nil {
			return err
		}
		facts.Claims[o.Ref] = claims
	}
	rc.Impact = plan.ComputeImpact(rc, facts)
	return nil
}

// claimsOf are the live PersistentVolumeClaims a StatefulSet's
// volumeClaimTemplates made: <template>-<statefulset>-<ordinal>.
func (c *computer) claimsOf(ctx context.Context, rd *release.Renderer, o *plan.ObjectChange) ([]string, error) {
	spec, _ := o.Before["spec"].(map[string]any)
	templates, _ := spec["volumeClaimTemplates"].([]any)
	if len(templates) == 0 {
		return nil, nil
	}
	c.stats.add(&c.stats.Lists, 1)
	list, err := c.view(rd).Claims(ctx, o.Ref.Namespace)
	if err != nil {
		return nil, fmt.Errorf("list the claims of %s: %w", o.Ref, err)
	}
	var claims []string
	for _, t := range templates {
		tm, _ := t.(map[string]any)
		md, _ := tm["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		re := regexp.MustCompile("^" + regexp.QuoteMeta(name+"-"+o.Ref.Name+"-") + "[0-9]+$")
		for _, pvc := range list {
			if re.MatchString(pvc.GetName()) {
				claims = append(claims, pvc.GetName())
			}
		}
	}
	slices.Sort(claims)
	return claims, nil
}

// AbsentOf are the objects rc's plan observed absent: apply creates them
// without reading them again (release.Request.Absent).
func AbsentOf(rc *plan.ReleaseChange) []kube.Ref {
	var out []kube.Ref
	for _, o := range rc.Observed.Objects {
		if o.Kind == plan.ObservedAbsent {
			out = append(out, kube.Ref(o.Ref))
		}
	}
	return out
}

// ReplacesOf are the objects rc's plan replaces: apply may delete and
// create them when their immutable fields change (release.Request.Replace).
func ReplacesOf(rc *plan.ReleaseChange) []kube.Ref {
	var out []kube.Ref
	for _, o := range rc.Objects {
		if o.Action == plan.ObjectReplace {
			out = append(out, kube.Ref(o.Ref))
		}
	}
	return out
}

// ResizesOf are the claims rc's plan resizes (expand_claims): apply
// patches them after the release's objects (release.Request.Expand).
func ResizesOf(rc *plan.ReleaseChange) []kube.ClaimResize {
	var out []kube.ClaimResize
	for _, e := range rc.ClaimExpansions {
		out = append(out, kube.ClaimResize{Ref: kube.Ref(e.Ref), Storage: e.To})
	}
	return out
}
