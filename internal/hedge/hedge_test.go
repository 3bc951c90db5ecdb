package hedge

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/internal/apimember"
)

// TestFirstAnswerWins: a run left unanswered is run again, the copy's
// answer is returned, and the silent run's context is cancelled.
func TestFirstAnswerWins(t *testing.T) {
	var runs atomic.Int32
	silentEnded := make(chan struct{})
	v, err := Do(context.Background(), func(ctx context.Context) (int, error) {
		if runs.Add(1) == 1 {
			<-ctx.Done()
			close(silentEnded)
			return 0, ctx.Err()
		}
		return 42, nil
	})
	if err != nil || v != 42 {
		t.Fatalf("Do = %d, %v; want the copy's 42", v, err)
	}
	select {
	case <-silentEnded:
	case <-time.After(5 * time.Second):
		t.Fatal("the silent run's context was not cancelled")
	}
}

// TestAnsweredRunsOnce: a run that answers at once is the only one, and
// its error is the answer.
func TestAnsweredRunsOnce(t *testing.T) {
	var runs atomic.Int32
	refused := errors.New("refused")
	_, err := Do(context.Background(), func(context.Context) (int, error) {
		runs.Add(1)
		return 0, refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("err = %v, want the run's own", err)
	}
	time.Sleep(2 * Every)
	if n := runs.Load(); n != 1 {
		t.Fatalf("%d runs, want 1", n)
	}
}

// TestRunsBounded: never answered, a request is run at most Runs times
// and ends with its context.
func TestRunsBounded(t *testing.T) {
	var runs atomic.Int32
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(Runs+2)*Every)
	defer cancel()
	_, err := Do(ctx, func(ctx context.Context) (int, error) {
		runs.Add(1)
		<-ctx.Done()
		return 0, ctx.Err()
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
	if n := runs.Load(); n != Runs {
		t.Fatalf("%d runs, want %d", n, Runs)
	}
}

// TestPanicAnswers: a run that panics answers with an error instead of
// ending the process, which the caller's recover could not prevent.
func TestPanicAnswers(t *testing.T) {
	_, err := Do(context.Background(), func(context.Context) (int, error) {
		panic("boom")
	})
	if err == nil {
		t.Fatal("a panicking run answered without an error")
	}
}

// TestReadsSendAgain: a stream wrapped by Reads sends its message reads
// again while the first is unanswered, on a real server whose stream
// members the test plays: silent to the first get, then answering.
func TestReadsSendAgain(t *testing.T) {
	var gets atomic.Int32
	js := apimember.Start(t, map[string]nats.MsgHandler{
		"$JS.API.STREAM.INFO.S": func(m *nats.Msg) {
			_ = m.Respond([]byte(`{"type":"io.nats.jetstream.api.v1.stream_info_response","config":{"name":"S","subjects":["s.>"]},"state":{}}`))
		},
		"$JS.API.STREAM.MSG.GET.S": func(m *nats.Msg) {
			if gets.Add(1) > 1 {
				_ = m.Respond([]byte(`{"type":"io.nats.jetstream.api.v1.stream_msg_get_response","message":{"subject":"s.1","seq":7,"data":"eA=="}}`))
			}
		},
	})
	s, err := js.Stream(context.Background(), "S")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(Runs)*Every)
	defer cancel()
	m, err := Reads(s).GetLastMsgForSubject(ctx, "s.1")
	if err != nil {
		t.Fatalf("read with its first get unanswered: %v", err)
	}
	if m.Sequence != 7 || gets.Load() < 2 {
		t.Fatalf("seq %d after %d gets, want 7 after 2", m.Sequence, gets.Load())
	}
	if _, err := Reads(s).GetMsg(ctx, 7); err != nil {
		t.Fatalf("GetMsg: %v", err)
	}
}
