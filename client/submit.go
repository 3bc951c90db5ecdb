package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// TurnOptions tune one turn; the zero value keeps the pipeline's defaults.
type TurnOptions struct {
	// MaxConcurrency overrides the router's per-turn limit (0: keep it).
	MaxConcurrency int
}

// Call is a call submitted without a stream.
type Call struct {
	// ID is the model's tool_use id, which the result carries back; when
	// empty, the client makes one from the turn and the call's position.
	ID string
	// Name is the tool the model chose.
	Name string
	// Input is the arguments object (empty: no arguments, {}).
	Input json.RawMessage
	// Incomplete, when set, says why the call's block never completed (a
	// cut stream); Input is then the argument text as far as it came. The
	// pipeline answers such a call and never runs it.
	Incomplete string
}

// use is the call at position seq as an adapter reports it.
func (call Call) use(seq int) modelstream.Call {
	if call.Incomplete != "" {
		return modelstream.Call{Seq: seq, ID: call.ID, Name: call.Name, RawInput: string(call.Input), Err: call.Incomplete}
	}
	input := call.Input
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	return modelstream.Call{Seq: seq, ID: call.ID, Name: call.Name, Input: input, Complete: true}
}

// StreamSummary says what a submitted stream held.
type StreamSummary struct {
	// Calls is how many calls the turn's end counts, and StopReason the
	// model's stop reason, as the stream ended.
	Calls      int
	StopReason string
	// Err is the stream's own failure (an error event, a cut-off), if any.
	Err string
	// Uses are the calls as parsed, by seq.
	Uses []modelstream.Call
	// StartedAt is when reading began, EndedAt when the stream's end was
	// read (zero if it never came).
	StartedAt time.Time
	EndedAt   time.Time
	// Ended is set once the turn's end is stored: the pipeline will answer
	// every call the turn counts, whatever else failed.
	Ended bool
}

// SubmitStream reads a model's response stream with parser and publishes
// each call the moment it is complete, then the turn's end. It returns when
// the stream has ended; the results come through Results.
//
// A call the server refuses for its size (a *CallTooLargeError in the
// error) does not stop the stream: it is answered in its place (see
// CallTooLargeError), the calls after it are sent, the turn ends, and the
// refusal is returned with whatever else failed.
func (c *Client) SubmitStream(ctx context.Context, turn string, parser modelstream.Parser, r io.Reader, opts TurnOptions) (StreamSummary, error) {
	if err := checkTurn("submit stream", turn); err != nil {
		return StreamSummary{}, err
	}
	sum := StreamSummary{StartedAt: time.Now().UTC()}
	var refused []error
	h := modelstream.HandlerFuncs{
		OnCall: func(ctx context.Context, call modelstream.Call) error {
			sum.Uses = append(sum.Uses, call)
			tooLarge, err := c.publishUse(ctx, nil, turn, call, opts, 0)
			if tooLarge != nil {
				refused = append(refused, tooLarge)
			}
			return err
		},
		OnEnd: func(ctx context.Context, e modelstream.End) error {
			sum.Calls, sum.StopReason, sum.Err = e.Calls, e.StopReason, e.Err
			sum.EndedAt = time.Now().UTC()
			if err := c.publishEnd(ctx, nil, turn, &schemas.TurnEnd{Calls: e.Calls, StopReason: e.StopReason, Error: e.Err}); err != nil {
				return err
			}
			sum.Ended = true
			return nil
		},
	}
	if err := parser.Parse(ctx, r, h); err != nil {
		return sum, errors.Join(append(refused, fmt.Errorf("client: turn %s: %w", turn, err))...)
	}
	return sum, errors.Join(refused...)
}

