package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/answer"
	"github.com/toolwire/toolwire/internal/jserr"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/texts"
	"github.com/toolwire/toolwire/sanitizer"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
)

// Result shaping defaults (docs/orchestration.md, Results).
const (
	// DefaultTurnMaxChars caps the characters of all results of a turn.
	DefaultTurnMaxChars = 200_000
	// PreviewChars is about how much of an oversize result the model sees.
	PreviewChars = 2_000
)

// shape turns what a tool returned into the result the model gets: errors
// sanitized and wrapped, output cleaned of invisible characters, empty
// output named, content that is too long for the tool or the turn stored
// as a blob with a preview in its place.
func (e *Executor) shape(ctx context.Context, c *call, res tool.Result, callErr error, started, finished time.Time, attempt int) *schemas.ToolResult {
	var r *schemas.ToolResult
	switch {
	case callErr != nil:
		text := callErr.Error()
		if res.Content != "" {
			text = res.Content + "\n" + text
		}
		r = e.errorResult(c, finished, attempt, text)
	case res.IsError:
		r = e.errorResult(c, finished, attempt, res.Content)
	default:
		r = &schemas.ToolResult{
			Seq: c.d.Seq, ToolUseID: c.d.ToolUseID, Name: c.t.Name(),
			FinishedAt: finished.UTC(), Worker: e.cfg.WorkerID, Attempt: attempt, Safe: c.safe, Batch: c.batch,
		}
		content := sanitizer.Output(res.Content)
		if content == "" {
			content = texts.Empty(c.t.Name())
		}
		r.Content, r.Truncated, r.BlobRef = e.fit(ctx, c, content, res.Cut)
	}
	r.StartedAt = started.UTC()
	return r
}

// fit keeps content within the tool's cap and what is left of the turn's;
// beyond either, the whole content goes to the blob store and the model
// gets a preview and the reference. The turn's total is read only for
// results longer than a preview: shorter ones cannot shrink by being stored.
// cut is the tool's own cut of its output, if it made one: then content is
// not all there was, and the preview says how much there was.
func (e *Executor) fit(ctx context.Context, c *call, content string, cut *tool.OutputCut) (string, bool, string) {
	n := utf8.RuneCountInString(content)
	over := n > c.t.MaxResultChars()
	if !over && n > PreviewChars {
		// Reserve the characters in the turn's total by compare-and-set,
		// so concurrent calls cannot all slip under the cap together.
		_, _, err := e.store.Update(ctx, c.p.Tenant, c.p.Turn, nil, func(l *schemas.Lease) error {
			over = l.Chars+int64(n) > int64(e.cfg.TurnMaxChars)
			if over {
				return lease.ErrNoChange
			}
			l.Chars += int64(n)
			return nil
		})
		c.reserved = err == nil && !over
	}
	if !over {
		return content, false, ""
	}
	preview := cutRunes(content, PreviewChars)
	name := e.cfg.Space.BlobName(c.p.Tenant, c.p.Turn, c.d.Seq)
	if err := e.putBlob(ctx, name, content); err != nil {
		e.cfg.Log.Warn("executor: storing oversize result", append(c.logAttrs(), "err", err)...)
		return preview + previewMark(n, cut, ""), true, ""
	}
	return preview + previewMark(n, cut, name), true, name
}

// previewMark ends the preview of a result of n characters: how much there
// was, and what of it is stored as blob (nothing when blob is ""). Output
// the tool cut is measured in bytes, as the tool counted it, since the
// characters it dropped were never seen.
func previewMark(n int, cut *tool.OutputCut, blob string) string {
	switch {
	case cut != nil && blob != "":
		return texts.CutStored(cut.Total, cut.Kept, blob)
	case cut != nil:
		return texts.CutTruncated(cut.Total)
	case blob != "":
		return texts.Stored(n, blob)
	default:
		return texts.Truncated(n)
	}
}

// putBlob stores content in the blob bucket under name.
func (e *Executor) putBlob(ctx context.Context, name, content string) error {
	obs, err := e.js.ObjectStore(ctx, e.cfg.Space.BlobBucket())
	if err != nil {
		return err
	}
	_, err = obs.Put(ctx, jetstream.ObjectMeta{Name: name}, strings.NewReader(content))
	return err
}

// cutRunes returns the first n characters of s.
func cutRunes(s string, n int) string {
	i, count := 0, 0
	for i < len(s) && count < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return s[:i]
}

// errorResult is this worker's error result of call c, saying text, at
// attempt; it starts and finishes at at.
func (e *Executor) errorResult(c *call, at time.Time, attempt int, text string) *schemas.ToolResult {
	name := c.d.Tool
	if c.t != nil {
		name = c.t.Name()
	}
	r := answer.Error(c.d.Seq, c.d.ToolUseID, name, e.cfg.WorkerID, text, at)
	r.Attempt, r.Safe, r.Batch = attempt, c.safe, c.batch
	return r
}

// publishResult stores a call's one result. A refused publish is fine when
// the call already has a result (an earlier attempt's); the stream keeps
// one message per subject and refuses a second. The result carries the
// trace context and the use time of its dispatch, as from says them.
func (e *Executor) publishResult(ctx context.Context, p subjects.Parsed, from schemas.Meta, r *schemas.ToolResult) error {
	h, body, err := schemas.Encode(schemas.Meta{Source: e.cfg.Source, Tenant: p.Tenant, Turn: p.Turn, Seq: r.Seq,
		TraceParent: from.TraceParent, TraceState: from.TraceState, UseTime: from.UseTime}, r)
	if err != nil {
		return fmt.Errorf("executor: encode result: %w", err)
	}
	subject := e.cfg.Space.Result(p.Tenant, p.Turn, r.Seq)
	pctx, cancel := jserr.Bound(ctx)
	_, err = e.js.PublishMsg(pctx, &nats.Msg{Subject: subject, Header: h, Data: body})
	cancel()
	if err == nil {
		return nil
	}
	var refused *jetstream.APIError
	if !errors.As(err, &refused) {
		// Not answered: a publish whose ack was lost is
		// refused as the subject's second message when made again, and
		// only then is there a result to look for. Looking after every
		// failure would add a leader read, and its timeout, to each
		// retry while a stream elects its leader.
		return fmt.Errorf("executor: publish result %s: %w", subject, err)
	}
	// Refused, as the subject's second message (code 10077, though with
	// a 503) or otherwise: the result may be there.
	gctx, cancel := jserr.Bound(ctx)
	defer cancel()
	if s, serr := e.js.Stream(gctx, e.cfg.Space.ResultStream()); serr == nil {
		if _, gerr := s.GetLastMsgForSubject(gctx, subject); gerr == nil {
			return nil
		}
	}
	return fmt.Errorf("executor: publish result %s: %w", subject, err)
}
