package schemas

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"github.com/vmihailenco/msgpack/v5"
)

// Content types of event data.
const (
	ContentMsgpack = "application/msgpack"
	ContentJSON    = "application/json"
)

// CloudEvents binary-mode headers (the NATS protocol binding, spec 1.0.3).
const (
	hdrSpecVersion = "ce-specversion"
	hdrID          = "ce-id"
	hdrSource      = "ce-source"
	hdrType        = "ce-type"
	hdrTime        = "ce-time"
	hdrSubject     = "ce-subject"
	hdrContentType = "ce-datacontenttype"
	hdrTenant      = "ce-tenant"
	hdrTurn        = "ce-turn"
	hdrSeq         = "ce-seq"
	hdrCalls       = "ce-calls"
	hdrTraceParent = "ce-traceparent"
	hdrTraceState  = "ce-tracestate"
	hdrUseTime     = "ce-usetime"
	hdrTurnDone    = "ce-turndone"
)

// Meta is the CloudEvents envelope of an event.
type Meta struct {
	ID     string
	Source string
	// Type is set from the data on encode.
	Type    string
	Subject string
	Time    time.Time
	Tenant  string
	Turn    string
	// Seq is the call's position, or -1 for turn-level events.
	Seq int
	// Calls is the turn's count a tool_use carries (ToolUse.Calls), 0 for
	// none; Encode fills it from the data. It travels in a header too, so
	// that a call whose data cannot be read still gives its turn the
	// count, and the turn completes.
	Calls int
	// TraceParent and TraceState are the W3C trace context of the event
	// (the CloudEvents distributed-tracing extension): advice only, so a
	// malformed or over-long value is dropped rather than refused
	// (TraceOf).
	TraceParent string
	TraceState  string
	// UseTime is when the call's tool_use was published (its ce-time),
	// carried on its dispatch and result: what end-to-end latency is
	// measured from. Zero on other events.
	UseTime time.Time
	// TurnDone, on the tool_result that completes its turn on the out
	// subject, is the turn's number of results (seq + 1): that result is
	// the turn's completion too, and no turn_done follows it (DoneOf). 0
	// on every other event.
	TurnDone int
	// ContentType is the data's encoding; empty means msgpack on encode.
	ContentType string
}

// Encode builds the headers and body of an event in binary mode. It fills
// ID (a fresh NUID), Time (now) and ContentType (msgpack) when empty.
func Encode(meta Meta, data Data) (nats.Header, []byte, error) {
	if err := data.Validate(); err != nil {
		return nil, nil, err
	}
	meta.Type = data.EventType()
	if u, ok := data.(*ToolUse); ok && meta.Calls == 0 {
		meta.Calls = u.Calls
	}
	if meta.ID == "" {
		meta.ID = nuid.Next()
	}
	if meta.Time.IsZero() {
		meta.Time = time.Now().UTC()
	}
	if meta.ContentType == "" {
		meta.ContentType = ContentMsgpack
	}
	if err := checkMeta(meta); err != nil {
		return nil, nil, err
	}
	var body []byte
	var err error
	switch meta.ContentType {
	case ContentMsgpack:
		body, err = msgpack.Marshal(data)
	case ContentJSON:
		body, err = json.Marshal(data)
	default:
		return nil, nil, &FieldError{Field: hdrContentType, Reason: fmt.Sprintf("unsupported %q (use %s or %s)", meta.ContentType, ContentMsgpack, ContentJSON)}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("schemas: encode %s: %w", meta.Type, err)
	}
	h := make(nats.Header, 12)
	set := func(k, v string) {
		if v != "" {
			h[k] = []string{percentEncode(v)}
		}
	}
	set(hdrSpecVersion, event.CloudEventsVersionV1)
	set(hdrID, meta.ID)
	set(hdrSource, meta.Source)
	set(hdrType, meta.Type)
	set(hdrTime, meta.Time.UTC().Format(time.RFC3339Nano))
	set(hdrSubject, meta.Subject)
	set(hdrContentType, meta.ContentType)
	set(hdrTenant, meta.Tenant)
	set(hdrTurn, meta.Turn)
	if meta.Seq >= 0 {
		set(hdrSeq, strconv.Itoa(meta.Seq))
	}
	if meta.Calls > 0 {
		set(hdrCalls, strconv.Itoa(meta.Calls))
	}
	if tp, ts := boundTrace(meta.TraceParent, meta.TraceState); tp != "" {
		set(hdrTraceParent, tp)
		set(hdrTraceState, ts)
	}
	if !meta.UseTime.IsZero() {
		set(hdrUseTime, meta.UseTime.UTC().Format(time.RFC3339Nano))
	}
	if meta.TurnDone > 0 {
		set(hdrTurnDone, strconv.Itoa(meta.TurnDone))
	}
	return h, body, nil
}

