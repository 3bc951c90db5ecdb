// Package subjects is the only place that builds or parses NATS subject
// names, stream, consumer and bucket names, KV keys and message ids.
//
// Every subject carries the tenant, so one NATS account can host many tenants
// and a deployment can grant or filter by tenant with plain subject wildcards.
package subjects

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// DefaultPrefix is the first token of every subject unless configured.
const DefaultPrefix = "tw"

// DefaultTenant is the tenant of calls that name none.
const DefaultTenant = "default"

// DefaultPool is the executor pool that hosts the built-in tools.
const DefaultPool = "default"

// Kinds of input events, the last token of an input subject.
const (
	KindUse     = "use"
	KindEnd     = "end"
	KindCancel  = "cancel"
	KindDiscard = "discard"
)

// Stage names, used for consumers and dead-letter subjects.
const (
	StageRouter   = "router"
	StageExecutor = "executor"
	StageReorder  = "reorder"
)

// resultEndToken is the token that stands for the turn-end marker in the
// result stream, where other messages carry a sequence number.
const resultEndToken = "end"

// ErrBadToken is returned for a tenant, turn or pool that cannot be a subject token.
var ErrBadToken = errors.New("subjects: invalid token")

// ErrBadSubject is returned by the parsers for a subject of the wrong shape.
var ErrBadSubject = errors.New("subjects: unexpected subject")

// CheckToken reports whether s can be one subject token (and a KV key part):
// non-empty, at most 128 bytes, only letters, digits, '-' and '_'.
func CheckToken(what, s string) error {
	if s == "" {
		return fmt.Errorf("%w: %s is empty", ErrBadToken, what)
	}
	if len(s) > 128 {
		return fmt.Errorf("%w: %s is longer than 128 bytes", ErrBadToken, what)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("%w: %s %q has %q at byte %d (allowed: letters, digits, '-', '_')", ErrBadToken, what, s, c, i)
		}
	}
	return nil
}

// Space names everything under one prefix. The zero value is not usable; use New.
type Space struct {
	prefix string
	upper  string
}

// New returns the name space for prefix (DefaultPrefix when empty).
func New(prefix string) (Space, error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if err := CheckToken("prefix", prefix); err != nil {
		return Space{}, err
	}
	return Space{prefix: prefix, upper: strings.ToUpper(prefix)}, nil
}

// Default is the name space with DefaultPrefix.
func Default() Space {
	return Space{prefix: DefaultPrefix, upper: strings.ToUpper(DefaultPrefix)}
}

// Prefix is the first token of every subject.
func (s Space) Prefix() string { return s.prefix }

// ErrZeroSpace is the error of a configuration that left its Space unset.
var ErrZeroSpace = errors.New("subjects: the Space is the zero value; use subjects.Default() or subjects.New(prefix)")

// Check reports whether the space is usable: the zero value is not.
func (s Space) Check() error {
	if s.prefix == "" {
		return ErrZeroSpace
	}
	return nil
}

// Stream names.

// InStream holds tool_use, turn_end, turn_cancel and turn_discard events.
func (s Space) InStream() string { return s.upper + "_IN" }

// ExecStream is the work queue of routed calls.
func (s Space) ExecStream() string { return s.upper + "_EXEC" }

// ResultStream holds one result per call and the turn-end marker.
func (s Space) ResultStream() string { return s.upper + "_RESULT" }

// OutStream holds each turn's results in call order, then turn_done (or
// the last result marked as the turn's end).
func (s Space) OutStream() string { return s.upper + "_OUT" }

// ApprovalStream keeps approval requests and decisions.
func (s Space) ApprovalStream() string { return s.upper + "_APPROVAL" }

// DLQStream keeps poison messages with their reason.
func (s Space) DLQStream() string { return s.upper + "_DLQ" }

// LeaseBucket is the KV bucket of per-turn leases.
func (s Space) LeaseBucket() string { return s.upper + "_LEASE" }

// LeaseStream is the stream JetStream keeps the lease bucket in.
func (s Space) LeaseStream() string { return "KV_" + s.LeaseBucket() }

