package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// sse writes one server-sent event stream. Every write has its own
// deadline: a reader that takes nothing for the write timeout loses its
// stream rather than making the server hold what it has not read.
type sse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	buf     bytes.Buffer
	// beat fires when the stream has been idle for the heartbeat interval;
	// every write puts it off.
	beat  *time.Timer
	every time.Duration
}

// startSSE sends the stream's headers; heartbeat is the idle time after
// which a comment is due (beat).
func startSSE(w http.ResponseWriter, timeout, heartbeat time.Duration) (*sse, error) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	// nginx and similar proxies buffer responses unless told not to.
	h.Set("X-Accel-Buffering", "no")
	s := &sse{w: w, rc: http.NewResponseController(w), timeout: timeout, beat: time.NewTimer(heartbeat), every: heartbeat}
	w.WriteHeader(http.StatusOK)
	return s, s.flush()
}

// stop releases the heartbeat timer.
func (s *sse) stop() { s.beat.Stop() }

// event sends one event; id is left out when empty. data is one line of
// JSON (encoding/json escapes every newline inside strings).
func (s *sse) event(name, id string, data any) error {
	s.buf.Reset()
	if id != "" {
		fmt.Fprintf(&s.buf, "id: %s\n", id)
	}
	fmt.Fprintf(&s.buf, "event: %s\ndata: ", name)
	enc := json.NewEncoder(&s.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(data); err != nil { // Encode ends the line
		return err
	}
	s.buf.WriteByte('\n')
	return s.write(s.buf.Bytes())
}

// comment sends a comment line, which readers ignore: a heartbeat.
func (s *sse) comment(text string) error { return s.write([]byte(": " + text + "\n\n")) }

func (s *sse) write(b []byte) error {
	// Not every ResponseWriter has deadlines (a test recorder); the
	// stream then goes without.
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	s.beat.Reset(s.every)
	return s.flush()
}

func (s *sse) flush() error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	return s.rc.Flush()
}
