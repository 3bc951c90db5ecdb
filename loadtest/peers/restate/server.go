package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Server is a restate-server process started by this program, all roles on
// one node, on loopback ports of its own and a data directory that Stop
// removes.
type Server struct {
	// Ingress is the base URL of the HTTP ingress ("http://127.0.0.1:N").
	Ingress string
	// Admin is the base URL of the admin API.
	Admin string

	cmd  *exec.Cmd
	dir  string
	log  *os.File
	done chan struct{} // closed when the process has exited
}

// serverConfig is the node's configuration: every listener on loopback
// ports picked free, TCP only (no unix sockets in the data directory),
// telemetry off, and only warnings in the log, which is not read on the
// hot path anyway.
const serverConfig = `base-dir = %q
bind-address = "127.0.0.1:%d"
advertised-address = "http://127.0.0.1:%d/"
disable-telemetry = true
log-filter = "warn"
log-disable-ansi-codes = true
shutdown-timeout = "10s"

[admin]
bind-address = "127.0.0.1:%d"

[ingress]
bind-address = "127.0.0.1:%d"
`

// StartServer starts bin with a fresh data directory and returns once its
// admin API and ingress answer their health checks.
func StartServer(ctx context.Context, bin string) (*Server, error) {
	dir, err := os.MkdirTemp("", "restate-peer-")
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	fabric, admin, ingress := ports[0], ports[1], ports[2]
	cfg := filepath.Join(dir, "restate.toml")
	body := fmt.Sprintf(serverConfig, filepath.Join(dir, "data"), fabric, fabric, admin, ingress)
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "restate.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// Not CommandContext: Stop ends the server, gracefully, whatever ctx.
	cmd := exec.Command(bin, "--config-file", cfg, "--no-logo", "--listen-mode", "tcp")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Server{
		Ingress: fmt.Sprintf("http://127.0.0.1:%d", ingress),
		Admin:   fmt.Sprintf("http://127.0.0.1:%d", admin),
		cmd:     cmd, dir: dir, log: logf, done: make(chan struct{}),
	}
	go func() { _ = cmd.Wait(); close(s.done) }()
	if err := s.waitHealthy(ctx, time.Minute); err != nil {
		tail := s.LogTail(30)
		s.Stop()
		return nil, fmt.Errorf("%w\nrestate-server's log ends:\n%s", err, tail)
	}
	return s, nil
}

// freePorts reserves n loopback ports at once, so that they differ, and
// frees them for the server to bind.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitHealthy polls the admin API's and the ingress's health endpoints.
func (s *Server) waitHealthy(ctx context.Context, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for _, u := range []string{s.Admin + "/health", s.Ingress + "/restate/health"} {
		for !ok(ctx, u) {
			select {
			case <-s.done:
				return errors.New("restate-server exited while starting")
			case <-ctx.Done():
				return fmt.Errorf("restate-server not healthy (%s) after %s: %w", u, limit, ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

func ok(ctx context.Context, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Register registers the service deployment served at uri (POST
// /deployments): the server discovers its services and handlers there.
func (s *Server) Register(ctx context.Context, uri string) error {
	b, _ := json.Marshal(map[string]any{"uri": uri, "force": true})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Admin+"/deployments", bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("registering %s: %s: %s", uri, resp.Status, out)
	}
	return nil
}

// PID is the server process's id (its RSS is read from /proc).
func (s *Server) PID() int { return s.cmd.Process.Pid }

// LogTail is the last n lines of the server's log, for an error message.
func (s *Server) LogTail(n int) string {
	b, _ := os.ReadFile(s.log.Name())
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// Stop ends the server (SIGTERM, then SIGKILL after 20 s) and removes its
// data directory.
func (s *Server) Stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.log.Close()
	os.RemoveAll(s.dir)
}
