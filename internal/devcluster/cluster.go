package devcluster

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Failure-simulation labels, honoured by the cluster's fake kubelet. Later
// tests and examples rely on these exact strings.
const (
	// LabelNeverReady on a pod ("true") keeps it Running but never Ready.
	LabelNeverReady = "devcluster.convoy.dev/never-ready"
	// LabelFail on a pod ("true") makes it end Failed (exit code 1).
	LabelFail = "devcluster.convoy.dev/fail"

	// AnnotationReadyAfter on a pod (a duration, "3s") delays its
	// readiness, like a container that takes time to start.
	AnnotationReadyAfter = "devcluster.convoy.dev/ready-after"

	// NodeAnnotation marks the nodes kwok manages.
	NodeAnnotation = "kwok.x-k8s.io/node"

	serviceCIDR      = "10.96.0.0/16"
	serviceClusterIP = "10.96.0.1"
	defaultNodes     = 3
	stopGrace        = 10 * time.Second
)

//go:embed stages/stages.yaml
var stagesYAML []byte

// Options configure Start. The zero value (plus Tools) starts three nodes in
// a fresh temporary directory.
type Options struct {
	Tools Tools
	// Nodes is the number of fake nodes; 0 means 3.
	Nodes int
	// KubeconfigPath, if set, receives a copy of the admin kubeconfig; Stop
	// removes it.
	KubeconfigPath string
	// StartTimeout bounds the whole start; 0 means two minutes.
	StartTimeout time.Duration
	// VolumeDir holds the directories of the volumes the local-path
	// provisioner creates (StorageClass "standard"); empty means
	// "volumes" in the cluster's directory, removed by Stop.
	VolumeDir string
	// Restart says what happens when a component exits on its own (a
	// crash, a SIGKILL from a test): by default it stays down and Err
	// reports it; RestartOnExit starts it again (restart.go).
	Restart RestartPolicy
	// Logf, if set, is told of each component that exited on its own and
	// how its restart went.
	Logf func(format string, args ...any)
}

// Cluster is a running local control plane.
type Cluster struct {
	dir         string
	kubeconfig  string
	extraConfig string
	restConfig  *rest.Config
	launcher    *launcher
	policy      RestartPolicy
	// logf tells of components restarted on their own (Options.Logf).
	logf func(format string, args ...any)
	// mu guards comps' processes and stopping; each component's op
	// serialises its restarts.
	mu       sync.Mutex
	comps    []*component
	stopping bool
	// done is closed by Stop: restarts under way end.
	done           chan struct{}
	stopOnce       sync.Once
	componentPorts map[string]int
	// stopProvisioner ends the local-path provisioner; provisionerDone
	// is closed once it has.
	stopProvisioner context.CancelFunc
	provisionerDone chan struct{}
}

// Kubeconfig is the path of the admin kubeconfig.
func (c *Cluster) Kubeconfig() string { return c.kubeconfig }

// RESTConfig returns a copy of the admin client configuration.
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.restConfig) }

// Dir is the cluster's private directory (certificates, etcd data, logs).
func (c *Cluster) Dir() string { return c.dir }

// Pids lists the process ids of the cluster's components, which are also
// their process group ids.
func (c *Cluster) Pids() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string]int, len(c.comps))
	for _, comp := range c.comps {
		m[comp.name] = comp.proc.Pid()
	}
	return m
}

