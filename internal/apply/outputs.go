package apply

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/kube"
	"github.com/convoy-sh/convoy/internal/release"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// ResourceKey names a live object in release.X.resources:
// "apiVersion/Kind/name", e.g. "v1/Secret/db-auth" or "apps/v1/Deployment/web".
func ResourceKey(ref kube.Ref) string {
	return ref.APIVersion() + "/" + ref.Kind + "/" + ref.Name
}

// Outputs are the attributes of an applied release that its dependents
// may reference: its revision, status, and the live objects it created
// (as the cluster has them now, status included). Secrets are marked
// sensitive, so whatever is derived from them is masked in every output.
func Outputs(ctx context.Context, eng *release.Engine, rel *release.Release) (config.AppliedRelease, error) {
	out := config.AppliedRelease{Revision: rel.Version, Status: string(rel.Info.Status)}
	objs, err := eng.Kube().Parse(rel.Manifest, rel.Namespace)
	if err != nil {
		return out, fmt.Errorf("release %s: %w", rel.Name, err)
	}
	attrs := map[string]cty.Value{}
	for _, o := range objs {
		ref := kube.RefOf(o)
		live, err := eng.Kube().Get(ctx, ref)
		if err != nil {
			return out, err
		}
		b, err := json.Marshal(live.Object)
		if err != nil {
			return out, err
		}
		ty, err := ctyjson.ImpliedType(b)
		if err != nil {
			return out, fmt.Errorf("%s: %w", ref, err)
		}
		v, err := ctyjson.Unmarshal(b, ty)
		if err != nil {
			return out, fmt.Errorf("%s: %w", ref, err)
		}
		if ref.Kind == "Secret" && ref.Group == "" {
			v = v.Mark(config.Sensitive)
		}
		attrs[ResourceKey(ref)] = v
	}
	out.Resources = cty.ObjectVal(attrs)
	return out, nil
}