// SubmitCalls publishes calls as one complete turn. Each call carries the
// turn's count (schemas.ToolUse.Calls), so no turn_end is sent: the
// pipeline closes the turn on its calls, which spares it the end's
// handling. A turn of no calls is ended with a turn_end. A call the server
// refuses for its size is answered in its place and the turn still ends, as
// in SubmitStream; the refusal is returned once every other event is stored.
func (c *Client) SubmitCalls(ctx context.Context, turn string, calls []Call, opts TurnOptions) error {
	if err := checkTurn("submit calls", turn); err != nil {
		return err
	}
	// The whole turn is known: send every event without waiting, then wait
	// for all the acks, one round trip instead of one per call. A single
	// connection keeps them in order.
	p := &pending{}
	var refused []error
	for i, call := range calls {
		tooLarge, err := c.publishUse(ctx, p, turn, call.use(i), opts, len(calls))
		if err != nil {
			return errors.Join(append(refused, err)...)
		}
		if tooLarge != nil {
			refused = append(refused, tooLarge)
		}
	}
	if len(calls) == 0 {
		if err := c.publishEnd(ctx, p, turn, &schemas.TurnEnd{Calls: 0, StopReason: "tool_use"}); err != nil {
			return err
		}
	}
	return errors.Join(append(refused, p.wait(ctx, c))...)
}

// SubmitCall publishes one call of a turn as soon as it is known, for an
// adapter of its own; seq is the call's 0-based position. EndTurn closes the
// turn. A *CallTooLargeError means the call was answered in its place: the
// turn can still end with it counted.
func (c *Client) SubmitCall(ctx context.Context, turn string, seq int, call Call, opts TurnOptions) error {
	if err := checkTurn("submit call", turn); err != nil {
		return err
	}
	tooLarge, err := c.publishUse(ctx, nil, turn, call.use(seq), opts, 0)
	if err != nil {
		return err
	}
	if tooLarge != nil {
		return tooLarge
	}
	return nil
}

// EndTurn says a turn has exactly calls calls.
func (c *Client) EndTurn(ctx context.Context, turn string, calls int, stopReason string) error {
	if err := checkTurn("end turn", turn); err != nil {
		return err
	}
	return c.publishEnd(ctx, nil, turn, &schemas.TurnEnd{Calls: calls, StopReason: stopReason})
}

// publishUse publishes a call's tool_use; calls is the turn's count when
// known (0: a turn_end will say). When the server refuses the event for
// its size, it publishes the call's stand-in instead and returns the
// refusal as tooLarge; err is a failure that leaves the call unsent.
func (c *Client) publishUse(ctx context.Context, p *pending, turn string, call modelstream.Call, opts TurnOptions, calls int) (tooLarge *CallTooLargeError, err error) {
	id := call.ID
	if id == "" {
		id = fmt.Sprintf("toolu_tw_%s_%d", turn, call.Seq)
	}
	u := &schemas.ToolUse{
		Seq: call.Seq, ToolUseID: id, Name: call.Name, Complete: call.Complete,
		Error: call.Err, MaxConcurrency: opts.MaxConcurrency, Calls: calls,
	}
	switch {
	case call.Complete:
		u.Input = schemas.RawJSON(call.Input)
	case call.Ended && call.Name != "":
		// The block ended but its text is malformed: the router's repair
		// may still make a call of it, or answer it with the parse error.
		u.Complete, u.RawInput, u.Error = true, call.RawInput, ""
	default:
		u.RawInput = call.RawInput
	}
	subject, msgID := c.cfg.Space.In(c.cfg.Tenant, turn, subjects.KindUse), subjects.UseMsgID(c.cfg.Tenant, turn, call.Seq)
	m, err := c.encode(ctx, subject, turn, call.Seq, u)
	if err != nil {
		return nil, err
	}
	err = c.sendMsg(ctx, p, m, msgID)
	if !errors.Is(err, nats.ErrMaxPayload) {
		return nil, err
	}
	return c.standIn(ctx, p, turn, u, m, msgID, err)
}

func (c *Client) publishEnd(ctx context.Context, p *pending, turn string, e *schemas.TurnEnd) error {
	return c.send(ctx, p, c.cfg.Space.In(c.cfg.Tenant, turn, subjects.KindEnd), subjects.InMsgID(c.cfg.Tenant, turn, subjects.KindEnd), turn, -1, e)
}