// ToolsBucket is the KV bucket of advertised tools.
func (s Space) ToolsBucket() string { return s.upper + "_TOOLS" }

// BlobBucket is the object store of oversize results.
func (s Space) BlobBucket() string { return s.upper + "_BLOBS" }

// Consumer names.

// RouterConsumer is the durable consumer shared by all routers.
func (s Space) RouterConsumer() string { return "router" }

// ExecConsumer is the durable consumer shared by a pool's executors.
func (s Space) ExecConsumer(pool string) string { return "exec-" + pool }

// ReorderConsumer is the durable consumer shared by reorder instances.
func (s Space) ReorderConsumer() string { return "reorder" }

// Subjects.

// In is the subject of an input event of kind for a turn.
func (s Space) In(tenant, turn, kind string) string {
	return s.prefix + "." + tenant + ".in." + turn + "." + kind
}

// InAll matches every input subject of every tenant.
func (s Space) InAll() string { return s.prefix + ".*.in.*.*" }

// Exec is the subject of a routed call for pool.
func (s Space) Exec(tenant, pool, turn string) string {
	return s.prefix + "." + tenant + ".exec." + pool + "." + turn
}

// ExecAll matches every routed call of every pool.
func (s Space) ExecAll() string { return s.prefix + ".*.exec.*.*" }

// ExecPool matches the routed calls of one pool.
func (s Space) ExecPool(pool string) string { return s.prefix + ".*.exec." + pool + ".*" }

// Result is the subject of call seq's result.
func (s Space) Result(tenant, turn string, seq int) string {
	return s.prefix + "." + tenant + ".result." + turn + "." + strconv.Itoa(seq)
}

// ResultEnd is the subject of the turn-end marker in the result stream.
func (s Space) ResultEnd(tenant, turn string) string {
	return s.prefix + "." + tenant + ".result." + turn + "." + resultEndToken
}

// TurnResults matches every subject of one turn in the result stream: its
// calls' results and its end marker.
func (s Space) TurnResults(tenant, turn string) string {
	return s.prefix + "." + tenant + ".result." + turn + ".*"
}

// ResultAll matches every result subject.
func (s Space) ResultAll() string { return s.prefix + ".*.result.*.*" }

// Out is the subject the agent reads a turn's ordered results from.
func (s Space) Out(tenant, turn string) string { return s.prefix + "." + tenant + ".out." + turn }

// Unbound is the only subject of interest stream stream while it is being
// made, before its consumer exists: nothing publishes on it, so every
// event is refused (no stream answers) until the stream takes its real
// subjects, rather than stored and dropped for want of a consumer.
func (s Space) Unbound(stream string) string { return s.prefix + "._unbound." + stream }

// OutAll matches every out subject.
func (s Space) OutAll() string { return s.prefix + ".*.out.*" }

// Progress is the subject of a turn's progress events (core NATS, best effort).
func (s Space) Progress(tenant, turn string) string {
	return s.prefix + "." + tenant + ".progress." + turn
}

// ApprovalRequest is where the executor asks about call seq.
func (s Space) ApprovalRequest(tenant, turn string, seq int) string {
	return s.prefix + "." + tenant + ".approval." + turn + "." + strconv.Itoa(seq) + ".request"
}

// ApprovalDecision is where the answer about call seq goes.
func (s Space) ApprovalDecision(tenant, turn string, seq int) string {
	return s.prefix + "." + tenant + ".approval." + turn + "." + strconv.Itoa(seq) + ".decision"
}

// ApprovalRequests matches the approval requests of a turn.
func (s Space) ApprovalRequests(tenant, turn string) string {
	return s.prefix + "." + tenant + ".approval." + turn + ".*.request"
}

// ApprovalAll matches every approval subject.
func (s Space) ApprovalAll() string { return s.prefix + ".*.approval.*.*.*" }

// DLQ is the dead-letter subject of a stage.
func (s Space) DLQ(tenant, stage string) string { return s.prefix + "." + tenant + ".dlq." + stage }

// DLQAll matches every dead-letter subject.
func (s Space) DLQAll() string { return s.prefix + ".*.dlq.*" }

