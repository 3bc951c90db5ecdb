package subjects

import (
	"fmt"
	"strings"
)

// What a gap read (package reader) reads: a turn's out subject, or its
// approval requests. The kind is a token of the read subject, so a
// permission can grant one kind and not the other.
const (
	ReadOut       = "out"
	ReadApprovals = "approval"
)

// Read is where a client asks the stages for the messages of its turn's
// subject of kind (ReadOut, ReadApprovals) stored after a stream sequence.
// The tenant is part of the subject, so the server's permissions hold a
// tenant to its own reads, and the reader reads only that tenant's subjects.
func (s Space) Read(tenant, kind, turn string) string {
	return s.prefix + "." + tenant + ".read." + kind + "." + turn
}

// ReadAll matches every read request.
func (s Space) ReadAll() string { return s.prefix + ".*.read.*.*" }

// ReadGroup is the queue group of the readers: one answers each request.
func (s Space) ReadGroup() string { return "reader" }

// ParseRead parses a read request's subject; Kind is ReadOut or
// ReadApprovals. Tenant and turn are checked as tokens.
func (s Space) ParseRead(subject string) (Parsed, error) {
	t := strings.Split(subject, ".")
	if len(t) != 5 || t[0] != s.prefix || t[2] != "read" {
		return Parsed{}, fmt.Errorf("%w: %q is not %s.<tenant>.read.<kind>.<turn>", ErrBadSubject, subject, s.prefix)
	}
	if t[3] != ReadOut && t[3] != ReadApprovals {
		return Parsed{}, fmt.Errorf("%w: %q reads %q; want %s or %s", ErrBadSubject, subject, t[3], ReadOut, ReadApprovals)
	}
	if err := CheckToken("tenant", t[1]); err != nil {
		return Parsed{}, fmt.Errorf("%w: %q: %w", ErrBadSubject, subject, err)
	}
	if err := CheckToken("turn", t[4]); err != nil {
		return Parsed{}, fmt.Errorf("%w: %q: %w", ErrBadSubject, subject, err)
	}
	return Parsed{Tenant: t[1], Kind: t[3], Turn: t[4], Seq: -1}, nil
}

// ReadSubject is the stream and the subject a read of kind reads.
func (s Space) ReadSubject(tenant, kind, turn string) (stream, subject string) {
	if kind == ReadApprovals {
		return s.ApprovalStream(), s.ApprovalRequests(tenant, turn)
	}
	return s.OutStream(), s.Out(tenant, turn)
}

// ReplyAllowed reports whether a reply to a request of tenant may go to
// reply: an inbox (a subject whose first token begins with "_INBOX"), and
// of the tenants' inboxes only its own. The server checks no permission on
// a request's reply subject, and the stages' user may publish anywhere: a
// reply sent where the requester names would let a tenant put its
// messages on another tenant's subjects, or on the JetStream API.
//
// A request that came through a tenant's account import has a reply the
// server made ("_R_."), which routes the answer back to that account
// only, and which no client may name as its reply (nats-server refuses a
// client's publish with one, as a reserved reply): it is allowed too.
func (s Space) ReplyAllowed(tenant, reply string) bool {
	if strings.HasPrefix(reply, "_R_.") {
		return true
	}
	if !strings.HasPrefix(reply, "_INBOX") {
		return false
	}
	if strings.HasPrefix(reply, "_INBOX_"+s.prefix+".") {
		return strings.HasPrefix(reply, s.Inbox(tenant)+".")
	}
	return true
}

// MsgGet is the JetStream API subject of a stream's message get, which
// its leader answers (a direct get may come from a replica behind it).
func (s Space) MsgGet(stream string) string { return jsAPI + "STREAM.MSG.GET." + stream }
