package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/modelstream/formats"
	"github.com/toolwire/toolwire/subjects"
)

// maxConcurrencyCap bounds a turn's own concurrency limit from a request.
const maxConcurrencyCap = 1024

// closeWait bounds closing a turn whose upload failed, after the request
// itself has ended.
const closeWait = 10 * time.Second

// turnOf is r's turn id, checked as a subject token.
func turnOf(r *request) (string, error) {
	turn := r.PathValue("turn")
	if err := subjects.CheckToken("turn", turn); err != nil {
		return "", problemf(kindBadRequest, "the turn id in the path: %w", err)
	}
	return turn, nil
}

// streamAccepted is the answer to a submitted stream.
type streamAccepted struct {
	Turn        string   `json:"turn"`
	Calls       int      `json:"calls"`
	Ended       bool     `json:"ended"`
	StopReason  string   `json:"stop_reason,omitempty"`
	StreamError string   `json:"stream_error,omitempty"`
	Refused     []string `json:"refused,omitempty"`
}

// submitStream parses the body as it arrives and publishes each call the
// moment it is complete. An upload that fails before the stream's end
// discards the turn at the calls seen, so that each gets its one result
// and the turn completes rather than waiting for an end that never comes.
func (a *API) submitStream(w http.ResponseWriter, r *request) error {
	turn, err := turnOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	if q.Get("format") == "" {
		return problemf(kindBadRequest, "the format query parameter is missing: one of %v", formats.Names())
	}
	parser, err := formats.Parser(q.Get("format"))
	if err != nil {
		return problemf(kindBadRequest, "format: %w", err)
	}
	var opts client.TurnOptions
	if s := q.Get("max_concurrency"); s != "" {
		if opts.MaxConcurrency, err = intParam("max_concurrency", s, 1, maxConcurrencyCap); err != nil {
			return err
		}
	}
	// A full pipeline slows the upload down (its reads wait for each
	// publish) rather than failing it.
	body := &watchedBody{r: http.MaxBytesReader(w, r.Body, a.cfg.MaxStreamBytes)}
	sum, err := r.c.SubmitStream(r.Context(), turn, parser, body, opts)
	refused, err := splitRefused(err)
	switch {
	case body.err != nil:
		// The upload broke (the agent went away, the body is over its
		// limit): whatever the parser made of it, the agent will send
		// the stream again, so the calls seen are stopped, not run on.
		a.closeTurn(r, turn, len(sum.Uses), body.err)
		if classify(body.err).kind == kindInternal {
			return problemf(kindBadRequest, "the upload broke after %d calls (the turn is discarded at those): %w", len(sum.Uses), body.err)
		}
		return body.err
	case !sum.Ended:
		a.closeTurn(r, turn, len(sum.Uses), err)
		if err == nil {
			err = errors.New("the stream ended without its end")
		}
		if classify(err).kind == kindInternal {
			return problemf(kindUnprocessable, "the stream did not parse as %s after %d calls (the turn is discarded at those): %w", q.Get("format"), len(sum.Uses), err)
		}
		return err
	case err != nil:
		return err
	}
	return writeJSON(w, http.StatusOK, streamAccepted{
		Turn: turn, Calls: sum.Calls, Ended: true, StopReason: sum.StopReason, StreamError: sum.Err, Refused: refused,
	})
}

// watchedBody keeps the first read error of a body other than its end: a
// parser may take a broken upload for a stream cut short.
type watchedBody struct {
	r   io.Reader
	err error
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

// closeTurn discards a turn whose upload failed, so that its calls are
// answered (those not finished are stopped) and it completes.
func (a *API) closeTurn(r *request, turn string, calls int, cause error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), closeWait)
	defer cancel()
	reason := fmt.Sprintf("the upload of the model stream failed after %d calls: %v", calls, cause)
	if err := r.c.Discard(ctx, turn, reason); err != nil {
		a.cfg.Log.Error("a turn whose upload failed could not be discarded", "tenant", r.tenant, "turn", turn, "err", err)
	}
}

// splitRefused separates the calls refused for their size, which were
// answered in their place and do not fail the request, from any other
// failure.
func splitRefused(err error) (refused []string, rest error) {
	if err == nil {
		return nil, nil
	}
	var others []error
	for _, e := range flatten(err) {
		var tl *client.CallTooLargeError
		if errors.As(e, &tl) {
			refused = append(refused, tl.Error())
			continue
		}
		others = append(others, e)
	}
	return refused, errors.Join(others...)
}

// flatten lists the errors an errors.Join holds (err itself otherwise).
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var all []error
		for _, e := range j.Unwrap() {
			all = append(all, flatten(e)...)
		}
		return all
	}
	return []error{err}
}