// LeaseKey is the KV key of a turn's lease.
func (s Space) LeaseKey(tenant, turn string) string { return tenant + "." + turn }

// LeaseSubject is the subject under which the KV stores a turn's lease; a
// core subscription to it sees every update as it is written.
func (s Space) LeaseSubject(tenant, turn string) string {
	return "$KV." + s.LeaseBucket() + "." + s.LeaseKey(tenant, turn)
}

// LeaseChanges is where the lease bucket republishes every stored write
// of a turn's lease, with its revision in the Nats-Sequence header. Unlike
// LeaseSubject, a message here comes after the write is stored and only
// for a write that was: a watcher learns the lease and its revision
// without reading them back.
func (s Space) LeaseChanges(tenant, turn string) string {
	return s.leaseChangesPrefix() + s.LeaseKey(tenant, turn)
}

// LeaseChangesSource and LeaseChangesDestination are the lease bucket's
// republish mapping: every key's subject to LeaseChanges. The destination's
// first token is not the prefix, so no stream of the space captures it.
func (s Space) LeaseChangesSource() string { return "$KV." + s.LeaseBucket() + ".>" }

// LeaseChangesDestination is the republish destination of LeaseChangesSource.
func (s Space) LeaseChangesDestination() string { return s.leaseChangesPrefix() + ">" }

func (s Space) leaseChangesPrefix() string { return s.prefix + "_lease." }

// ToolKey is the TW_TOOLS key under which a worker advertises a tool of
// its pool. One key per worker: a worker that stops removes only its own
// advertisement, and the tool stays routed while any worker lives.
func (s Space) ToolKey(pool, tool, worker string) string {
	return pool + "." + tokenSafe(tool) + "." + tokenSafe(worker)
}

// ToolsStream is the stream JetStream keeps the tools bucket in.
func (s Space) ToolsStream() string { return "KV_" + s.ToolsBucket() }

// ToolSubjects is the subject filter of every advertisement of a tool, in
// any pool and by any worker.
func (s Space) ToolSubjects(tool string) string {
	return s.ToolSubjectPrefix() + "*." + tokenSafe(tool) + ".*"
}

// ToolSubjectPrefix is what precedes a key in a tool advertisement's subject.
func (s Space) ToolSubjectPrefix() string { return "$KV." + s.ToolsBucket() + "." }

// ToolSubject is the subject a tool advertisement is stored under.
func (s Space) ToolSubject(pool, tool, worker string) string {
	return s.ToolSubjectPrefix() + s.ToolKey(pool, tool, worker)
}

