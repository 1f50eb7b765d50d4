package sensitive

// Fields are, per object, the fields whose rendered value depends on a
// sensitive value (what the planner's derived-value detection found): they
// are masked in every diff of their object whatever their value, since the
// live object holds what an older secret rendered to.
type Fields map[fieldsKey][]objectFields

type fieldsKey struct{ group, kind, name string }

type objectFields struct {
	// namespace is the object's namespace as the template wrote it ("" when
	// it wrote none: the release's, or none for cluster-scoped kinds).
	namespace string
	paths     []string
}

// Add records paths of an object; namespace "" matches the object in any
// namespace.
func (f Fields) Add(group, kind, namespace, name string, paths []string) {
	k := fieldsKey{group, kind, name}
	f[k] = append(f[k], objectFields{namespace: namespace, paths: paths})
}

// Of returns the fields recorded for an object.
func (f Fields) Of(group, kind, namespace, name string) []string {
	var out []string
	for _, o := range f[fieldsKey{group, kind, name}] {
		if o.namespace == "" || namespace == "" || o.namespace == namespace {
			out = append(out, o.paths...)
		}
	}
	return out
}