// UseTimeOf is the ce-usetime of an event's headers (Meta.UseTime), zero
// when absent or malformed: for a stage that measures without decoding.
func UseTimeOf(h nats.Header) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, headerValue(h, hdrUseTime))
	return t
}

// checkMeta applies the CloudEvents rules through the SDK's own validation,
// so toolwire never emits an event another CloudEvents consumer would reject.
func checkMeta(meta Meta) error {
	if meta.Source == "" {
		return &FieldError{Field: hdrSource, Reason: "required"}
	}
	e := event.New()
	e.SetID(meta.ID)
	e.SetSource(meta.Source)
	e.SetType(meta.Type)
	e.SetTime(meta.Time)
	if err := e.Validate(); err != nil {
		return &FieldError{Field: "ce-*", Reason: "not a valid CloudEvent", Err: err}
	}
	return nil
}

// Decode reads an event in binary mode under the default limits; see
// Limits.Decode.
func Decode(h nats.Header, body []byte) (Meta, Data, error) {
	return DefaultLimits().Decode(h, body)
}

// Decode reads an event in binary mode: the ce-* headers and msgpack or JSON
// data, every field within l. Every failure is a *FieldError naming the
// header or field at fault. When a field is over a limit (the error's Limit
// is set), the data is returned too, as decoded, so that the caller can
// answer the call it names.
func (l Limits) Decode(h nats.Header, body []byte) (Meta, Data, error) {
	l = l.WithDefaults()
	var meta Meta
	get := func(k string, req bool) (string, error) {
		vs := h[k]
		if len(vs) == 0 || vs[0] == "" {
			if req {
				return "", &FieldError{Field: k, Reason: "required header missing"}
			}
			return "", nil
		}
		v, err := percentDecode(vs[0])
		if err != nil {
			return "", &FieldError{Field: k, Reason: "bad percent-encoding", Err: err}
		}
		return v, nil
	}
	// ce-seq first: when the rest is unusable, it may still say which call
	// the event was, so that the call can be answered.
	meta.Seq = -1
	seq, err := get(hdrSeq, false)
	if err != nil {
		return meta, nil, err
	}
	if seq != "" {
		n, err := strconv.Atoi(seq)
		if err != nil || n < 0 {
			return meta, nil, &FieldError{Field: hdrSeq, Reason: fmt.Sprintf("not a non-negative integer: %q", seq)}
		}
		if n >= l.MaxCallsPerTurn {
			return meta, nil, overLimit(hdrSeq, fmt.Sprintf("%s is not below the limit of %d calls per turn", seq, l.MaxCallsPerTurn), LimitCalls)
		}
		meta.Seq = n
	}
	if err := l.decodeCalls(&meta, get); err != nil {
		return meta, nil, err
	}
	sv, err := get(hdrSpecVersion, true)
	if err != nil {
		return meta, nil, err
	}
	if sv != event.CloudEventsVersionV1 {
		return meta, nil, &FieldError{Field: hdrSpecVersion, Reason: fmt.Sprintf("unsupported %q (want %s)", sv, event.CloudEventsVersionV1)}
	}
	if meta.ID, err = get(hdrID, true); err != nil {
		return meta, nil, err
	}
	if meta.Source, err = get(hdrSource, true); err != nil {
		return meta, nil, err
	}
	if meta.Type, err = get(hdrType, true); err != nil {
		return meta, nil, err
	}
	ts, err := get(hdrTime, false)
	if err != nil {
		return meta, nil, err
	}
	if ts != "" {
		if meta.Time, err = time.Parse(time.RFC3339Nano, ts); err != nil {
			return meta, nil, &FieldError{Field: hdrTime, Reason: "not RFC 3339", Err: err}
		}
	}
	if meta.Subject, err = get(hdrSubject, false); err != nil {
		return meta, nil, err
	}
	if meta.Tenant, err = get(hdrTenant, false); err != nil {
		return meta, nil, err
	}
	if meta.Turn, err = get(hdrTurn, false); err != nil {
		return meta, nil, err
	}
	meta.TraceParent, meta.TraceState = TraceOf(h)
	if ut, err := get(hdrUseTime, false); err != nil {
		return meta, nil, err
	} else if ut != "" {
		// Only a measure: a bad value is left out, not refused.
		meta.UseTime, _ = time.Parse(time.RFC3339Nano, ut)
	}
	ct, err := get(hdrContentType, false)
	if err != nil {
		return meta, nil, err
	}
	data, err := newData(meta.Type)
	if err != nil {
		return meta, nil, err
	}
	if meta.ContentType, err = mediaType(ct); err != nil {
		return meta, nil, err
	}
	if err := unmarshalData(meta.ContentType, body, data); err != nil {
		return meta, nil, err
	}
	if err := data.Validate(); err != nil {
		return meta, nil, err
	}
	if err := decodeTurnDone(&meta, data, get); err != nil {
		return meta, nil, err
	}
	if u, ok := data.(*ToolUse); ok && meta.Calls > 0 && u.Calls != meta.Calls {
		return meta, nil, &FieldError{Field: hdrCalls, Reason: fmt.Sprintf("%d does not match the data's calls (%d)", meta.Calls, u.Calls)}
	}
	if err := l.Check(data); err != nil {
		return meta, data, err
	}
	return meta, data, nil
}

