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
// holds, or jetstream.ErrMsgNotFound: for a subject whose last message may
// be one its readers skip (another tenant's, aimed there). It reads the
// subject from its start, at most max messages.
func (s *Stream) LastWhere(ctx context.Context, subject string, keep func(*jetstream.RawStreamMsg) bool, max int) (*jetstream.RawStreamMsg, error) {
	var found *jetstream.RawStreamMsg
	seq := uint64(0)
	for range max {
		m, err := s.Next(ctx, seq, subject)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			if found == nil {
				return nil, err
			}
			return found, nil
		}
		if err != nil {
			return nil, err
		}
		if keep(m) {
			found = m
		}
		seq = m.Sequence + 1
	}
	return nil, fmt.Errorf("get from %s: more than %d messages on %s", s.name, max, subject)
}

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
	ctx, cancel := jserr.Bound(ctx)
	defer cancel()
	m, err := s.nc.RequestWithContext(ctx, s.subject, body)
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
