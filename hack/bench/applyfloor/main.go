// Command applyfloor is the floor line of a first apply (issue 56): the
// objects of a stack's releases, as `convoy render` prints them, applied
// to the cluster of $KUBECONFIG with nothing else done — one server-side
// apply per object, releases -p at a time, no plan, no dry run, no record,
// no wait. What it takes is what the API server and the cluster's
// controllers need to absorb those objects on this machine; a first apply
// of the same releases cannot be faster.
//
// Each release's objects go to its namespace with -prefix in front (so
// the floor never touches the releases convoy applied); those namespaces
// are created first, as create_namespace does. Test hooks are skipped, as
// an apply skips them; other hooks are applied as objects.
//
// Usage: convoy render -C DIR | applyfloor [-p 20] [-prefix floor-]
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// release is one release's part of the render output.
type release struct {
	name, namespace string
	docs            []string
}

var header = regexp.MustCompile(`^# Release: (\S+) \((\S+)\)$`)

// split cuts `convoy render`'s output at its "# Release:" lines and each
// release's manifest into YAML documents.
func split(r io.Reader) ([]*release, error) {
	var (
		out []*release
		cur *release
		doc strings.Builder
	)
	flush := func() {
		if cur != nil && strings.TrimSpace(doc.String()) != "" {
			cur.docs = append(cur.docs, doc.String())
		}
		doc.Reset()
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := header.FindStringSubmatch(line); m != nil {
			flush()
			cur = &release{name: m[1], namespace: m[2]}
			out = append(out, cur)
			continue
		}
		if line == "---" {
			flush()
			continue
		}
		doc.WriteString(line)
		doc.WriteByte('\n')
	}
	flush()
	return out, sc.Err()
}

func main() {
	parallel := flag.Int("p", 20, "releases applied at once")
	prefix := flag.String("prefix", "floor-", "put in front of every release's namespace")
	flag.Parse()
	if err := run(*parallel, *prefix); err != nil {
		fmt.Fprintln(os.Stderr, "applyfloor:", err)
		os.Exit(1)
	}
}

func run(parallel int, prefix string) error {
	releases, err := split(os.Stdin)
	if err != nil {
		return err
	}
	if len(releases) == 0 {
		return fmt.Errorf("no release on standard input (expected `convoy render` output)")
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
	if err != nil {
		return err
	}
	// As convoy's defaults (--kube-qps, --kube-burst).
	cfg.QPS, cfg.Burst = 500, 1000
	typed, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	ctx := context.Background()

	start := time.Now()
	seen := map[string]bool{}
	for _, r := range releases {
		ns := prefix + r.namespace
		if seen[ns] {
			continue
		}
		seen[ns] = true
		_, err := typed.CoreV1().Namespaces().Create(ctx,
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("v1 Namespace %s: %w", ns, err)
		}
	}

	var (
		objects atomic.Int64
		wg      sync.WaitGroup
		errs    = make(chan error, len(releases))
		work    = make(chan *release)
	)
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				n, err := apply(ctx, dyn, mapper, r, prefix+r.namespace)
				objects.Add(int64(n))
				if err != nil {
					errs <- fmt.Errorf("release %s: %w", r.name, err)
				}
			}
		}()
	}
	for _, r := range releases {
		work <- r
	}
	close(work)
	wg.Wait()
	close(errs)
	secs := time.Since(start).Seconds()
	if err, failed := <-errs; failed {
		return err // the first; the others are alike
	}
	fmt.Printf("applied %d releases (%d objects, -p %d) in %.1f s: %.1f releases/s\n",
		len(releases), objects.Load(), parallel, secs, float64(len(releases))/secs)
	return nil
}

// apply applies one release's objects in the order rendered, each by one
// server-side apply into ns (namespaced kinds only).
func apply(ctx context.Context, dyn dynamic.Interface, mapper meta.RESTMapper, r *release, ns string) (int, error) {
	n := 0
	for _, doc := range r.docs {
		var obj unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			return n, err
		}
		if obj.Object == nil {
			continue
		}
		if strings.HasPrefix(obj.GetAnnotations()["helm.sh/hook"], "test") {
			continue
		}
		gvk := obj.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return n, fmt.Errorf("%s %s: %w", gvk, obj.GetName(), err)
		}
		ri := dyn.Resource(m.Resource)
		var target dynamic.ResourceInterface = ri
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			obj.SetNamespace(ns)
			target = ri.Namespace(ns)
		}
		body, err := obj.MarshalJSON()
		if err != nil {
			return n, err
		}
		force := true
		if _, err := target.Patch(ctx, obj.GetName(), types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: "applyfloor", Force: &force}); err != nil {
			return n, fmt.Errorf("%s %s/%s: %w", gvk, ns, obj.GetName(), err)
		}
		n++
	}
	return n, nil
}