// decodeTurnDone reads the ce-turndone header into meta.TurnDone: only a
// tool_result completes its turn, and only as the turn's last result.
func decodeTurnDone(meta *Meta, data Data, get func(string, bool) (string, error)) error {
	v, err := get(hdrTurnDone, false)
	if err != nil || v == "" {
		return err
	}
	res, ok := data.(*ToolResult)
	if !ok {
		return &FieldError{Field: hdrTurnDone, Reason: fmt.Sprintf("only a %s completes its turn, not a %s", TypeToolResult, meta.Type)}
	}
	n, err := strconv.Atoi(v)
	if err != nil || n != res.Seq+1 {
		return &FieldError{Field: hdrTurnDone, Reason: fmt.Sprintf("%q is not the turn's number of results with this one last (%d)", v, res.Seq+1)}
	}
	meta.TurnDone = n
	return nil
}

// OutHeaders is h (an event's headers) as the reorder stage appends the
// event to a turn's out subject: its ce-* headers, and ce-turndone set to
// results when the event is a tool_result that completes its turn (results
// > 0), else dropped, so that nothing but reorder says a turn is done.
func OutHeaders(h nats.Header, results int) nats.Header {
	out := EventHeaders(h)
	delete(out, hdrTurnDone)
	if results > 0 {
		out[hdrTurnDone] = []string{strconv.Itoa(results)}
	}
	return out
}

// CopiedFrom reports, for a message found on subject (which may be a
// filter with * and > wildcards), the subject it was first stored on when
// its headers name one that subject does not cover. A direct get's answer
// carries the read message's subject in Nats-Subject, and the server sends
// it to whatever reply subject the request named: aimed at a subject a
// stream captures, the answer is stored there, and delivered to its
// subscribers, as if published there. A tenant may read its own messages so,
// so a copy is how one tenant's decision or result could reach another's
// call; every reader that decides on a message checks this first. An answer
// to a direct get of subject itself names subject, and a message published
// there names none.
func CopiedFrom(h nats.Header, subject string) (string, bool) {
	for _, v := range h[jetstream.SubjectHeader] {
		if !covers(subject, v) {
			return v, true
		}
	}
	return "", false
}