// Start brings up etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok with opts.Nodes fake nodes, and returns once the
// nodes are Ready and schedulable. On error nothing it started is left.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if err := opts.Tools.check(); err != nil {
		return nil, err
	}
	opts.Nodes = cmp.Or(opts.Nodes, defaultNodes)
	opts.StartTimeout = cmp.Or(opts.StartTimeout, 2*time.Minute)
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()

	dir, err := os.MkdirTemp("", "convoy-devcluster-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, launcher: newLauncher(), extraConfig: opts.KubeconfigPath, policy: opts.Restart, logf: opts.Logf, done: make(chan struct{})}
	if c.logf == nil {
		c.logf = func(string, ...any) {}
	}
	if err := c.start(ctx, opts); err != nil {
		c.Stop()
		return nil, fmt.Errorf("devcluster: %w", err)
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, opts Options) error {
	if err := os.MkdirAll(filepath.Join(c.dir, "logs"), 0o700); err != nil {
		return err
	}
	p, err := newPKI(c.dir)
	if err != nil {
		return fmt.Errorf("generate certificates: %w", err)
	}
	ports, err := freePorts(4)
	if err != nil {
		return err
	}
	etcdClient, etcdPeer, apiPort, kubeletPort := ports[0], ports[1], ports[2], ports[3]
	c.componentPorts = map[string]int{"etcd": etcdClient, "etcd-peer": etcdPeer, "kube-apiserver": apiPort, "kwok": kubeletPort}
	bin := func(name string) string { return filepath.Join(opts.Tools.KubeBinDir, name) }

	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdClient)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(etcdPeer)
	plain := &http.Client{Timeout: 2 * time.Second}
	etcdReady := func(ctx context.Context, p *process) error {
		return c.waitHTTP(ctx, p, plain, etcdURL+"/health", "")
	}
	if err := c.run(ctx, "etcd", bin("etcd"), etcdReady,
		"--name=devcluster",
		"--data-dir="+filepath.Join(c.dir, "etcd"),
		"--listen-client-urls="+etcdURL,
		"--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=devcluster="+peerURL,
		"--unsafe-no-fsync",
		"--log-level=warn",
	); err != nil {
		return err
	}

	apiURL := "https://127.0.0.1:" + strconv.Itoa(apiPort)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.caPEM)
	secure := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	apiReady := func(ctx context.Context, proc *process) error {
		return c.waitHTTP(ctx, proc, secure, apiURL+"/readyz", p.adminToken)
	}
	if err := c.run(ctx, "kube-apiserver", bin("kube-apiserver"), apiReady,
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(apiPort),
		"--tls-cert-file="+p.servingCert,
		"--tls-private-key-file="+p.servKey,
		"--client-ca-file="+p.caCert,
		"--token-auth-file="+p.tokenFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+p.saPub,
		"--service-account-signing-key-file="+p.saKey,
		"--service-cluster-ip-range="+serviceCIDR,
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		"--cert-dir="+filepath.Join(c.dir, "apiserver-certs"),
		"--profiling=false",
		// The kubelet (kwok's server, for pod logs) is reached at the node's
		// InternalIP, 127.0.0.1; its self-signed certificate is accepted
		// because no --kubelet-certificate-authority is given.
		"--kubelet-preferred-address-types=InternalIP",
	); err != nil {
		return err
	}

	c.kubeconfig = filepath.Join(c.dir, "kubeconfig")
	if err := writeKubeconfig(c.kubeconfig, apiURL, p); err != nil {
		return err
	}
	if c.extraConfig != "" {
		if err := writeKubeconfig(c.extraConfig, apiURL, p); err != nil {
			return err
		}
	}
	c.restConfig = &rest.Config{
		Host:            apiURL,
		BearerToken:     p.adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: p.caPEM},
		QPS:             100,
		Burst:           200,
	}

	if err := c.run(ctx, "kube-controller-manager", bin("kube-controller-manager"), nil,
		"--kubeconfig="+c.kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
		"--service-account-private-key-file="+p.saKey,
		"--root-ca-file="+p.caCert,
		"--cluster-signing-cert-file="+p.caCert,
		"--cluster-signing-key-file="+p.caKey,
		"--use-service-account-credentials=false",
		"--kube-api-qps=100",
		"--kube-api-burst=200",
	); err != nil {
		return err
	}
	if err := c.run(ctx, "kube-scheduler", bin("kube-scheduler"), nil,
		"--kubeconfig="+c.kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
	); err != nil {
		return err
	}

	client, err := kubernetes.NewForConfig(c.restConfig)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(c.restConfig)
	if err != nil {
		return err
	}
	if err := createLogsCRDs(ctx, dyn); err != nil {
		return err
	}
	for i := range opts.Nodes {
		if err := createNode(ctx, client, fmt.Sprintf("kwok-node-%d", i)); err != nil {
			return err
		}
	}
	stages := filepath.Join(c.dir, "stages.yaml")
	if err := os.WriteFile(stages, stagesYAML, 0o600); err != nil {
		return err
	}
	if err := waitLogsCRDs(ctx, dyn); err != nil {
		return err
	}
	kubeletAddr := "127.0.0.1:" + strconv.Itoa(kubeletPort)
	if err := c.run(ctx, "kwok", opts.Tools.Kwok, nil,
		"--kubeconfig="+c.kubeconfig,
		"--config="+stages,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector="+NodeAnnotation+"=fake",
		"--cidr=10.244.0.1/16",
		// The nodes' InternalIP and kubelet port: kwok's server answers
		// there for every node (pod logs, see podlogs.go).
		"--node-ip=127.0.0.1",
		"--node-port="+strconv.Itoa(kubeletPort),
		"--server-address="+kubeletAddr,
		"--enable-crds="+kwokCRDs(),
		// Heartbeats go through node leases; without them the node-lifecycle
		// controller would mark the nodes NotReady after its grace period.
		"--node-lease-duration-seconds=40",
	); err != nil {
		return err
	}
	if err := c.startProvisioner(ctx, client, opts.VolumeDir); err != nil {
		return err
	}
	return c.waitSchedulable(ctx, client, opts.Nodes)
}

