package executor

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/sanitizer"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
)

// shape turns what a tool returned into the result the model gets: errors
// sanitized and wrapped, output cleaned of invisible characters, empty
// output named, content capped at the tool's limit.
func (e *Executor) shape(c *call, res tool.Result, callErr error, started, finished time.Time, attempt int) *schemas.ToolResult {
	r := &schemas.ToolResult{
		Seq: c.d.Seq, ToolUseID: c.d.ToolUseID, Name: c.t.Name(),
		StartedAt: started.UTC(), FinishedAt: finished.UTC(),
		Worker: e.cfg.WorkerID, Attempt: attempt, Safe: c.safe,
	}
	switch {
	case callErr != nil:
		text := callErr.Error()
		if res.Content != "" {
			text = res.Content + "\n" + text
		}
		r.IsError, r.Content = true, sanitizer.Error(text, sanitizer.Options{})
	case res.IsError:
		r.IsError, r.Content = true, sanitizer.Error(res.Content, sanitizer.Options{})
	default:
		r.Content = sanitizer.Output(res.Content)
		if r.Content == "" {
			r.Content = fmt.Sprintf("(%s completed with no output)", c.t.Name())
		}
		r.Content, r.Truncated = capChars(r.Content, c.t.MaxResultChars())
	}
	return r
}

// capChars cuts s to at most n characters (runes), marking the cut.
func capChars(s string, n int) (string, bool) {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s, false
	}
	i, count := 0, 0
	for i < len(s) && count < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return s[:i] + fmt.Sprintf("\n… [output truncated: %d more characters]", utf8.RuneCountInString(s[i:])), true
}

func (e *Executor) errorResult(c *call, at time.Time, attempt int, text string) *schemas.ToolResult {
	name := c.d.Tool
	if c.t != nil {
		name = c.t.Name()
	}
	return &schemas.ToolResult{
		Seq: c.d.Seq, ToolUseID: c.d.ToolUseID, Name: name, IsError: true,
		Content:   sanitizer.Error(text, sanitizer.Options{}),
		StartedAt: at.UTC(), FinishedAt: at.UTC(), Worker: e.cfg.WorkerID, Attempt: attempt,
	}
}

// publishResult stores a call's one result. A refused publish is fine when
// the call already has a result (an earlier attempt's); the stream keeps
// one message per subject and refuses a second.
func (e *Executor) publishResult(ctx context.Context, p subjects.Parsed, trace string, r *schemas.ToolResult) error {
	h, body, err := schemas.Encode(schemas.Meta{Source: e.cfg.Source, Tenant: p.Tenant, Turn: p.Turn, Seq: r.Seq, TraceParent: trace}, r)
	if err != nil {
		return fmt.Errorf("executor: encode result: %w", err)
	}
	subject := e.cfg.Space.Result(p.Tenant, p.Turn, r.Seq)
	_, err = e.js.PublishMsg(ctx, &nats.Msg{Subject: subject, Header: h, Data: body}, jetstream.WithMsgID(subjects.ResultMsgID(p.Tenant, p.Turn, r.Seq)))
	if err == nil {
		return nil
	}
	if s, serr := e.js.Stream(ctx, e.cfg.Space.ResultStream()); serr == nil {
		if _, gerr := s.GetLastMsgForSubject(ctx, subject); gerr == nil {
			return nil
		}
	}
	return fmt.Errorf("executor: publish result %s: %w", subject, err)
}