// callsRequest is the body of POST /calls.
type callsRequest struct {
	Calls []struct {
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"calls"`
	FirstSeq       int  `json:"first_seq"`
	End            bool `json:"end"`
	MaxConcurrency int  `json:"max_concurrency"`
}

// callsAccepted is the answer to submitted calls.
type callsAccepted struct {
	Turn     string   `json:"turn"`
	Accepted int      `json:"accepted"`
	Ended    bool     `json:"ended"`
	Refused  []string `json:"refused,omitempty"`
}

// submitCalls publishes calls numbered from first_seq and, with end, the
// turn's end.
func (a *API) submitCalls(w http.ResponseWriter, r *request) error {
	turn, err := turnOf(r)
	if err != nil {
		return err
	}
	var req callsRequest
	if err := a.readJSON(w, r, &req, false); err != nil {
		return err
	}
	if err := a.checkCalls(&req); err != nil {
		return err
	}
	calls := make([]client.Call, len(req.Calls))
	for i, c := range req.Calls {
		calls[i] = client.Call{ID: c.ID, Name: c.Name, Input: c.Input}
	}
	opts := client.TurnOptions{MaxConcurrency: req.MaxConcurrency}
	// A pipeline that stays behind is answered 429 with Retry-After, not
	// waited for as long as the client would wait.
	ctx, cancel := context.WithTimeout(r.Context(), a.cfg.PublishWait)
	defer cancel()
	if req.End && req.FirstSeq == 0 {
		err = r.c.SubmitCalls(ctx, turn, calls, opts)
	} else {
		err = a.submitEach(ctx, r.c, turn, req.FirstSeq, calls, opts, req.End)
	}
	refused, err := splitRefused(err)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, callsAccepted{Turn: turn, Accepted: len(calls), Ended: req.End, Refused: refused})
}

// checkCalls refuses a request the pipeline would refuse: a seq past the
// calls limit, a call without a name, a bad concurrency limit.
func (a *API) checkCalls(req *callsRequest) error {
	limit := a.cfg.Limits.MaxCallsPerTurn
	switch {
	case req.FirstSeq < 0:
		return problemf(kindUnprocessable, "first_seq is %d: want 0 or more", req.FirstSeq)
	case req.FirstSeq > limit-len(req.Calls): // not FirstSeq+len: that can wrap
		return problemf(kindUnprocessable, "calls %d to %d are past the limit of %d calls per turn", req.FirstSeq, req.FirstSeq+len(req.Calls)-1, limit)
	case req.MaxConcurrency < 0 || req.MaxConcurrency > maxConcurrencyCap:
		return problemf(kindUnprocessable, "max_concurrency is %d: want 1 to %d (0 or none: the pipeline's)", req.MaxConcurrency, maxConcurrencyCap)
	case len(req.Calls) == 0 && !req.End:
		return problemf(kindUnprocessable, "no calls and no end: nothing to do")
	}
	for i, c := range req.Calls {
		switch {
		case c.Name == "":
			return problemf(kindUnprocessable, "calls[%d] has no name", i)
		case len(c.Name) > maxName:
			return problemf(kindUnprocessable, "calls[%d].name is %d bytes: at most %d", i, len(c.Name), maxName)
		case len(c.ID) > maxName:
			return problemf(kindUnprocessable, "calls[%d].id is %d bytes: at most %d", i, len(c.ID), maxName)
		}
	}
	return nil
}

// submitEach publishes calls one by one from seq first, then the end when
// asked.
func (a *API) submitEach(ctx context.Context, c *client.Client, turn string, first int, calls []client.Call, opts client.TurnOptions, end bool) error {
	var refused []error
	for i, call := range calls {
		err := c.SubmitCall(ctx, turn, first+i, call, opts)
		var tl *client.CallTooLargeError
		switch {
		case errors.As(err, &tl):
			refused = append(refused, err)
		case err != nil:
			return errors.Join(append(refused, err)...)
		}
	}
	if end {
		if err := c.EndTurn(ctx, turn, first+len(calls), "tool_use"); err != nil {
			return errors.Join(append(refused, err)...)
		}
	}
	return errors.Join(refused...)
}

// reasonBody is the optional body of cancel and discard.
type reasonBody struct {
	Reason string `json:"reason"`
}

// maxReason bounds a reason's length, and maxName a call's name or id, as
// the OpenAPI document does.
const (
	maxReason = 4096
	maxName   = 256
)

func (a *API) readReason(w http.ResponseWriter, r *request) (string, error) {
	var b reasonBody
	if err := a.readJSON(w, r, &b, true); err != nil {
		return "", err
	}
	if len(b.Reason) > maxReason {
		return "", problemf(kindUnprocessable, "reason is %d bytes: at most %d", len(b.Reason), maxReason)
	}
	return b.Reason, nil
}

func (a *API) cancel(w http.ResponseWriter, r *request) error {
	return a.control(w, r, r.c.Cancel)
}

func (a *API) discard(w http.ResponseWriter, r *request) error {
	return a.control(w, r, r.c.Discard)
}

// control sends a turn's cancel or discard.
func (a *API) control(w http.ResponseWriter, r *request, send func(ctx context.Context, turn, reason string) error) error {
	turn, err := turnOf(r)
	if err != nil {
		return err
	}
	reason, err := a.readReason(w, r)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), a.cfg.PublishWait)
	defer cancel()
	if err := send(ctx, turn, reason); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// decision is the body of POST /approvals/{seq}.
type decision struct {
	Allow  *bool  `json:"allow"`
	Reason string `json:"reason"`
}

// decide answers an approval request.
func (a *API) decide(w http.ResponseWriter, r *request) error {
	turn, err := turnOf(r)
	if err != nil {
		return err
	}
	seq, err := intParam("seq", r.PathValue("seq"), 0, a.cfg.Limits.MaxCallsPerTurn-1)
	if err != nil {
		return err
	}
	var d decision
	if err := a.readJSON(w, r, &d, false); err != nil {
		return err
	}
	if d.Allow == nil {
		return problemf(kindUnprocessable, "allow is missing: want {\"allow\": true} or {\"allow\": false, \"reason\": …}")
	}
	if len(d.Reason) > maxReason {
		return problemf(kindUnprocessable, "reason is %d bytes: at most %d", len(d.Reason), maxReason)
	}
	ctx, cancel := context.WithTimeout(r.Context(), a.cfg.PublishWait)
	defer cancel()
	if err := r.c.Decide(ctx, turn, seq, *d.Allow, d.Reason); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
