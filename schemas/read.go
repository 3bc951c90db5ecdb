package schemas

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
)

// A gap read (package reader) answers a request on subjects.Read with one
// reply message per stored message — its headers and body as stored, and
// HeaderReadSeq — then one end marker: HeaderReadEnd, or HeaderReadError
// when the read failed. Marker bodies are empty.
const (
	// HeaderReadSeq is the stream sequence of the stored message a reply
	// carries.
	HeaderReadSeq = "Tw-Read-Seq"
	// HeaderReadEnd ends a read: ReadMore when messages remain past the
	// bound of one read (ask again after the last sequence), ReadDone
	// when none does.
	HeaderReadEnd = "Tw-Read-End"
	// HeaderReadError ends a read that failed, with the reason.
	HeaderReadError = "Tw-Read-Error"
)

// Values of HeaderReadEnd.
const (
	ReadMore = "more"
	ReadDone = "done"
)

// MaxReadRequestBytes bounds a read request's body.
const MaxReadRequestBytes = 256

// ReadRequest asks for the messages stored on the subject a read request
// names after stream sequence After (0: from the first).
type ReadRequest struct {
	After uint64 `json:"after"`
}

// EncodeReadRequest returns the body of a read request.
func EncodeReadRequest(r ReadRequest) []byte {
	b, _ := json.Marshal(r) // a struct of one integer always encodes
	return b
}

// DecodeReadRequest decodes a read request's body; an empty body reads
// from the first message.
func DecodeReadRequest(body []byte) (ReadRequest, error) {
	var r ReadRequest
	if len(body) == 0 {
		return r, nil
	}
	if len(body) > MaxReadRequestBytes {
		return r, &FieldError{Field: "read request", Reason: fmt.Sprintf("%d bytes, over %d", len(body), MaxReadRequestBytes)}
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return r, &FieldError{Field: "read request", Reason: "not a JSON object {\"after\": <stream sequence>}", Err: err}
	}
	if r.After >= math.MaxInt64 {
		return r, &FieldError{Field: "after", Reason: fmt.Sprintf("%d is not a stream sequence", r.After)}
	}
	return r, nil
}

// ReadItem returns the headers of the reply that carries a stored message
// with headers h at stream sequence seq.
func ReadItem(h nats.Header, seq uint64) nats.Header {
	out := make(nats.Header, len(h)+1)
	for k, v := range h {
		out[k] = v
	}
	out.Set(HeaderReadSeq, strconv.FormatUint(seq, 10))
	return out
}

// ReadEnd returns the headers of a read's end marker.
func ReadEnd(more bool) nats.Header {
	h := nats.Header{}
	if more {
		h.Set(HeaderReadEnd, ReadMore)
	} else {
		h.Set(HeaderReadEnd, ReadDone)
	}
	return h
}

// maxReadReason bounds the reason an error marker carries.
const maxReadReason = 1024

// ReadFailed returns the headers of the end marker of a failed read.
func ReadFailed(reason string) nats.Header {
	// A header value is one line, and the reason only needs to say what.
	reason = strings.Join(strings.Fields(reason), " ")
	if len(reason) > maxReadReason {
		reason = reason[:maxReadReason]
	}
	h := nats.Header{}
	h.Set(HeaderReadError, reason)
	return h
}

// ErrReadFailed is wrapped by the error ParseReadReply returns for a
// read's error marker.
var ErrReadFailed = errors.New("schemas: read failed")

// ReadReply is what one reply message to a read request is.
type ReadReply struct {
	// End is set on the end marker; More then says whether messages
	// remain past the read's bound.
	End, More bool
	// Seq is the stream sequence of the stored message a reply carries.
	Seq uint64
}

// ParseReadReply reads a reply's headers. An error marker gives an error
// wrapping ErrReadFailed with the reader's reason.
func ParseReadReply(h nats.Header) (ReadReply, error) {
	if reason := h.Get(HeaderReadError); reason != "" {
		return ReadReply{}, fmt.Errorf("%w: %s", ErrReadFailed, reason)
	}
	switch h.Get(HeaderReadEnd) {
	case ReadDone:
		return ReadReply{End: true}, nil
	case ReadMore:
		return ReadReply{End: true, More: true}, nil
	case "":
	default:
		return ReadReply{}, &FieldError{Field: HeaderReadEnd, Reason: fmt.Sprintf("%q is neither %s nor %s", h.Get(HeaderReadEnd), ReadMore, ReadDone)}
	}
	seq, err := strconv.ParseUint(h.Get(HeaderReadSeq), 10, 64)
	if err != nil || seq == 0 {
		return ReadReply{}, &FieldError{Field: HeaderReadSeq, Reason: fmt.Sprintf("%q is not a stream sequence", h.Get(HeaderReadSeq)), Err: err}
	}
	return ReadReply{Seq: seq}, nil
}
