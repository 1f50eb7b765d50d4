// Package devtest gives integration tests a real cluster: one devcluster per
// test binary (or the one `make test` started, named by CONVOY_TEST_KUBECONFIG)
// and a fresh namespace per test.
//
//	var cluster = devtest.New()
//
//	func TestMain(m *testing.M) { os.Exit(cluster.Run(m)) }
//
//	func TestX(t *testing.T) {
//		ns := cluster.Namespace(t)
//		client := cluster.Client()
//		...
//	}
//
// Under -short (make test-short) no cluster is started or joined and no
// built tool is needed: the tests that need one skip, the first time they
// ask for it through a method that takes t (Need, Namespace, Helm, PodLog,
// …, or the package's HelmBinary, Tools and SkipShort). A test that reaches
// for the cluster through Client, Kubeconfig or RESTConfig first must call
// Need(t) before: under -short those panic, naming the omission.
package devtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/devcluster"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// EnvKubeconfig names the kubeconfig of an already running devcluster that
// tests should share instead of starting their own (make test sets it).
const EnvKubeconfig = "CONVOY_TEST_KUBECONFIG"

// Env is the cluster of one test binary.
type Env struct {
	kubeconfig string
	config     *rest.Config
	client     kubernetes.Interface
	cluster    *devcluster.Cluster // nil when shared

	// pg is the test binary's PostgreSQL (Postgres), once started.
	pgMu  sync.Mutex
	pg    *Postgres
	pgErr error
}

// New returns an Env to be started by Run in TestMain.
func New() *Env { return &Env{} }

// SkipShort skips t under -short, which runs only the tests that need
// neither a cluster nor a built tool; needs names what t needs ("the
// devcluster", "the helm oracle").
func SkipShort(t testing.TB, needs string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("needs %s: run without -short (make test)", needs)
	}
}

// HelmBinary is the helm oracle's path (devcluster.LocateHelm). It skips
// t under -short and fails it when the oracle is not built.
func HelmBinary(t testing.TB) string {
	t.Helper()
	SkipShort(t, "the helm oracle")
	bin, err := devcluster.LocateHelm(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Tools are the binaries a devcluster runs (devcluster.LocateTools), for
// a test that starts clusters of its own. It skips t under -short and
// fails it when the tools are not built.
func Tools(t testing.TB) devcluster.Tools {
	t.Helper()
	SkipShort(t, "the devcluster tools")
	tools, err := devcluster.LocateTools(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// Run connects to (or starts) the cluster, runs the tests, and stops a
// cluster it started. It returns the exit code for os.Exit. Under -short
// it runs the tests without a cluster: those that Need it skip.
func (e *Env) Run(m *testing.M) int {
	flag.Parse() // for testing.Short; m.Run does not parse again
	if testing.Short() {
		return m.Run()
	}
	if err := e.start(); err != nil {
		fmt.Fprintf(os.Stderr, "devtest: %v\n", err)
		return 1
	}
	code := m.Run()
	e.stopPostgres()
	if e.cluster != nil {
		e.cluster.Stop()
	}
	return code
}

func (e *Env) start() error {
	if path := os.Getenv(EnvKubeconfig); path != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			return fmt.Errorf("%s=%s: %w", EnvKubeconfig, path, err)
		}
		cfg.QPS, cfg.Burst = 100, 200
		e.kubeconfig, e.config = path, cfg
	} else {
		tools, err := devcluster.LocateTools(os.Getenv)
		if err != nil {
			return err
		}
		c, err := devcluster.Start(context.Background(), devcluster.Options{Tools: tools})
		if err != nil {
			return err
		}
		e.cluster, e.kubeconfig, e.config = c, c.Kubeconfig(), c.RESTConfig()
	}
	client, err := kubernetes.NewForConfig(e.config)
	if err != nil {
		return err
	}
	e.client = client
	return nil
}

// Need skips t under -short, where there is no cluster. A test calls it
// before anything else of e when that is Client, Kubeconfig or
// RESTConfig (the methods that take t call it themselves).
func (e *Env) Need(t testing.TB) {
	t.Helper()
	SkipShort(t, "the devcluster")
	if e.config == nil {
		t.Fatal("devtest: no cluster: TestMain must return cluster.Run(m)")
	}
}

// started panics, naming the omission, when e has no cluster: under
// -short, a test that did not call Need(t) first.
func (e *Env) started(method string) {
	if e.config == nil {
		panic(fmt.Sprintf("devtest: %s without a cluster: under -short, call cluster.Need(t) at the start of the test", method))
	}
}

// Kubeconfig is the path of the admin kubeconfig.
func (e *Env) Kubeconfig() string {
	e.started("Kubeconfig")
	return e.kubeconfig
}

// RESTConfig returns a copy of the admin client configuration.
func (e *Env) RESTConfig() *rest.Config {
	e.started("RESTConfig")
	return rest.CopyConfig(e.config)
}

// Client is a typed admin client.
func (e *Env) Client() kubernetes.Interface {
	e.started("Client")
	return e.client
}

var unsafeChars = regexp.MustCompile(`[^a-z0-9-]+`)

// Namespace creates a namespace for t alone, waits until pods can be created
// in it (its default service account exists), and deletes it when t ends.
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	e.Need(t)
	base := strings.Trim(unsafeChars.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(base) > 40 {
		base = strings.TrimRight(base[:40], "-")
	}
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	name := "t-" + base + "-" + hex.EncodeToString(suffix)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"convoy.dev/test": "true"}}}
	if _, err := e.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = e.client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := e.client.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("namespace %s: default service account never appeared: %v", name, err)
	}
	return name
}

// Helm runs the helm oracle against the cluster with an isolated helm
// home and returns its stdout; a failure's error carries stderr. A missing
// oracle fails the test.
func (e *Env) Helm(t testing.TB, args ...string) (string, error) {
	t.Helper()
	e.Need(t)
	return e.runHelm(t, HelmBinary(t), args)
}

// Helm3 runs Helm 3 (client-side apply) as Helm runs helm 4. A missing
// binary fails the test.
func (e *Env) Helm3(t testing.TB, args ...string) (string, error) {
	t.Helper()
	e.Need(t)
	bin, err := devcluster.LocateHelm3(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	return e.runHelm(t, bin, args)
}

func (e *Env) runHelm(t testing.TB, bin string, args []string) (string, error) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(bin, append([]string{"--kubeconfig", e.kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+home+"/config", "HELM_CACHE_HOME="+home+"/cache", "HELM_DATA_HOME="+home+"/data")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// PodLog makes lines the log (stdout) of every container of the pod
// namespace/name, which need not exist yet: `kubectl logs` and the
// pods/log API return them once the pod runs.
func (e *Env) PodLog(t testing.TB, namespace, name string, lines ...string) {
	t.Helper()
	e.Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	file := filepath.Join(t.TempDir(), namespace+"_"+name+".log")
	if err := devcluster.WritePodLog(ctx, e.config, namespace, name, file, lines); err != nil {
		t.Fatalf("pod log: %v", err)
	}
}

// NamespaceLog makes lines the log (stdout) of every container of every
// pod in namespace that has no PodLog of its own, until t ends.
func (e *Env) NamespaceLog(t testing.TB, namespace string, lines ...string) {
	t.Helper()
	e.Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	file := filepath.Join(t.TempDir(), namespace+".log")
	if err := devcluster.WriteNamespaceLog(ctx, e.config, namespace, file, lines); err != nil {
		t.Fatalf("namespace log: %v", err)
	}
	t.Cleanup(func() { _ = devcluster.DeleteNamespaceLog(context.Background(), e.config, namespace) })
}
