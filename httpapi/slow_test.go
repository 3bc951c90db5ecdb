package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/httpapi"
)

// smallBuffers shrinks the kernel's send buffer of each accepted
// connection, so that a reader that stops reading blocks the server's
// writes at once instead of after megabytes.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// TestSlowReaderIsDropped: a reader that takes nothing for the write
// timeout loses its stream; the server does not hold the turn's results
// for it. It can come back with Last-Event-ID and read them all.
func TestSlowReaderIsDropped(t *testing.T) {
	e := newEnv(t, options{
		api:      func(c *httpapi.Config) { c.WriteTimeout = 300 * time.Millisecond },
		listener: func(l net.Listener) net.Listener { return smallBuffers{l} },
	})
	ctx := testCtx(t)
	const turn = "turn_slow"
	var inputs []string
	for i := range 40 {
		inputs = append(inputs, fmt.Sprintf(`{"i":%d,"pad":"%s"}`, i, strings.Repeat("y", 20_000)))
	}
	e.status(e.req(ctx, "POST", "/v1/turns/"+turn+"/calls", "", callsBody(0, true, inputs...)), http.StatusAccepted)
	// A client whose socket takes little, and that does not read.
	d := &net.Dialer{}
	tr := &http.Transport{DialContext: func(ctx2 context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx2, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(4096)
		}
		return c, err
	}}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/v1/turns/"+turn+"/results", nil)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	time.Sleep(2 * time.Second) // many write timeouts
	b, _ := io.ReadAll(resp.Body)
	if strings.Contains(string(b), "event: done") || len(b) >= 40*20_000 {
		t.Fatalf("a reader that did not read still got the whole stream (%d bytes)", len(b))
	}
	got := strings.Count(string(b), "event: result")
	// Coming back where it stopped, it gets the rest.
	last := strings.LastIndex(string(b[:max(0, strings.LastIndex(string(b), "\n\n"))]), "id: ")
	after := "-1"
	if last >= 0 {
		after = strings.Fields(string(b[last+4:]))[0]
	}
	evs := e.readSSE(e.req(ctx, "GET", "/v1/turns/"+turn+"/results", "", nil, "Last-Event-ID", after)).all(ctx)
	if evs[len(evs)-1].Name != "done" || len(evs)-1 < 40-got {
		t.Errorf("after %s: %d events, %d results were read before", after, len(evs), got)
	}
}
