package health_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/internal/health"
)

// connected is a pipeline whose connections are up.
type connected struct{}

func (connected) Stats() nats.Statistics { return nats.Statistics{} }
func (connected) Connected() bool        { return true }
func (connected) LateCalls() int64       { return 0 }

// TestReadyWhenAddsChecks: every check added keeps its part in /readyz,
// which names each that fails.
func TestReadyWhenAddsChecks(t *testing.T) {
	s, err := health.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	readyz := func() (int, string) {
		resp, err := http.Get("http://" + s.Addr() + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := readyz(); code != http.StatusServiceUnavailable {
		t.Errorf("before Ready: %d", code)
	}
	s.Ready(connected{})
	var streamsDown, serverDown atomic.Bool
	streamsDown.Store(true)
	serverDown.Store(true)
	check := func(down *atomic.Bool, why string) health.Check {
		return func(context.Context) error {
			if down.Load() {
				return errors.New(why)
			}
			return nil
		}
	}
	s.ReadyWhen(check(&streamsDown, "stream TW_IN missing"))
	s.ReadyWhen(check(&serverDown, "MCP server x is not running"))
	if code, body := readyz(); code != http.StatusServiceUnavailable || !strings.Contains(body, "TW_IN") || !strings.Contains(body, "MCP server x") {
		t.Errorf("both failing: %d %q", code, body)
	}
	streamsDown.Store(false)
	if code, body := readyz(); code != http.StatusServiceUnavailable || strings.Contains(body, "TW_IN") || !strings.Contains(body, "MCP server x") {
		t.Errorf("the second failing: %d %q", code, body)
	}
	serverDown.Store(false)
	if code, body := readyz(); code != http.StatusOK {
		t.Errorf("none failing: %d %q", code, body)
	}
}
