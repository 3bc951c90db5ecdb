package leaderget_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/internal/apimember"
	"github.com/toolwire/toolwire/internal/hedge"
	"github.com/toolwire/toolwire/internal/leaderget"
	"github.com/toolwire/toolwire/subjects"
)

// leaderAfter answers stream S's message gets on a real server as the
// stream's members do in a failover: silent while they have not noticed
// their leader's death (the first silent requests), then with message 7.
// It returns how many requests came.
func leaderAfter(t *testing.T, silent int64) (*leaderget.Stream, *atomic.Int64) {
	t.Helper()
	sp := subjects.Default()
	var n atomic.Int64
	js := apimember.Start(t, map[string]nats.MsgHandler{sp.MsgGet("S"): func(m *nats.Msg) {
		if n.Add(1) > silent {
			_ = m.Respond([]byte(`{"message":{"subject":"s.1","seq":7,"data":"eA=="}}`))
		}
	}})
	return leaderget.New(js, sp, "S"), &n
}

// TestReadSentAgainWhileUnanswered: a read the members do not answer is
// sent again within its bound, and the copy's answer is the read's. Sent
// once, it would fail with the bound's timeout and hold its caller up
// after the stream is back.
func TestReadSentAgainWhileUnanswered(t *testing.T) {
	s, n := leaderAfter(t, 1)
	m, err := s.GetLastMsgForSubject(context.Background(), "s.1")
	if err != nil {
		t.Fatalf("read with its first request unanswered: %v", err)
	}
	if m.Sequence != 7 || string(m.Data) != "x" {
		t.Fatalf("read seq %d %q, want 7 \"x\"", m.Sequence, m.Data)
	}
	if got := n.Load(); got < 2 {
		t.Fatalf("%d requests, want the copy too", got)
	}
}

// TestReadAnsweredSentOnce: a read answered at once is sent once.
func TestReadAnsweredSentOnce(t *testing.T) {
	s, n := leaderAfter(t, 0)
	if _, err := s.GetLastMsgForSubject(context.Background(), "s.1"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * hedge.Every)
	if got := n.Load(); got != 1 {
		t.Fatalf("%d requests for a read answered at once, want 1", got)
	}
}
