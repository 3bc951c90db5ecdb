package mcp

import (
	"errors"
	"net"
	"net/http"
	"sync"
	"syscall"
)

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	headers map[string]string
	next    http.RoundTripper
}

func (h headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	return h.next.RoundTrip(req)
}

// lostTransport reports the first request of a session that finds its
// server unreachable. The SDK keeps such news to itself: it retries a
// broken event stream with back-off for about 18 s before the session
// fails, and a call meanwhile just gets an error.
type lostTransport struct {
	next http.RoundTripper
	lost *lost
}

func (l lostTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if err != nil && unreachable(err) {
		l.lost.report(err)
	}
	return resp, err
}

// lost is closed when a session's server is found unreachable.
type lost struct {
	once sync.Once
	done chan struct{}
	err  error // why; set before done is closed
}

func newLost() *lost { return &lost{done: make(chan struct{})} }

func (l *lost) report(err error) {
	l.once.Do(func() {
		l.err = netError(err)
		close(l.done)
	})
}

// unreachable reports whether err says that nothing takes connections at
// the server's address: the connection was refused, or there is no route
// to the host or its network. Each is known at once, unlike a timeout.
func unreachable(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH)
}

// netError is the network operation that failed in err ("dial tcp
// 127.0.0.1:8080: connect: connection refused"), without the layers of
// the SDK and net/http around it; err itself if there is none.
func netError(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return op
	}
	return err
}
