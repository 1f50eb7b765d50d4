// Command devcluster runs convoy's local control plane outside of tests, for
// `make devcluster-up`, `make devcluster-down`, `make test` and the demo.
//
//	devcluster up   --state DIR   start in the background; kubeconfig at DIR/kubeconfig
//	devcluster down --state DIR   stop it and everything it started
//	devcluster run  --state DIR   run in the foreground until SIGINT/SIGTERM
//	devcluster pids --state DIR   print "component pid" lines (etcd, kube-apiserver, …),
//	                              for fault injection (hack/faults.sh)
//	devcluster restart --state DIR [--down 10s] COMPONENT
//	                              kill one component (etcd, kube-apiserver,
//	                              controller-manager, scheduler, kwok), keep it
//	                              down for --down, start it again with its data,
//	                              and return once it serves
//
// A component that exits on its own (a crash, a SIGKILL) is started again
// with its flags, ports and data; the others run on throughout.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/convoy-sh/convoy/internal/devcluster"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: devcluster up|down|run|pids|restart --state DIR [--nodes N] [--down D] [COMPONENT]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	state := fs.String("state", ".devcluster", "directory for the kubeconfig, pid file and log")
	nodes := fs.Int("nodes", 3, "number of fake nodes")
	downFor := fs.Duration("down", 0, "restart: how long the component stays down")
	_ = fs.Parse(os.Args[2:])
	dir, err := filepath.Abs(*state)
	if err == nil {
		err = os.MkdirAll(dir, 0o700)
	}
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		switch os.Args[1] {
		case "up":
			err = up(ctx, dir, *nodes)
		case "down":
			err = down(dir)
		case "run":
			err = runForeground(ctx, dir, *nodes)
		case "pids":
			err = printPids(dir)
		case "restart":
			if fs.NArg() != 1 {
				err = fmt.Errorf("restart takes one component (%s)", strings.Join(devcluster.Components, ", "))
				break
			}
			err = restart(ctx, dir, fs.Arg(0), *downFor)
		default:
			err = fmt.Errorf("unknown command %q (want up, down, run, pids or restart)", os.Args[1])
		}
		stop()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "devcluster: %v\n", err)
		os.Exit(1)
	}
}

func paths(dir string) (kubeconfig, pidfile, logfile string) {
	return filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "devcluster.pid"), filepath.Join(dir, "devcluster.log")
}

// componentsFile lists the running cluster's components and their pids
// (each also its process group), one "name pid" line each.
func componentsFile(dir string) string { return filepath.Join(dir, "components") }

// printPids prints the components of the devcluster running in dir.
func printPids(dir string) error {
	_, pidfile, _ := paths(dir)
	if _, ok := runningPid(pidfile); !ok {
		return fmt.Errorf("no devcluster is running with state %s", dir)
	}
	b, err := os.ReadFile(componentsFile(dir))
	if err != nil {
		return fmt.Errorf("the devcluster is starting, or predates `pids`: %w", err)
	}
	_, err = os.Stdout.Write(b)
	return err
}

// runForeground starts the cluster, records its pid, and keeps it until ctx
// ends (SIGTERM from `down`).
func runForeground(ctx context.Context, dir string, nodes int) error {
	kubeconfig, pidfile, _ := paths(dir)
	tools, err := devcluster.LocateTools(os.Getenv)
	if err != nil {
		return err
	}
	if err := os.WriteFile(pidfile, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return err
	}
	defer os.Remove(pidfile)
	start := time.Now()
	c, err := devcluster.Start(ctx, devcluster.Options{
		Tools: tools, Nodes: nodes, KubeconfigPath: kubeconfig, VolumeDir: filepath.Join(dir, "volumes"),
		Restart: devcluster.RestartOnExit,
		Logf:    logf,
	})
	if err != nil {
		return err
	}
	defer c.Stop()
	comps := &components{dir: dir, c: c}
	if err := comps.write(); err != nil {
		return err
	}
	defer os.Remove(componentsFile(dir))
	ctl, err := serveControl(ctx, dir, c, comps)
	if err != nil {
		return err
	}
	defer ctl.Close()
	fmt.Printf("devcluster ready in %s: %d nodes, kubeconfig %s\n", time.Since(start).Round(time.Millisecond), nodes, kubeconfig)
	// A component that exits is started again by the cluster; this loop
	// keeps the components file current and tells of one that keeps
	// exiting, which stays down (the others run on) until `restart`.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var reported string
	for {
		select {
		case <-ctx.Done():
			fmt.Println("devcluster stopping")
			return nil
		case <-tick.C:
			if err := comps.write(); err != nil {
				logf("components file: %v", err)
			}
			msg := ""
			if err := c.Err(); err != nil {
				msg = err.Error()
			}
			if msg != reported && msg != "" {
				logf("%s", msg)
			}
			reported = msg
		}
	}
}

func logf(format string, args ...any) {
	fmt.Printf(time.Now().Format(time.TimeOnly)+" "+format+"\n", args...)
}

// components writes the components file whenever its pids change.
type components struct {
	dir  string
	c    *devcluster.Cluster
	mu   sync.Mutex
	last string
}

func (w *components) write() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	lines := w.c.ComponentLines()
	if lines == w.last {
		return nil
	}
	// Readers (pids, hack/faults.sh) never see half a file.
	tmp := componentsFile(w.dir) + ".new"
	if err := os.WriteFile(tmp, []byte(lines), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, componentsFile(w.dir)); err != nil {
		return err
	}
	w.last = lines
	return nil
}

// up runs `devcluster run` detached (its own session, output to the log) and
// returns once the kubeconfig is written, or with the log if it failed.
func up(ctx context.Context, dir string, nodes int) error {
	kubeconfig, pidfile, logfile := paths(dir)
	if pid, ok := runningPid(pidfile); ok {
		if _, err := os.Stat(kubeconfig); err == nil {
			fmt.Printf("devcluster already running (pid %d), kubeconfig %s\n", pid, kubeconfig)
			return nil
		}
		return fmt.Errorf("devcluster pid %d is starting or stuck; run `devcluster down --state %s`", pid, dir)
	}
	_ = os.Remove(kubeconfig)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	logf, err := os.Create(logfile)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(self, "run", "--state", dir, "--nodes", strconv.Itoa(nodes))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for {
		if _, err := os.Stat(kubeconfig); err == nil {
			out, _ := os.ReadFile(logfile)
			if strings.Contains(string(out), "devcluster ready") {
				fmt.Print(string(out))
				return nil
			}
		}
		select {
		case err := <-exited:
			out, _ := os.ReadFile(logfile)
			return fmt.Errorf("devcluster exited (%v):\n%s", err, out)
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// down stops the devcluster recorded in dir and waits until it is gone.
func down(dir string) error {
	_, pidfile, _ := paths(dir)
	pid, ok := runningPid(pidfile)
	if !ok {
		fmt.Println("devcluster not running")
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return err
	}
	deadline := time.Now().Add(45 * time.Second)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil {
			fmt.Println("devcluster stopped")
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("devcluster did not stop within 45s")
}

// runningPid reads the pid file and reports whether that process is alive
// and is a devcluster (not a recycled pid).
func runningPid(pidfile string) (int, bool) {
	b, err := os.ReadFile(pidfile)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), "devcluster") {
		return 0, false
	}
	return pid, true
}
