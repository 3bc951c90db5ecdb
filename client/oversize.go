package client

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/internal/texts"
	"github.com/toolwire/toolwire/schemas"
)

// CallTooLargeError reports a call whose tool_use event the NATS server
// refuses for its size (nats.ErrMaxPayload, which it wraps).
//
// The call is not lost: in its place the client sends a small tool_use that
// keeps the call's seq, id and name and marks it not runnable, saying why.
// The router answers it with an error result like any call that cannot
// run, so the model learns that its arguments were too large, every other
// call of the turn runs, and the turn ends with all its calls counted.
type CallTooLargeError struct {
	// Turn, Seq, ToolUseID and Name say which call it was.
	Turn      string
	Seq       int
	ToolUseID string
	Name      string
	// Size is the event's headers and data in bytes, as the server counts
	// them against MaxPayload, the server's max_payload.
	Size       int
	MaxPayload int64
	Err        error
}

// Error names the call and both sizes, so that a log line says what to fix.
func (e *CallTooLargeError) Error() string {
	return fmt.Sprintf("client: turn %s: call %d (%s, %s) not sent: its tool_use event is %d bytes, over the server's max_payload of %d bytes: %v",
		e.Turn, e.Seq, clip(e.ToolUseID), clip(e.Name), e.Size, e.MaxPayload, e.Err)
}

// Unwrap returns the publish error, which wraps nats.ErrMaxPayload.
func (e *CallTooLargeError) Unwrap() error { return e.Err }

// clip shortens an id or a name for an error message: what made the event
// too large may be the name itself.
func clip(s string) string {
	const max = 100
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}

// standIn answers the refusal err of u's event m by publishing, under the
// same message id, a tool_use that carries no input and says why the call
// cannot run. It returns the refusal, or an error when the stand-in could
// not be sent either (then the call is missing and the turn cannot end).
func (c *Client) standIn(ctx context.Context, p *pending, turn string, u *schemas.ToolUse, m *nats.Msg, msgID string, err error) (*CallTooLargeError, error) {
	tooLarge := &CallTooLargeError{
		Turn: turn, Seq: u.Seq, ToolUseID: u.ToolUseID, Name: u.Name,
		// What nats.go measures before it refuses: headers (the message
		// id included, set on m by the publish) and data.
		Size:       m.Size() - len(m.Subject) - len(m.Reply),
		MaxPayload: c.nc.MaxPayload(),
		Err:        err,
	}
	why := texts.TooLargeToSend(tooLarge.Size, tooLarge.MaxPayload)
	if !u.Complete && u.Error != "" {
		why = u.Error + "; " + why // the call could not run anyway: say that first
	}
	stand := &schemas.ToolUse{
		Seq: u.Seq, ToolUseID: u.ToolUseID, Name: u.Name, Complete: false,
		Error: why, MaxConcurrency: u.MaxConcurrency, Calls: u.Calls,
	}
	sm, serr := c.encode(ctx, m.Subject, turn, u.Seq, stand)
	if serr == nil {
		serr = c.sendMsg(ctx, p, sm, msgID)
	}
	if serr != nil {
		return nil, errors.Join(tooLarge, fmt.Errorf("client: turn %s: call %d: its stand-in was not sent either: %w", turn, u.Seq, serr))
	}
	return tooLarge, nil
}
