package proxy

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestTapBufferPassesBytesInOrder(t *testing.T) {
	b := newTapBuffer(8)
	var got bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(&got, b)
		done <- err
	}()
	want := "hello, tapped world"
	for i := 0; i < len(want); i += 3 {
		chunk := []byte(want[i:min(i+3, len(want))])
		// Wait until the reader has caught up, so the 8-byte limit holds.
		for {
			if kept, _ := b.Write(chunk); kept {
				break
			}
			if b.Overflowed() {
				t.Fatal("overflowed while the reader keeps up")
			}
		}
		time.Sleep(time.Millisecond)
	}
	b.CloseWithError(io.EOF)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got.String() != want {
		t.Fatalf("got %q, want %q", got.String(), want)
	}
}

func TestTapBufferOverflowCutsReaderAtOnce(t *testing.T) {
	b := newTapBuffer(10)
	if kept, _ := b.Write([]byte("0123456")); !kept {
		t.Fatal("first write not kept")
	}
	kept, first := b.Write([]byte("789abc"))
	if kept || !first {
		t.Fatalf("overflowing write: kept %v first %v", kept, first)
	}
	if kept, first := b.Write([]byte("x")); kept || first {
		t.Fatalf("write after overflow: kept %v first %v", kept, first)
	}
	if !b.Overflowed() {
		t.Fatal("not marked overflowed")
	}
	n, err := b.Read(make([]byte, 32))
	if n != 0 || !errors.Is(err, errOverflow) {
		t.Fatalf("read after overflow: %d, %v (buffered bytes must be dropped)", n, err)
	}
	b.CloseWithError(io.EOF) // a later close does not replace the overflow
	if _, err := b.Read(make([]byte, 1)); !errors.Is(err, errOverflow) {
		t.Fatalf("read after close: %v", err)
	}
}

func TestTapBufferReadDrainsThenError(t *testing.T) {
	b := newTapBuffer(100)
	b.Write([]byte("abc"))
	cut := errors.New("cut")
	b.CloseWithError(cut)
	got, err := io.ReadAll(b)
	if string(got) != "abc" || !errors.Is(err, cut) {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestTapBufferCloseReadDropsWrites(t *testing.T) {
	b := newTapBuffer(4)
	b.CloseRead()
	for range 3 {
		if kept, first := b.Write([]byte("too long for the buffer")); kept || first {
			t.Fatalf("write after CloseRead: kept %v first %v", kept, first)
		}
	}
	if b.Overflowed() {
		t.Fatal("a closed reader is not an overflow")
	}
}

func TestTapBufferReadWaitsForData(t *testing.T) {
	b := newTapBuffer(100)
	got := make(chan string, 1)
	go func() {
		p := make([]byte, 10)
		n, _ := b.Read(p)
		got <- string(p[:n])
	}()
	select {
	case s := <-got:
		t.Fatalf("read %q before any write", s)
	case <-time.After(20 * time.Millisecond):
	}
	b.Write([]byte("x"))
	if s := <-got; s != "x" {
		t.Fatalf("got %q", s)
	}
}

// TestTapBodyIsTransparent checks that the caller reads exactly what the
// upstream body gives, and that the parser's side ends as the body does.
func TestTapBodyIsTransparent(t *testing.T) {
	src := strings.Repeat("event: x\ndata: {}\n\n", 100)
	b := newTapBuffer(1 << 20)
	body := &tapBody{ReadCloser: io.NopCloser(strings.NewReader(src)), buf: b}
	got, err := io.ReadAll(body)
	if err != nil || string(got) != src {
		t.Fatalf("caller got %d bytes, %v", len(got), err)
	}
	body.Close()
	tapped, err := io.ReadAll(b)
	if err != nil || string(tapped) != src {
		t.Fatalf("parser got %d bytes, %v", len(tapped), err)
	}

	// Closed before EOF: the parser's stream is cut as a stream failure.
	b = newTapBuffer(1 << 20)
	body = &tapBody{ReadCloser: io.NopCloser(strings.NewReader(src)), buf: b}
	if _, err := body.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	body.Close()
	tapped, err = io.ReadAll(b)
	if len(tapped) != 10 || !errors.Is(err, errStream) {
		t.Fatalf("parser got %d bytes, %v; want 10, a stream error", len(tapped), err)
	}
}

func TestTapped(t *testing.T) {
	resp := func(status int, ct string, length int64, method string) *http.Response {
		return &http.Response{
			StatusCode: status, ContentLength: length,
			Header:  http.Header{"Content-Type": {ct}},
			Request: &http.Request{Method: method},
		}
	}
	for _, c := range []struct {
		name, format string
		resp         *http.Response
		want         bool
	}{
		{"sse", "anthropic", resp(200, "text/event-stream; charset=utf-8", -1, "POST"), true},
		{"sse with length", "gemini", resp(200, "text/event-stream", 100, "POST"), true},
		{"sse error status", "anthropic", resp(500, "text/event-stream", -1, "POST"), false},
		{"sse 429", "anthropic", resp(429, "text/event-stream", -1, "POST"), false},
		{"json", "anthropic", resp(200, "application/json", -1, "POST"), false},
		{"no content type", "anthropic", resp(200, "", -1, "POST"), false},
		{"head", "anthropic", resp(200, "text/event-stream", -1, "HEAD"), false},
		{"204", "anthropic", resp(204, "text/event-stream", -1, "POST"), false},
		{"sse for unknown future format", "openai-chat", resp(200, "text/event-stream", -1, "POST"), true},
		{"hermes streamed text", "hermes", resp(200, "text/plain; charset=utf-8", -1, "POST"), true},
		{"hermes text with length", "hermes", resp(200, "text/plain", 250, "POST"), false},
		{"hermes sse", "hermes", resp(200, "text/event-stream", -1, "POST"), false},
		{"hermes json", "hermes", resp(200, "application/json", -1, "POST"), false},
		{"hermes error", "hermes", resp(503, "text/plain", -1, "POST"), false},
	} {
		if got := Tapped(c.format, c.resp); got != c.want {
			t.Errorf("%s: Tapped = %v, want %v", c.name, got, c.want)
		}
	}
}