// covers reports whether filter (NATS wildcards * and >) matches subject.
func covers(filter, subject string) bool {
	for {
		f, frest, fmore := strings.Cut(filter, ".")
		s, srest, smore := strings.Cut(subject, ".")
		switch {
		case f == ">":
			return s != ""
		case f != "*" && f != s:
			return false
		case !fmore || !smore:
			return !fmore && !smore
		}
		filter, subject = frest, srest
	}
}

// Owns reports whether the event of headers h says it belongs to turn of
// tenant (ce-tenant and ce-turn). A message can reach a turn's out subject
// without being the turn's: a direct get's answer aimed there by another
// tenant is stored by the stream that captures the subject. A reader that
// decides on the subject's messages skips the ones that are not its
// turn's.
func Owns(h nats.Header, tenant, turn string) bool {
	return headerValue(h, hdrTenant) == tenant && headerValue(h, hdrTurn) == turn
}

// OwnedBy reports whether a message found on subject is an event of turn
// of tenant: it says so (Owns) and is no copy of a message stored elsewhere
// (CopiedFrom).
func OwnedBy(h nats.Header, subject, tenant, turn string) bool {
	_, copied := CopiedFrom(h, subject)
	return !copied && Owns(h, tenant, turn)
}

// TurnDoneOf is the ce-turndone of an out message's headers
// (Meta.TurnDone), 0 when absent or malformed: for a stage that reads the
// out subject's last message without decoding it.
func TurnDoneOf(h nats.Header) int {
	vs := h[hdrTurnDone]
	if len(vs) == 0 {
		return 0
	}
	n, err := strconv.Atoi(vs[0])
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// DoneOf is the turn's completion an out message carries: a turn_done
// event, or the turn's last result marked with ce-turndone; nil for any
// other message. Readers of the out subject end a turn on either.
func DoneOf(meta Meta, data Data) *TurnDone {
	switch d := data.(type) {
	case *TurnDone:
		return d
	case *ToolResult:
		if meta.TurnDone > 0 {
			return &TurnDone{Results: meta.TurnDone}
		}
	}
	return nil
}

// decodeCalls reads the ce-calls header into meta.Calls: a count above the
// call's seq. A count over the calls-per-turn limit is an error, and is
// kept cut to the limit: the turn then closes there, as a turn_end over
// the limit closes its turn at the calls seen.
func (l Limits) decodeCalls(meta *Meta, get func(string, bool) (string, error)) error {
	v, err := get(hdrCalls, false)
	if err != nil || v == "" {
		return err
	}
	n, err := strconv.Atoi(v)
	switch {
	case err != nil || n <= 0:
		return &FieldError{Field: hdrCalls, Reason: fmt.Sprintf("not a positive integer: %q", v)}
	case n > l.MaxCallsPerTurn:
		meta.Calls = l.MaxCallsPerTurn
		return overLimit(hdrCalls, fmt.Sprintf("%s is over the limit of %d calls per turn", v, l.MaxCallsPerTurn), LimitCalls)
	case meta.Seq >= n:
		return &FieldError{Field: hdrCalls, Reason: fmt.Sprintf("%d calls leave no place for ce-seq %d", n, meta.Seq)}
	}
	meta.Calls = n
	return nil
}

// Headers a dead-lettered message carries besides its own.
const (
	// HeaderDLQReason says why the stage gave up on the message.
	HeaderDLQReason = "Tw-Dlq-Reason"
	// HeaderDLQSubject is the subject the message was first published on.
	HeaderDLQSubject = "Tw-Dlq-Subject"
	// HeaderDLQStage is the stage that gave up.
	HeaderDLQStage = "Tw-Dlq-Stage"
)

// EventHeaders copies the CloudEvents headers of h and nothing else, for
// forwarding an event: the server's own headers on a stored message
// (Nats-Subject, Nats-Sequence, Nats-Msg-Id, ...) must not travel with it.
func EventHeaders(h nats.Header) nats.Header {
	out := make(nats.Header, len(h))
	for k, v := range h {
		if len(k) > 3 && (k[:3] == "ce-" || k[:3] == "Ce-") {
			out[k] = v
		}
	}
	return out
}