// startProvisioner creates the default StorageClass and runs its
// local-path provisioner in this process until Stop.
func (c *Cluster) startProvisioner(ctx context.Context, client kubernetes.Interface, dir string) error {
	if err := createStorageClass(ctx, client); err != nil {
		return fmt.Errorf("storage class: %w", err)
	}
	dir = cmp.Or(dir, filepath.Join(c.dir, "volumes"))
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	logFile, err := os.OpenFile(filepath.Join(c.dir, "logs", "provisioner.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	pctx, cancel := context.WithCancel(context.Background())
	c.stopProvisioner, c.provisionerDone = cancel, make(chan struct{})
	p := &localPath{client: client, dir: dir, logf: func(format string, args ...any) {
		fmt.Fprintf(logFile, time.Now().Format(time.RFC3339)+" "+format+"\n", args...)
	}}
	go func() {
		defer close(c.provisionerDone)
		defer logFile.Close()
		p.run(pctx)
	}()
	return nil
}

// run starts one component, records it for Stop and Restart, and waits
// until ready (nil: at once) says it serves.
func (c *Cluster) run(ctx context.Context, name, bin string, ready func(context.Context, *process) error, args ...string) error {
	comp := &component{name: name, bin: bin, args: args, ready: ready}
	p, err := c.launcher.start(name, bin, args, c.logPath(name))
	if err != nil {
		return err
	}
	c.mu.Lock()
	comp.proc = p
	c.comps = append(c.comps, comp)
	c.mu.Unlock()
	go c.watch(comp, p)
	if ready != nil {
		return ready(ctx, p)
	}
	return nil
}

func (c *Cluster) logPath(name string) string { return filepath.Join(c.dir, "logs", name+".log") }

// Stop ends every process the cluster started, newest first, and removes
// its directory and kubeconfig copy. It is safe to call more than once.
func (c *Cluster) Stop() {
	c.stopOnce.Do(func() {
		c.mu.Lock()
		c.stopping = true
		c.mu.Unlock()
		close(c.done)
		if c.stopProvisioner != nil {
			c.stopProvisioner()
			<-c.provisionerDone
		}
		// A restart under way ends (c.done) before its component is
		// stopped, so that no process starts after Stop.
		for i := len(c.comps) - 1; i >= 0; i-- {
			comp := c.comps[i]
			comp.op.Lock()
			c.mu.Lock()
			p := comp.proc
			c.mu.Unlock()
			p.stop(stopGrace)
			comp.op.Unlock()
		}
		c.launcher.close()
		if c.extraConfig != "" {
			_ = os.Remove(c.extraConfig)
		}
		_ = os.RemoveAll(c.dir)
	})
}

// Err reports a component that is no longer running, if any: under
// RestartOnExit, one that is not being started again (it kept exiting).
func (c *Cluster) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, comp := range c.comps {
		if comp.failed != nil {
			return comp.failed
		}
		if !comp.proc.running() && c.policy != RestartOnExit && !comp.restarting {
			return comp.proc.exitError()
		}
	}
	return nil
}

// waitHTTP polls url until it answers 200, the process exits, or ctx ends.
// Start-up readiness has nothing to watch yet, so polling is the only way.
func (c *Cluster) waitHTTP(ctx context.Context, p *process, client *http.Client, url, token string) error {
	var last string
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
		} else {
			last = err.Error()
		}
		if !p.running() {
			return p.exitError()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready at %s (last answer: %s); last output:\n%s", p.name, url, last, p.logTail(15))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitSchedulable waits until n nodes are Ready without the not-ready taint
// (which the node-lifecycle controller clears) and the default namespace's
// service account exists, i.e. pods can be created and scheduled.
func (c *Cluster) waitSchedulable(ctx context.Context, client kubernetes.Interface, n int) error {
	var state string
	for {
		if err := c.Err(); err != nil {
			return err
		}
		ready, st, err := nodesSchedulable(ctx, client, n)
		state = st
		if err == nil && ready {
			_, err = client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
			if err == nil {
				return nil
			}
			state = "default service account not created yet"
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nodes not schedulable: %s", state)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func nodesSchedulable(ctx context.Context, client kubernetes.Interface, n int) (bool, string, error) {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err.Error(), err
	}
	ok := 0
	var waiting []string
	for _, node := range nodes.Items {
		if nodeSchedulable(&node) {
			ok++
		} else {
			waiting = append(waiting, node.Name)
		}
	}
	return ok >= n, fmt.Sprintf("%d/%d nodes ready and untainted (waiting: %s)", ok, n, strings.Join(waiting, ", ")), nil
}

func nodeSchedulable(node *corev1.Node) bool {
	ready := false
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			return false
		}
	}
	return ready
}

// nodeResources are what each fake node advertises, as a real node's
// kubelet does: capacity, and allocatable below it by what a kubelet
// reserves for the system and keeps for eviction (kube-reserved,
// system-reserved, evictionHard's memory.available<100Mi and
// nodefs.available<10%). Big enough for the tests' hundreds of pods and
// for charts' default requests and limits, ephemeral-storage included:
// without it bitnami's resourcesPreset never schedules.
func nodeResources() (capacity, allocatable corev1.ResourceList) {
	capacity = corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("32"),
		corev1.ResourceMemory:           resource.MustParse("256Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("500Gi"),
		corev1.ResourcePods:             resource.MustParse("250"),
	}
	allocatable = corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("31800m"),
		corev1.ResourceMemory:           resource.MustParse("254Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("450Gi"),
		corev1.ResourcePods:             resource.MustParse("250"),
	}
	return capacity, allocatable
}

func createNode(ctx context.Context, client kubernetes.Interface, name string) error {
	capacity, allocatable := nodeResources()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{NodeAnnotation: "fake"},
			Labels: map[string]string{
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: allocatable},
	}
	_, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("v1 Node %s: %w", name, err)
	}
	return nil
}

func writeKubeconfig(path, server string, p *pki) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["devcluster"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: p.caPEM}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: p.adminToken}
	cfg.Contexts["devcluster"] = &clientcmdapi.Context{Cluster: "devcluster", AuthInfo: "admin", Namespace: "default"}
	cfg.CurrentContext = "devcluster"
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*cfg, path)
}

// freePorts reserves n distinct free loopback ports. They are released just
// before the components bind them; a clash with another process in that
// window fails the start with the component's "address already in use".
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("reserve a port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// ErrNotRunning is returned by operations on a stopped cluster.
var ErrNotRunning = errors.New("devcluster is not running")
