package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// copyTree copies a directory of regular files.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// syncBuffer is a bytes.Buffer safe for a running command's writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// convoy push, controller install, controller, get stacks and approve, as
// a person runs them.
func TestPushControllerApproveGetStacks(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	reg := sourcetest.StartRegistry(t, "", "")
	root := t.TempDir()
	copyTree(t, appChart(t), filepath.Join(root, "charts", "app"))
	dir := filepath.Join(root, "stacks", "shop")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	hcl := strings.ReplaceAll(threeTier("../../charts/app", ns, "v1"), "wait   = true", "")
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	ref := "oci://" + reg.Host + "/stacks/shop:v1"
	code, out, errOut := runConvoy(t, "push", dir, ref)
	if code != 0 || !regexp.MustCompile(`^sha256:[0-9a-f]{64}\n$`).MatchString(out) || !strings.Contains(errOut, "Pushed "+ref+"@") {
		t.Fatalf("push: exit %d\n%s\n%s", code, out, errOut)
	}

	code, out, errOut = runConvoy(t, "controller", "install", "--kubeconfig", kc, "--min-interval", "1s")
	if code != 0 || !strings.Contains(out, "applied apiextensions.k8s.io/v1 CustomResourceDefinition stacks.convoy.dev") || !strings.Contains(out, "ClusterRole convoy-controller") ||
		!strings.Contains(out, "applied admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy convoy-stack-approval") || !strings.Contains(out, "ClusterRole convoy-approver") {
		t.Fatalf("controller install: exit %d\n%s\n%s", code, out, errOut)
	}
	c, err := ctl.NewClient(cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	st := &v1alpha1.Stack{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns},
		Spec:       v1alpha1.StackSpec{Source: ref, Approval: v1alpha1.ApprovalManual, Interval: &metav1.Duration{Duration: time.Hour}},
	}
	if err := c.Create(context.Background(), st); err != nil {
		t.Fatal(err)
	}

	ctlErr := runControllerCLI(t, kc, ns, true)
	wait := func(what string, ok func(*v1alpha1.Stack) bool) {
		t.Helper()
		var got v1alpha1.Stack
		devtest.Eventually(t, 60*time.Second, func() bool {
			got = v1alpha1.Stack{}
			if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "shop"}, &got); err != nil {
				t.Fatal(err)
			}
			return ok(&got)
		}, func() string {
			return fmt.Sprintf("not %s: %+v\ncontroller log:\n%s", what, got.Status, ctlErr.String())
		})
	}
	wait("planned", func(st *v1alpha1.Stack) bool { return st.Status.Plan != nil && st.Status.Plan.HasChanges })

	code, out, errOut = runConvoy(t, "get", "stacks", "-n", ns, "--kubeconfig", kc)
	if code != 0 || !regexp.MustCompile(`shop\s+False\s+ApprovalRequired\s+3 to install, 0 to upgrade, 0 to uninstall, 0 unchanged \(sha256:[0-9a-f]{12}\)\s+manual\s+-`).MatchString(out) {
		t.Fatalf("get stacks: exit %d\n%s\n%s", code, out, errOut)
	}
	// The plan the controller stored reads back, with its digest.
	var planned v1alpha1.Stack
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "shop"}, &planned); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runConvoy(t, "show", "--stack", "shop", "-n", ns, "--kubeconfig", kc)
	if code != 0 || !strings.HasPrefix(out, "Plan "+planned.Status.Plan.Digest+" of Stack "+ns+"/shop (") || !strings.Contains(out, "3 to install") || !strings.Contains(out, "release.api") {
		t.Fatalf("show --stack: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runConvoy(t, "show", "--stack", "nope", "-n", ns, "--kubeconfig", kc)
	if code != 1 || !strings.Contains(errOut, "convoy.dev/v1alpha1 Stack "+ns+"/nope has no stored plan") {
		t.Fatalf("show --stack of a Stack without a plan: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runConvoy(t, "approve", "shop", "-n", ns, "--kubeconfig", kc, "--plan", "sha256:0123")
	if code != 1 || !strings.Contains(errOut, "the current plan is sha256:") {
		t.Fatalf("approve another digest: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runConvoy(t, "approve", "shop", "-n", ns, "--kubeconfig", kc)
	if code != 0 || !regexp.MustCompile(`^Approved plan sha256:[0-9a-f]{64} of Stack `+ns+`/shop as admin\.\n$`).MatchString(out) {
		t.Fatalf("approve: exit %d\n%s\n%s", code, out, errOut)
	}
	wait("applied", func(st *v1alpha1.Stack) bool { return len(st.Status.Releases) == 3 })
	code, out, errOut = runConvoy(t, "get", "stacks", "-A", "--kubeconfig", kc)
	if code != 0 || !regexp.MustCompile(ns+`\s+shop\s+True\s+Applied\s+.*\s+manual\s+db:1,api:1,web:1`).MatchString(out) {
		t.Fatalf("get stacks after the apply: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runConvoy(t, "get", "stacks", "-n", ns, "-o", "wide", "--kubeconfig", kc)
	if code != 0 || !regexp.MustCompile(`APPROVED-BY\n`).MatchString(out) || !regexp.MustCompile(`shop\s+True\s+Applied\s+.*\s+oci://\S+@sha256:[0-9a-f]{64}\s+admin\n`).MatchString(out) {
		t.Fatalf("get stacks -o wide: exit %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = runConvoy(t, "approve", "shop", "-n", ns, "--kubeconfig", kc)
	if code != 1 || !strings.Contains(errOut, "is applied already") {
		t.Fatalf("approve again: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runConvoy(t, "approve", "nope", "-n", ns, "--kubeconfig", kc)
	if code != 1 || !strings.Contains(errOut, "convoy.dev/v1alpha1 Stack "+ns+"/nope not found") {
		t.Fatalf("approve a missing Stack: exit %d\n%s", code, errOut)
	}
}

func TestPushRefusesAnAbsoluteChartWithItsPosition(t *testing.T) {
	dir := writeStack(t, "release \"a\" {\n  chart = \"/srv/charts/a\"\n}\n")
	code, _, errOut := runConvoy(t, "push", dir, "oci://127.0.0.1:1/s:v1")
	if code != 1 || !strings.Contains(errOut, "Chart path cannot be pushed") || !strings.Contains(errOut, "stack.hcl line 2") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
}

// runControllerCLI runs `convoy controller` for namespace ns until the
// test ends, and returns what it prints. checkExit: the test fails when
// it exits other than 0.
func runControllerCLI(t *testing.T, kc, ns string, checkExit bool) *syncBuffer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- execute(ctx, []string{"controller", "--kubeconfig", kc, "-n", ns, "--metrics-address", "0", "--health-address", "0", "--cache-dir", t.TempDir()},
			streams{In: strings.NewReader(""), Out: log, Err: log})
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 && checkExit {
			t.Errorf("convoy controller exit %d\n%s", code, log.String())
		}
	})
	return log
}
