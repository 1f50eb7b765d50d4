package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: the view writes to the terminal
// side, the test reads what a terminal would show from the controller.
func openPTY(t *testing.T) (ctrl, term *os.File) {
	t.Helper()
	ctrl, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(ctrl.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ctrl.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	term, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { term.Close(); ctrl.Close() })
	return ctrl, term
}

// syncBuf collects what the terminal shows.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// On a terminal, the live view names what a waiting release is blocked on,
// with the reason, long before the release's timeout.
func TestLiveViewNamesTheBlockerWithin10s(t *testing.T) {
	ns := cluster.Namespace(t)
	t.Setenv("TERM", "xterm")
	dir := writeStack(t, fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "web" {
  chart   = %[1]q
  values  = [{ neverReady = true }]
  wait    = true
  timeout = "60s"
}
`, appChart(t), ns))
	ctrl, term := openPTY(t)
	var shown syncBuf
	go func() { _, _ = io.Copy(&shown, ctrl) }()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	var out bytes.Buffer
	start := time.Now()
	go func() {
		done <- execute(ctx, []string{"apply", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--auto-approve"},
			streams{In: strings.NewReader(""), Out: &out, Err: term})
	}()
	want := "Deployment " + ns + "/web: 0/1 replicas available"
	for !strings.Contains(shown.String(), "(ContainersNotReady)") || !strings.Contains(shown.String(), want) {
		if time.Since(start) > 10*time.Second {
			cancel()
			<-done
			t.Fatalf("after 10s the live view does not name the blocker %q:\n%q", want, shown.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("blocker named after %s", time.Since(start).Round(100*time.Millisecond))
	cancel()
	<-done
}
