package stackset

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Registration is a cluster registration as the generators see it.
type Registration struct {
	Namespace, Name string
	Labels          map[string]string
	// Allowed is its convoy.dev/allowed-namespaces annotation, and
	// HasAllowed whether it is set at all.
	Allowed    []string
	HasAllowed bool
	// Version is the Secret's resourceVersion: a copy made of this
	// version needs no new read of the kubeconfig.
	Version string
}

// Key is namespace/name.
func (r *Registration) Key() string { return r.Namespace + "/" + r.Name }

// element is one element of the generators: one Stack.
type element struct {
	name   string
	params map[string]string
	// cluster is the element's registration and the cluster block its
	// kubeconfig goes to (nil: none).
	cluster *Registration
	block   string
	// where names the generator that made it, for errors.
	where string
}

// DefaultBlock is a clusters generator's block when unset.
const DefaultBlock = "target"

// DefaultName is a template's name when unset.
const DefaultName = "{{stackset.name}}-{{element}}"

// Registrations lists the registrations of a namespace: what the
// generators select from.
type Registrations func(namespace string) ([]Registration, error)

// GenerateError is bad input of the spec: which generator or element,
// and why. Nothing is generated.
type GenerateError struct {
	Reason string
	Msg    string
}

func (e *GenerateError) Error() string { return e.Msg }

// elements are the generators' elements, in order, each name once. A
// registration of another namespace that does not allow ns (strict: one
// without the annotation does not either) is a Forbidden error naming it.
func elements(ns string, gens []v1alpha1.Generator, regs Registrations, strict bool) ([]element, error) {
	var out []element
	seen := map[string]string{}
	for i, g := range gens {
		where := fmt.Sprintf("spec.generators[%d]", i)
		var got []element
		var err error
		switch {
		case g.Clusters != nil:
			got, err = clusterElements(ns, where+".clusters", g.Clusters, regs, strict)
		case g.List != nil:
			got, err = listElements(where+".list", g.List)
		case g.Matrix != nil:
			got, err = matrixElements(ns, where+".matrix", g.Matrix, regs, strict)
		default:
			err = &GenerateError{v1alpha1.ReasonInvalid, where + ": a generator is exactly one of clusters, list and matrix"}
		}
		if err != nil {
			return nil, err
		}
		for _, e := range got {
			if prev, dup := seen[e.name]; dup {
				return nil, &GenerateError{v1alpha1.ReasonTemplateInvalid, fmt.Sprintf("element %q of %s is an element of %s already: each element is one Stack", e.name, e.where, prev)}
			}
			seen[e.name] = e.where
			out = append(out, e)
		}
	}
	return out, nil
}

