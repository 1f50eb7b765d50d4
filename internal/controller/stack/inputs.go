package stack

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/sensitive"
	"github.com/convoy-sh/convoy/internal/stack/config"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// inputs are a Stack's variable values and cluster kubeconfigs, read from
// its spec and the ConfigMaps and Secrets it names.
type inputs struct {
	// vars are the variable values, one a variable, by name: spec.vars win
	// over varsFrom, later varsFrom objects over earlier ones. Values from
	// Secrets are sensitive.
	vars config.RawValues
	// kubeconfigs are the cluster blocks' kubeconfig files (written under
	// a temporary directory that cleanup removes).
	kubeconfigs map[string]string
	// secrets are the values read from Secrets, masked in every message.
	secrets []string
	// sqlConnection is spec.storage.secretRef's connection string ("":
	// none).
	sqlConnection string
	// hash identifies the inputs with the source digest: a plan made from
	// other inputs is not the Stack's plan any more.
	hash    string
	cleanup func()
}

// configError is a Stack whose spec or referenced objects are wrong: it
// stalls until someone changes them.
type configError struct{ msg string }

func (e *configError) Error() string { return e.msg }

// readInputs reads the Stack's inputs as the Stack's identity, once its
// references are allowed (refsAllowed).
func (r *reconciler) readInputs(ctx context.Context, st *v1alpha1.Stack, sourceDigest string, declared map[string]*config.Variable, tmpDir string) (*inputs, error) {
	if err := r.refsAllowed(st); err != nil {
		return nil, err
	}
	c, err := r.readerFor(st)
	if err != nil {
		return nil, err
	}
	return readInputs(ctx, c, st, sourceDigest, r.opts.impersonating(st), declared, tmpDir)
}

// readInputs reads the Stack's inputs with c. declared are the variables the
// stack declares: keys of varsFrom objects that name none are ignored
// (a ConfigMap may serve several stacks); spec.vars must all be declared.
func readInputs(ctx context.Context, c client.Reader, st *v1alpha1.Stack, sourceDigest, identity string, declared map[string]*config.Variable, tmpDir string) (*inputs, error) {
	in := &inputs{kubeconfigs: map[string]string{}, cleanup: func() {}}
	given := map[string]config.RawValue{}
	h := sha256.New()
	fmt.Fprintf(h, "source\x00%s\x00env\x00%s\x00", sourceDigest, st.Spec.Environment)
	if identity != "" {
		// Another identity may see and be allowed other things: a plan
		// made as one is not the plan of another.
		fmt.Fprintf(h, "identity\x00%s\x00", identity)
	}
	for _, vf := range st.Spec.VarsFrom {
		key := types.NamespacedName{Namespace: refNamespace(st, vf.Namespace), Name: vf.Name}
		var data map[string]string
		switch vf.Kind {
		case "ConfigMap":
			var cm corev1.ConfigMap
			if err := c.Get(ctx, key, &cm); err != nil {
				if apierrors.IsNotFound(err) && vf.Optional {
					continue
				}
				return nil, refError("v1 ConfigMap", key, err)
			}
			data = cm.Data
		case "Secret":
			var s corev1.Secret
			if err := c.Get(ctx, key, &s); err != nil {
				if apierrors.IsNotFound(err) && vf.Optional {
					continue
				}
				return nil, refError("v1 Secret", key, err)
			}
			data = map[string]string{}
			for k, v := range s.Data {
				data[k] = string(v)
			}
			for k, v := range s.StringData {
				data[k] = v
			}
		default:
			return nil, &configError{fmt.Sprintf("spec.varsFrom: kind %q: use ConfigMap or Secret", vf.Kind)}
		}
		where := fmt.Sprintf("%s %s", vf.Kind, key)
		for _, k := range slices.Sorted(maps.Keys(data)) {
			if _, ok := declared[k]; !ok {
				continue
			}
			v := config.VariableValue(config.ValueFromCaller, where, k, data[k])
			v.Sensitive = vf.Kind == "Secret"
			given[k] = v
			if vf.Kind == "Secret" && data[k] != "" {
				in.secrets = append(in.secrets, data[k])
			}
		}
	}
	for k, v := range st.Spec.Vars {
		given[k] = config.VariableValue(config.ValueFromCaller, "spec.vars", k, v)
	}
	// Only the value that wins is given: one overridden is not evaluated.
	for _, k := range slices.Sorted(maps.Keys(given)) {
		v := given[k]
		in.vars = append(in.vars, v)
		fmt.Fprintf(h, "var\x00%s\x00%s\x00%v\x00", k, v.Text, v.Sensitive)
	}
	if len(st.Spec.Clusters) > 0 {
		dir, err := os.MkdirTemp(tmpDir, "kubeconfig-*")
		if err != nil {
			return nil, err
		}
		in.cleanup = func() { os.RemoveAll(dir) }
		for i, cr := range st.Spec.Clusters {
			key := types.NamespacedName{Namespace: refNamespace(st, cr.SecretRef.Namespace), Name: cr.SecretRef.Name}
			var s corev1.Secret
			if err := c.Get(ctx, key, &s); err != nil {
				in.cleanup()
				return nil, refError(fmt.Sprintf("spec.clusters[%d] (cluster %q): v1 Secret", i, cr.Name), key, err)
			}
			k := cmp.Or(cr.SecretRef.Key, "kubeconfig")
			kc, ok := s.Data[k]
			if !ok {
				in.cleanup()
				return nil, &configError{fmt.Sprintf("spec.clusters[%d] (cluster %q): v1 Secret %s has no key %q", i, cr.Name, key, k)}
			}
			p := filepath.Join(dir, fmt.Sprintf("%d.kubeconfig", i))
			if err := os.WriteFile(p, kc, 0o600); err != nil {
				in.cleanup()
				return nil, err
			}
			in.kubeconfigs[cr.Name] = p
			sum := sha256.Sum256(kc)
			fmt.Fprintf(h, "cluster\x00%s\x00%x\x00", cr.Name, sum)
		}
	}
	if sp := st.Spec.Storage; sp != nil {
		fmt.Fprintf(h, "storage\x00%s\x00", sp.Driver)
		if ref := sp.SecretRef; ref != nil {
			// Only from the Stack's own namespace: a connection string
			// names a database and its credentials.
			key := types.NamespacedName{Namespace: st.Namespace, Name: ref.Name}
			var s corev1.Secret
			if err := c.Get(ctx, key, &s); err != nil {
				in.cleanup()
				return nil, refError("spec.storage.secretRef: v1 Secret", key, err)
			}
			k := cmp.Or(ref.Key, "connection")
			conn, ok := s.Data[k]
			if !ok || len(conn) == 0 {
				in.cleanup()
				return nil, &configError{fmt.Sprintf("spec.storage.secretRef: v1 Secret %s has no key %q", key, k)}
			}
			in.sqlConnection = strings.TrimSpace(string(conn))
			in.secrets = append(in.secrets, in.sqlConnection)
			sum := sha256.Sum256(conn)
			fmt.Fprintf(h, "connection\x00%x\x00", sum)
		}
	}
	in.hash = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return in, nil
}

func refError(what string, key types.NamespacedName, err error) error {
	if apierrors.IsNotFound(err) {
		return &configError{fmt.Sprintf("%s %s not found", what, key)}
	}
	return fmt.Errorf("%s %s: %w", what, key, kube.Forbidden(err))
}

// redact masks the Secret values in a message.
func (in *inputs) redact(msg string) string {
	if in == nil {
		return msg
	}
	return sensitive.New(in.secrets).Text(msg)
}
