package devcluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// process is one component of a cluster, running in its own process group.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	started time.Time
	exited  chan struct{} // closed when the process has been reaped
	waitErr error
	// expected is set before the cluster ends the process itself (Stop,
	// Restart): its exit is no crash.
	expected atomic.Bool
}

// Pid is the process id; it is also the id of the process's group.
func (p *process) Pid() int { return p.cmd.Process.Pid }

func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop ends the process group: SIGTERM, then SIGKILL after grace. Signalling
// the group (not a name, not a guess) reaches exactly what this process and
// its children are.
func (p *process) stop(grace time.Duration) {
	p.expected.Store(true)
	pgid := p.Pid()
	if p.running() {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(grace):
		}
	}
	// The leader may have exited while others in its group live on.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.exited
}

// logTail returns the last lines the process wrote, for error messages.
func (p *process) logTail(n int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// launcher starts child processes from one OS thread that lives exactly as
// long as the cluster. Linux sends the parent-death signal when the thread
// that forked a child exits, not the process: forking from arbitrary
// goroutines could kill a component whenever the runtime retired a thread.
// With one locked thread the children die if and only if the test process
// (or Stop) ends them.
type launcher struct {
	reqs chan func()
	quit chan struct{}
}

func newLauncher() *launcher {
	l := &launcher{reqs: make(chan func()), quit: make(chan struct{})}
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		for {
			select {
			case f := <-l.reqs:
				f()
			case <-l.quit:
				return
			}
		}
	}()
	return l
}

// close ends the launcher's thread. Call it only after every child is gone.
func (l *launcher) close() { close(l.quit) }

// start runs name with args in its own process group, output to logPath.
func (l *launcher) start(name, bin string, args []string, logPath string) (*process, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	errc := make(chan error, 1)
	l.reqs <- func() { errc <- cmd.Start() }
	if err := <-errc; err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, started: time.Now(), exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	return p, nil
}

// exitState is how the process ended ("signal: killed", "exit status 1").
func (p *process) exitState() string {
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return ee.ProcessState.String()
	}
	if p.waitErr != nil {
		return p.waitErr.Error()
	}
	return "exit status 0"
}

// exitError describes how a component that should be running ended.
func (p *process) exitError() error {
	var msg bytes.Buffer
	fmt.Fprintf(&msg, "%s exited", p.name)
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		fmt.Fprintf(&msg, " (%v)", ee.ProcessState)
	}
	if tail := p.logTail(15); tail != "" {
		fmt.Fprintf(&msg, "; last output:\n%s", tail)
	}
	return errors.New(msg.String())
}
