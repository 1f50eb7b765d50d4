package releases

import (
	"maps"
	"slices"
	"strings"
)

// sensitiveWords are what a values key that holds a secret usually
// contains, compared lowercased and without '-', '_' and '.'.
var sensitiveWords = []string{"password", "passwd", "secret", "token", "apikey", "privatekey", "credential", "accesskey"}

// looksSensitive reports whether a values key looks like it holds a
// secret (password, apiKey, clientSecret, auth-token, ...).
func looksSensitive(key string) bool {
	k := strings.ToLower(strings.NewReplacer("-", "", "_", "", ".", "").Replace(key))
	return slices.ContainsFunc(sensitiveWords, func(w string) bool { return strings.Contains(k, w) })
}

// splitSensitive splits user values in two layers whose merge (the second
// over the first, as Helm merges values files) is the original: plain
// holds everything but the sensitive-looking keys, which secret holds
// (whole subtrees, at the same paths). secret is nil when there are none.
// Lists are kept whole in plain: Helm replaces lists when merging layers,
// so a list cannot be split.
func splitSensitive(v map[string]any) (plain, secret map[string]any) {
	plain = map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(v)) {
		switch {
		case looksSensitive(k):
			if secret == nil {
				secret = map[string]any{}
			}
			secret[k] = v[k]
		default:
			sub, ok := v[k].(map[string]any)
			if !ok {
				plain[k] = v[k]
				continue
			}
			p, s := splitSensitive(sub)
			if s != nil {
				if secret == nil {
					secret = map[string]any{}
				}
				secret[k] = s
				if len(p) == 0 {
					// Only secrets below: an empty map in plain would
					// merge to the same, but it is noise.
					continue
				}
			}
			plain[k] = p
		}
	}
	return plain, secret
}
