// Package leaderget reads a stream's messages from the stream's leader.
//
// TW_OUT and TW_APPROVAL allow direct gets, also in a cluster, so that a
// tenant's client can read its last result from any replica
// (docs/jetstream.md, Clustering). nats.go's Stream reads by direct get
// whenever the stream allows it, and a replica may answer from behind the
// leader; the stages decide on some of these reads without a write that
// would catch a stale answer (the router's check that a turn is new, the
// executor's check for a decision already made), so they read here
// instead: the stream's message get, which only its leader answers.
package leaderget

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/hedge"
	"github.com/toolwire/toolwire/internal/jserr"
	"github.com/toolwire/toolwire/subjects"
)

// Stream reads one stream's messages from its leader.
type Stream struct {
	nc      *nats.Conn
	name    string
	subject string
}

// New returns a reader of stream, on the connection of js.
func New(js jetstream.JetStream, sp subjects.Space, stream string) *Stream {
	return &Stream{nc: js.Conn(), name: stream, subject: sp.MsgGet(stream)}
}

// GetLastMsgForSubject returns the last message stored on subject, or
// jetstream.ErrMsgNotFound.
func (s *Stream) GetLastMsgForSubject(ctx context.Context, subject string) (*jetstream.RawStreamMsg, error) {
	return s.get(ctx, request{LastFor: subject})
}

// Next returns the first message stored on subject (which may have
// wildcards) at stream sequence seq or after, or jetstream.ErrMsgNotFound.
func (s *Stream) Next(ctx context.Context, seq uint64, subject string) (*jetstream.RawStreamMsg, error) {
	return s.get(ctx, request{Seq: seq, NextFor: subject})
}

// LastWhere returns the last message stored on subject for which keep
// holds, and the subject's last stream sequence, or
// jetstream.ErrMsgNotFound when the subject holds none that keep takes:
// for a subject whose last message may be one its readers skip (another
// tenant's, aimed there). The last message is read first; only when keep
// refuses it is the subject read from its start, at most maxScan messages.
func (s *Stream) LastWhere(ctx context.Context, subject string, keep func(*jetstream.RawStreamMsg) bool) (*jetstream.RawStreamMsg, uint64, error) {
	last, err := s.GetLastMsgForSubject(ctx, subject)
	if err != nil {
		return nil, 0, err
	}
	if keep(last) {
		return last, last.Sequence, nil
	}
	var found *jetstream.RawStreamMsg
	for seq, n := uint64(0), 0; seq < last.Sequence; n++ {
		if n == maxScan {
			return nil, 0, fmt.Errorf("get from %s: more than %d messages on %s", s.name, maxScan, subject)
		}
		m, err := s.Next(ctx, seq, subject)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		if m.Sequence < last.Sequence && keep(m) {
			found = m
		}
		seq = m.Sequence + 1
	}
	if found == nil {
		return nil, last.Sequence, jetstream.ErrMsgNotFound
	}
	return found, last.Sequence, nil
}

// maxScan bounds LastWhere's reads of one subject: a turn's own messages
// are bounded by the calls limit, and so is what another tenant can aim
// there by its reads within a turn's life.
const maxScan = 4096

// request and response are the JetStream API's message get
// (nats-server's JSApiMsgGetRequest and JSApiMsgGetResponse).
type request struct {
	Seq     uint64 `json:"seq,omitempty"`
	LastFor string `json:"last_by_subj,omitempty"`
	NextFor string `json:"next_by_subj,omitempty"`
}

type response struct {
	Error   *jetstream.APIError `json:"error,omitempty"`
	Message *struct {
		Subject  string `json:"subject"`
		Sequence uint64 `json:"seq"`
		Header   []byte `json:"hdrs,omitempty"`
		Data     []byte `json:"data,omitempty"`
	} `json:"message,omitempty"`
}

// codeNotFound is the server's JSNoMessageFoundErr.
const codeNotFound jetstream.ErrorCode = 10037

func (s *Stream) get(ctx context.Context, req request) (*jetstream.RawStreamMsg, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	m, err := s.request(ctx, body)
	if err != nil {
		return nil, fmt.Errorf("get from %s: %w", s.name, err)
	}
	var resp response
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return nil, fmt.Errorf("get from %s: %w", s.name, err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrorCode == codeNotFound:
		return nil, jetstream.ErrMsgNotFound
	case resp.Error != nil:
		return nil, fmt.Errorf("get from %s: %w", s.name, resp.Error)
	case resp.Message == nil:
		return nil, fmt.Errorf("get from %s: %w", s.name, jetstream.ErrInvalidJetStreamResponse)
	}
	raw := &jetstream.RawStreamMsg{Subject: resp.Message.Subject, Sequence: resp.Message.Sequence, Data: resp.Message.Data}
	if len(resp.Message.Header) > 0 {
		if raw.Header, err = nats.DecodeHeadersMsg(resp.Message.Header); err != nil {
			return nil, fmt.Errorf("get from %s: %w", s.name, err)
		}
	}
	return raw, nil
}

// request sends the message get, again while it is not answered
// (package hedge), within jserr.RequestTimeout.
func (s *Stream) request(ctx context.Context, body []byte) (*nats.Msg, error) {
	ctx, cancel := jserr.Bound(ctx)
	defer cancel()
	return hedge.Do(ctx, func(ctx context.Context) (*nats.Msg, error) {
		return s.nc.RequestWithContext(ctx, s.subject, body)
	})
}
