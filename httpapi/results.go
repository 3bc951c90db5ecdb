package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/schemas"
)

// doneData is the data of an `event: done`.
type doneData struct {
	TurnDone bool `json:"turn_done"`
	Calls    int  `json:"calls"`
}

// results streams the turn's results in call order, then done. With
// Last-Event-ID: N it resumes after seq N.
func (a *API) results(w http.ResponseWriter, r *request) error {
	turn, err := turnOf(r)
	if err != nil {
		return err
	}
	after := -1
	if s := strings.TrimSpace(r.Header.Get("Last-Event-ID")); s != "" {
		if after, err = intParam("Last-Event-ID", s, -1, a.cfg.Limits.MaxCallsPerTurn); err != nil {
			return err
		}
	}
	ctx, cancel, err := a.streamContext(r)
	if err != nil {
		return err
	}
	defer cancel()
	deliveries := follow(ctx, r.c, turn)
	s, err := startSSE(w, a.cfg.WriteTimeout, a.cfg.Heartbeat)
	if err != nil {
		return nil // the client is gone before the first byte
	}
	defer s.stop()
	for {
		select {
		case d, ok := <-deliveries:
			if !ok {
				return nil
			}
			if d.err != nil {
				// Headers are sent: the stream can only end. The client
				// reconnects with Last-Event-ID and loses nothing.
				a.cfg.Log.Warn("results stream ended by an error", "tenant", r.tenant, "turn", turn, "err", d.err)
				return nil
			}
			if d.Done != nil {
				_ = s.event("done", "", doneData{TurnDone: true, Calls: d.Done.Results})
				return nil
			}
			if d.Result.Seq <= after {
				continue
			}
			if err := s.event("result", strconv.Itoa(d.Result.Seq), schemas.ViewOf(d.Result)); err != nil {
				return nil // a reader gone or too slow: its stream ends
			}
		case <-s.beat.C:
			if err := s.comment("keep-alive"); err != nil {
				return nil
			}
		case <-ctx.Done():
			return nil
		}
	}
}

// streamContext is the context of an event stream: the request's, ended
// early by CloseStreams. Each stream holds at most one turn's results (the
// limits bound those), so their number is bounded too: past MaxStreams a
// new one is refused.
func (a *API) streamContext(r *request) (context.Context, context.CancelFunc, error) {
	if n := a.open.Add(1); n > int64(a.cfg.MaxStreams) {
		a.open.Add(-1)
		return nil, nil, problemf(kindTooMany, "%d event streams are open, the most this server keeps: try again shortly", a.cfg.MaxStreams)
	}
	ctx, cancel := context.WithCancel(r.Context())
	go func() {
		defer a.open.Add(-1)
		select {
		case <-a.streams:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel, nil
}

// delivery is one item of a followed turn: a result, its done, or the
// error that ended the following.
type delivery struct {
	client.Delivery
	err error
}

// follow reads a turn's ordered results on its own goroutine, so that the
// stream can send heartbeats while it waits; the channel closes after done,
// an error, or once ctx ends. It is unbuffered: the reader's pace is the
// pace the results are taken.
func follow(ctx context.Context, c *client.Client, turn string) <-chan delivery {
	ch := make(chan delivery)
	go func() {
		defer close(ch)
		for d, err := range c.Results(ctx, turn) {
			select {
			case ch <- delivery{Delivery: d, err: err}:
			case <-ctx.Done():
				return
			}
			if err != nil || d.Done != nil {
				return
			}
		}
	}()
	return ch
}

// approvals streams the turn's approval requests until the turn is done.
func (a *API) approvals(w http.ResponseWriter, r *request) error {
	turn, err := turnOf(r)
	if err != nil {
		return err
	}
	ctx, cancel, err := a.streamContext(r)
	if err != nil {
		return err
	}
	defer cancel()
	// A turn asks at most once per call, so this never blocks the
	// subscription that fills it.
	requests := make(chan *schemas.ApprovalRequest, a.cfg.Limits.MaxCallsPerTurn)
	stop, err := r.c.Approvals(turn, func(req *schemas.ApprovalRequest) {
		select {
		case requests <- req:
		default:
			a.cfg.Log.Warn("approval request past the calls limit dropped", "tenant", r.tenant, "turn", turn, "seq", req.Seq)
		}
	})
	if err != nil {
		return err
	}
	defer stop()
	done := waitDone(ctx, r.c, turn)
	s, err := startSSE(w, a.cfg.WriteTimeout, a.cfg.Heartbeat)
	if err != nil {
		return nil
	}
	defer s.stop()
	for {
		select {
		case req := <-requests:
			if err := s.event("approval", strconv.Itoa(req.Seq), req); err != nil {
				return nil
			}
		case calls, ok := <-done:
			if ok {
				_ = s.event("done", "", doneData{TurnDone: true, Calls: calls})
			}
			return nil
		case <-s.beat.C:
			if err := s.comment("keep-alive"); err != nil {
				return nil
			}
		case <-ctx.Done():
			return nil
		}
	}
}

// waitDone sends the turn's number of results once it is done, and closes
// without a value when following it fails or ctx ends.
func waitDone(ctx context.Context, c *client.Client, turn string) <-chan int {
	ch := make(chan int, 1)
	go func() {
		defer close(ch)
		for d := range follow(ctx, c, turn) {
			if d.Done != nil {
				ch <- d.Done.Results
			}
		}
	}()
	return ch
}