// tokenSafe maps s to a single token, replacing what a token cannot hold.
func tokenSafe(s string) string {
	if CheckToken("name", s) == nil {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// Parsed is what a subject says about the message it carries.
type Parsed struct {
	Tenant string
	Turn   string
	// Kind is the input kind (In subjects), "end" for the result end
	// marker, or the stage that gave up (DLQ subjects).
	Kind string
	// Pool is set for Exec subjects.
	Pool string
	// Seq is the call's seq for Result subjects, -1 otherwise.
	Seq int
}

// ParseIn parses an input subject.
func (s Space) ParseIn(subject string) (Parsed, error) {
	t := strings.Split(subject, ".")
	if len(t) != 5 || t[0] != s.prefix || t[2] != "in" {
		return Parsed{}, fmt.Errorf("%w: %q is not %s.<tenant>.in.<turn>.<kind>", ErrBadSubject, subject, s.prefix)
	}
	switch t[4] {
	case KindUse, KindEnd, KindCancel, KindDiscard:
	default:
		return Parsed{}, fmt.Errorf("%w: %q has unknown kind %q", ErrBadSubject, subject, t[4])
	}
	return Parsed{Tenant: t[1], Turn: t[3], Kind: t[4], Seq: -1}, nil
}

// ParseExec parses a routed-call subject.
func (s Space) ParseExec(subject string) (Parsed, error) {
	t := strings.Split(subject, ".")
	if len(t) != 5 || t[0] != s.prefix || t[2] != "exec" {
		return Parsed{}, fmt.Errorf("%w: %q is not %s.<tenant>.exec.<pool>.<turn>", ErrBadSubject, subject, s.prefix)
	}
	return Parsed{Tenant: t[1], Pool: t[3], Turn: t[4], Seq: -1}, nil
}

// ParseResult parses a result subject; Kind is "end" for the end marker.
func (s Space) ParseResult(subject string) (Parsed, error) {
	t := strings.Split(subject, ".")
	if len(t) != 5 || t[0] != s.prefix || t[2] != "result" {
		return Parsed{}, fmt.Errorf("%w: %q is not %s.<tenant>.result.<turn>.<seq>", ErrBadSubject, subject, s.prefix)
	}
	p := Parsed{Tenant: t[1], Turn: t[3], Seq: -1}
	if t[4] == resultEndToken {
		p.Kind = KindEnd
		return p, nil
	}
	seq, err := strconv.Atoi(t[4])
	if err != nil || seq < 0 {
		return Parsed{}, fmt.Errorf("%w: %q has a bad seq %q", ErrBadSubject, subject, t[4])
	}
	p.Seq = seq
	return p, nil
}

// ParseApproval parses an approval subject; Kind is "request" or
// "decision".
func (s Space) ParseApproval(subject string) (Parsed, error) {
	t := strings.Split(subject, ".")
	if len(t) != 6 || t[0] != s.prefix || t[2] != "approval" || (t[5] != "request" && t[5] != "decision") {
		return Parsed{}, fmt.Errorf("%w: %q is not %s.<tenant>.approval.<turn>.<seq>.request|decision", ErrBadSubject, subject, s.prefix)
	}
	seq, err := strconv.Atoi(t[4])
	if err != nil || seq < 0 {
		return Parsed{}, fmt.Errorf("%w: %q has a bad seq %q", ErrBadSubject, subject, t[4])
	}
	return Parsed{Tenant: t[1], Turn: t[3], Kind: t[5], Seq: seq}, nil
}

// ParseDLQ parses a dead-letter subject; Kind is the stage that gave up.
func (s Space) ParseDLQ(subject string) (Parsed, error) {
	t := strings.Split(subject, ".")
	if len(t) != 4 || t[0] != s.prefix || t[2] != "dlq" {
		return Parsed{}, fmt.Errorf("%w: %q is not %s.<tenant>.dlq.<stage>", ErrBadSubject, subject, s.prefix)
	}
	return Parsed{Tenant: t[1], Kind: t[3], Seq: -1}, nil
}

// BlobName is the object name of call seq's oversize result.
func (s Space) BlobName(tenant, turn string, seq int) string {
	return tenant + "/" + turn + "/" + strconv.Itoa(seq)
}

// Message ids for Nats-Msg-Id: a retried publish of the same thing carries
// the same id, so the server drops it inside the dedup window. What the
// stages publish carries none but dead letters: a repeated dispatch finds
// its call claimed or done in the lease, a result subject holds one
// message, and every out append expects the subject's last sequence; an id
// would only cost the server memory for the whole window
// (docs/jetstream.md, Retention).

// UseMsgID identifies a tool_use event.
func UseMsgID(tenant, turn string, seq int) string {
	return tenant + "/" + turn + "/" + strconv.Itoa(seq) + "/use"
}

// InMsgID identifies a turn-level input event (end, cancel, discard).
func InMsgID(tenant, turn, kind string) string { return tenant + "/" + turn + "/" + kind }

// DeadLetterMsgID identifies the dead letter of the message stored at seq
// in stream: a poison message delivered again (its stage died before it
// could terminate it) is dead-lettered once.
func DeadLetterMsgID(stream string, seq uint64) string {
	return "dlq/" + stream + "/" + strconv.FormatUint(seq, 10)
}

// ApprovalMsgID identifies a call's approval request or decision.
func ApprovalMsgID(tenant, turn string, seq int, kind string) string {
	return tenant + "/" + turn + "/" + strconv.Itoa(seq) + "/approval-" + kind
}
