package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/jserr"
	"github.com/toolwire/toolwire/modelstream/formats"
	"github.com/toolwire/toolwire/subjects"
)

// kind is one kind of problem the API answers with (RFC 9457): every error
// response is one of these, so clients can switch on type and status.
type kind struct {
	status int
	slug   string
	title  string
	// retry, when set, is the Retry-After a client should wait, in seconds.
	retry int
}

// The problem kinds, in one table.
var (
	kindBadRequest    = kind{http.StatusBadRequest, "bad-request", "The request is malformed", 0}
	kindUnauthorized  = kind{http.StatusUnauthorized, "unauthorized", "A valid bearer token is required", 0}
	kindForbidden     = kind{http.StatusForbidden, "forbidden", "The request is refused", 0}
	kindNotFound      = kind{http.StatusNotFound, "not-found", "No such resource", 0}
	kindMethod        = kind{http.StatusMethodNotAllowed, "method-not-allowed", "The method is not allowed here", 0}
	kindTooLarge      = kind{http.StatusRequestEntityTooLarge, "too-large", "The request body is too large", 0}
	kindMediaType     = kind{http.StatusUnsupportedMediaType, "unsupported-media-type", "The body must be JSON", 0}
	kindUnprocessable = kind{http.StatusUnprocessableEntity, "unprocessable", "The request cannot be carried out as sent", 0}
	kindSlowDown      = kind{http.StatusTooManyRequests, "slow-down", "The pipeline is behind: send again later", 1}
	kindTooMany       = kind{http.StatusTooManyRequests, "too-many-streams", "Too many event streams are open", 1}
	kindUnavailable   = kind{http.StatusServiceUnavailable, "unavailable", "JetStream is not answering for now", 1}
	kindInternal      = kind{http.StatusInternalServerError, "internal", "The server failed", 0}
)

// problemBase is where the kinds' type URIs live.
const problemBase = "https://toolwire.dev/problems/"

// problem is an error that says which kind of problem it is and what was
// wrong with this request.
type problem struct {
	kind
	detail string
	err    error
}

func (p *problem) Error() string { return p.detail }
func (p *problem) Unwrap() error { return p.err }

// problemf is a problem of kind k whose detail says what was wrong.
func problemf(k kind, format string, args ...any) *problem {
	err := fmt.Errorf(format, args...)
	return &problem{kind: k, detail: err.Error(), err: errors.Unwrap(err)}
}

// classify turns a handler's error into the problem its client reads. The
// kind comes from the error's type or sentinel, never from its text.
func classify(err error) *problem {
	var p *problem
	if errors.As(err, &p) {
		return p
	}
	var tooLarge *http.MaxBytesError
	k := kindInternal
	switch {
	case errors.As(err, &tooLarge):
		return &problem{kind: kindTooLarge, detail: fmt.Sprintf("the body is over its limit of %d bytes", tooLarge.Limit), err: err}
	case errors.Is(err, subjects.ErrBadToken), errors.Is(err, formats.ErrUnknown):
		k = kindBadRequest
	case errors.Is(err, client.ErrSlowDown):
		k = kindSlowDown
	case errors.Is(err, jetstream.ErrObjectNotFound), errors.Is(err, jetstream.ErrBucketNotFound):
		k = kindNotFound
	case jserr.Unavailable(err), errors.Is(err, context.DeadlineExceeded):
		// Our own bound on waiting for JetStream, or JetStream saying it
		// cannot answer for now: either way, try again shortly.
		k = kindUnavailable
	}
	return &problem{kind: k, detail: err.Error(), err: err}
}

// problemBody is the problem document.
type problemBody struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Instance string `json:"instance,omitempty"`
}

// writeProblem answers r with err as a problem document. A request whose
// client has gone (its context ended) gets nothing: nobody reads it.
func writeProblem(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil && errors.Is(err, context.Canceled) {
		return
	}
	p := classify(err)
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	if p.retry > 0 {
		h.Set("Retry-After", strconv.Itoa(p.retry))
	}
	if p.status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="toolwire"`)
	}
	w.WriteHeader(p.status)
	_ = json.NewEncoder(w).Encode(problemBody{
		Type: problemBase + p.slug, Title: p.title, Status: p.status, Detail: p.detail, Instance: r.URL.Path,
	})
}
