package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/convoy-sh/convoy/internal/devcluster"
)

// The running devcluster (`run`) owns its components: only it can start
// one again as its child, with the parent-death signal that ties the
// components to it. `restart` therefore asks it, over a Unix socket in
// the state directory that only its user may use.
func controlSocket(dir string) string { return filepath.Join(dir, "control.sock") }

type restartRequest struct {
	Component string        `json:"component"`
	Down      time.Duration `json:"down"`
}

type restartReply struct {
	Pid   int    `json:"pid,omitempty"`
	Error string `json:"error,omitempty"`
}

// serveControl answers restart requests until ctx ends or the listener
// is closed.
func serveControl(ctx context.Context, dir string, c *devcluster.Cluster, comps *components) (net.Listener, error) {
	path := controlSocket(dir)
	_ = os.Remove(path) // left by a devcluster that was killed
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go handleControl(ctx, conn, c, comps)
		}
	}()
	return l, nil
}

func handleControl(ctx context.Context, conn net.Conn, c *devcluster.Cluster, comps *components) {
	defer conn.Close()
	var req restartRequest
	var reply restartReply
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, &req)
	}
	if err == nil {
		logf("restart %s (down %s) asked", req.Component, req.Down)
		start := time.Now()
		err = c.Restart(ctx, req.Component, req.Down)
		if err == nil {
			if werr := comps.write(); werr != nil {
				logf("components file: %v", werr)
			}
			for name, pid := range c.Pids() {
				if name == req.Component || name == "kube-"+req.Component {
					reply.Pid = pid
				}
			}
			logf("restart %s: serving again (pid %d) %s after the kill", req.Component, reply.Pid, time.Since(start).Round(time.Millisecond))
		}
	}
	if err != nil {
		reply.Error = err.Error()
		logf("restart %s: %v", req.Component, err)
	}
	b, _ := json.Marshal(reply)
	_, _ = conn.Write(append(b, '\n'))
}

// restart asks the devcluster running in dir to restart component.
func restart(ctx context.Context, dir, component string, down time.Duration) error {
	_, pidfile, _ := paths(dir)
	if _, ok := runningPid(pidfile); !ok {
		return fmt.Errorf("no devcluster is running with state %s", dir)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", controlSocket(dir))
	if err != nil {
		return fmt.Errorf("the devcluster is starting, or predates `restart`: %w", err)
	}
	defer conn.Close()
	go func() {
		<-ctx.Done()
		conn.Close()
	}()
	b, _ := json.Marshal(restartRequest{Component: component, Down: down})
	if _, err := conn.Write(append(b, '\n')); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("restart %s: no answer from the devcluster: %w", component, err)
	}
	var reply restartReply
	if err := json.Unmarshal(line, &reply); err != nil {
		return err
	}
	if reply.Error != "" {
		return errors.New(reply.Error)
	}
	fmt.Printf("%s restarted (pid %d)\n", component, reply.Pid)
	return nil
}