func clusterElements(ns, where string, g *v1alpha1.ClustersGenerator, regs Registrations, strict bool) ([]element, error) {
	sel := labels.Everything()
	if g.Selector != nil {
		s, err := metav1.LabelSelectorAsSelector(g.Selector)
		if err != nil {
			return nil, &GenerateError{v1alpha1.ReasonInvalid, where + ".selector: " + err.Error()}
		}
		sel = s
	}
	regNS := g.Namespace
	if regNS == "" {
		regNS = ns
	}
	all, err := regs(regNS)
	if err != nil {
		return nil, err
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	var out []element
	for i := range all {
		r := &all[i]
		if !sel.Matches(labels.Set(r.Labels)) {
			continue
		}
		if why := refusal(ns, r, strict); why != "" {
			return nil, &GenerateError{v1alpha1.ReasonForbidden, fmt.Sprintf("%s selects cluster registration v1 Secret %s, which %s: nothing is generated", where, r.Key(), why)}
		}
		params := map[string]string{"cluster.name": r.Name, "cluster.namespace": r.Namespace}
		for k, v := range r.Labels {
			params["cluster.labels."+k] = v
		}
		out = append(out, element{name: r.Name, params: params, cluster: r, block: cmpOr(g.Block, DefaultBlock), where: where})
	}
	return out, nil
}

// refusal says why a StackSet of namespace ns may not select r ("" when
// it may): its own namespace's always; another's when its
// convoy.dev/allowed-namespaces lists ns (or *), or, unless strict, when
// it has no such annotation.
func refusal(ns string, r *Registration, strict bool) string {
	if r.Namespace == ns {
		return ""
	}
	if !r.HasAllowed {
		if strict {
			return fmt.Sprintf("allows no other namespace than its own (no annotation %s; --tenancy strict)", v1alpha1.AllowedNamespacesAnnotation)
		}
		return ""
	}
	if slices.Contains(r.Allowed, ns) || slices.Contains(r.Allowed, "*") {
		return ""
	}
	return fmt.Sprintf("does not allow namespace %s (%s: %s)", ns, v1alpha1.AllowedNamespacesAnnotation, strings.Join(r.Allowed, ","))
}

func listElements(where string, l []v1alpha1.ListElement) ([]element, error) {
	var out []element
	for i, e := range l {
		if errs := validation.IsDNS1123Label(e.Name); len(errs) > 0 {
			return nil, &GenerateError{v1alpha1.ReasonInvalid, fmt.Sprintf("%s[%d].name %q: %s", where, i, e.Name, strings.Join(errs, "; "))}
		}
		params := map[string]string{"list.name": e.Name}
		for k, v := range e.Vars {
			params["list.vars."+k] = v
		}
		out = append(out, element{name: e.Name, params: params, where: fmt.Sprintf("%s[%d]", where, i)})
	}
	return out, nil
}

func matrixElements(ns, where string, m *v1alpha1.MatrixGenerator, regs Registrations, strict bool) ([]element, error) {
	if len(m.Generators) != 2 {
		return nil, &GenerateError{v1alpha1.ReasonInvalid, fmt.Sprintf("%s.generators: a matrix is of two generators, not %d", where, len(m.Generators))}
	}
	var sides [2][]element
	for i, g := range m.Generators {
		w := fmt.Sprintf("%s.generators[%d]", where, i)
		var err error
		switch {
		case g.Clusters != nil && g.List == nil:
			sides[i], err = clusterElements(ns, w+".clusters", g.Clusters, regs, strict)
		case g.List != nil && g.Clusters == nil:
			sides[i], err = listElements(w+".list", g.List)
		default:
			err = &GenerateError{v1alpha1.ReasonInvalid, w + ": a matrix generator is exactly one of clusters and list"}
		}
		if err != nil {
			return nil, err
		}
	}
	if m.Generators[0].Clusters != nil && m.Generators[1].Clusters != nil {
		return nil, &GenerateError{v1alpha1.ReasonInvalid, where + ": a matrix of two clusters generators would give a Stack two clusters"}
	}
	var out []element
	for _, a := range sides[0] {
		for _, b := range sides[1] {
			params := maps.Clone(a.params)
			maps.Copy(params, b.params)
			e := element{name: a.name + "-" + b.name, params: params, cluster: a.cluster, block: a.block, where: where}
			if b.cluster != nil {
				e.cluster, e.block = b.cluster, b.block
			}
			out = append(out, e)
		}
	}
	return out, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

var paramRef = regexp.MustCompile(`\{\{\s*([^{}\s]*)\s*\}\}`)

// substitute replaces each {{name}} of s with its parameter; a name
// that is no parameter is an error naming the parameters there are.
func substitute(s string, params map[string]string) (string, error) {
	var missing []string
	out := paramRef.ReplaceAllStringFunc(s, func(m string) string {
		k := paramRef.FindStringSubmatch(m)[1]
		v, ok := params[k]
		if !ok {
			missing = append(missing, "{{"+k+"}}")
			return m
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("no parameter %s (this element's: %s)", strings.Join(missing, ", "), strings.Join(paramNames(params), ", "))
	}
	return out, nil
}

func paramNames(params map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(params)) {
		out = append(out, "{{"+k+"}}")
	}
	return out
}

var (
	environmentPattern = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_-]*)?$`)
	varNamePattern     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)
)

// generated is one desired Stack.
type generated struct {
	element element
	stack   *v1alpha1.Stack
}

// render is the Stack of each element: the template's name, spec.environment
// and spec.vars' values with the element's parameters, checked as the
// CRD's schema would; the first element that renders an invalid Stack is
// an error naming it and why.
func render(ss *v1alpha1.StackSet, elems []element) ([]generated, error) {
	var out []generated
	names := map[string]string{}
	for _, e := range elems {
		params := maps.Clone(e.params)
		params["stackset.name"] = ss.Name
		params["element"] = e.name
		bad := func(field string, err error) error {
			return &GenerateError{v1alpha1.ReasonTemplateInvalid, fmt.Sprintf("element %q (%s): spec.template.%s: %v: nothing is generated", e.name, e.where, field, err)}
		}
		name, err := substitute(cmpOr(ss.Spec.Template.Name, DefaultName), params)
		if err != nil {
			return nil, bad("name", err)
		}
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			return nil, bad("name", fmt.Errorf("%q is no Stack name: %s", name, strings.Join(errs, "; ")))
		}
		if prev, dup := names[name]; dup {
			return nil, bad("name", fmt.Errorf("%q is the name of element %q's Stack too", name, prev))
		}
		names[name] = e.name
		spec := ss.Spec.Template.Spec.DeepCopy()
		if spec.Environment, err = substitute(spec.Environment, params); err != nil {
			return nil, bad("spec.environment", err)
		}
		if !environmentPattern.MatchString(spec.Environment) {
			return nil, bad("spec.environment", fmt.Errorf("%q is no environment name (a letter or _, then letters, digits, _ and -)", spec.Environment))
		}
		for _, k := range slices.Sorted(maps.Keys(spec.Vars)) {
			if !varNamePattern.MatchString(k) {
				return nil, bad("spec.vars", fmt.Errorf("%q is no variable name", k))
			}
			if spec.Vars[k], err = substitute(spec.Vars[k], params); err != nil {
				return nil, bad("spec.vars."+k, err)
			}
		}
		if e.cluster != nil {
			for _, c := range spec.Clusters {
				if c.Name == e.block {
					return nil, bad("spec.clusters", fmt.Errorf("cluster block %q is the clusters generator's (block)", c.Name))
				}
			}
			spec.Clusters = append(spec.Clusters, v1alpha1.ClusterRef{
				Name: e.block, SecretRef: v1alpha1.SecretKeyRef{Name: kubeconfigSecret(ss, e), Key: v1alpha1.KubeconfigKey},
			})
		}
		defaults(spec)
		lbls := maps.Clone(ss.Spec.Template.Labels)
		if lbls == nil {
			lbls = map[string]string{}
		}
		lbls[v1alpha1.StackSetLabel] = ss.Name
		if shard, ok := ss.Labels[v1alpha1.ShardLabel]; ok {
			lbls[v1alpha1.ShardLabel] = shard
		}
		st := &v1alpha1.Stack{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: ss.Namespace, Labels: lbls,
				Annotations: map[string]string{v1alpha1.ElementAnnotation: e.name},
			},
			Spec: *spec,
		}
		out = append(out, generated{element: e, stack: st})
	}
	return out, nil
}

// kubeconfigSecret is the Secret a generated Stack reads its cluster's
// kubeconfig from: the registration of the StackSet's namespace, or the
// StackSet's copy of one of another namespace.
func kubeconfigSecret(ss *v1alpha1.StackSet, e element) string {
	if e.cluster.Namespace == ss.Namespace {
		return e.cluster.Name
	}
	return mirrorName(ss.Name, e.cluster)
}

// mirrorName is the StackSet's copy of a registration of another
// namespace.
func mirrorName(stackset string, r *Registration) string {
	return fmt.Sprintf("%s-cluster-%s-%s", stackset, r.Namespace, r.Name)
}

// defaults sets what the CRD defaults, so that a generated spec equals
// the stored one when nothing else differs.
func defaults(spec *v1alpha1.StackSpec) {
	if spec.Approval == "" {
		spec.Approval = v1alpha1.ApprovalAuto
	}
	for i := range spec.Notifications {
		if spec.Notifications[i].Format == "" {
			spec.Notifications[i].Format = v1alpha1.FormatJSON
		}
	}
}
