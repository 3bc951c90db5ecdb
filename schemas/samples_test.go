package schemas

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

var (
	t0 = time.Date(2025, 5, 1, 12, 0, 0, 250_000_000, time.UTC)
	t1 = t0.Add(61 * time.Millisecond)
)

// samples returns one valid payload of every event type, keyed by type, with
// the awkward values the codecs must carry: non-ASCII text, an integer
// beyond float64 precision in the input, empty strings where allowed.
func samples() map[string]Data {
	input := RawJSON(`{"command":"echo 'héllo wörld' ✓","n":9007199254740993,"f":1.50}`)
	return map[string]Data{
		TypeToolUse:     &ToolUse{Seq: 3, ToolUseID: "toolu_01A", Name: "Bash", Input: input, Complete: true, MaxConcurrency: 4},
		TypeTurnEnd:     &TurnEnd{Calls: 4, StopReason: "tool_use"},
		TypeTurnCancel:  &TurnCancel{Reason: "user pressed Esc — ¡basta!"},
		TypeTurnDiscard: &TurnDiscard{Reason: "overloaded_error"},
		TypeDispatch:    &Dispatch{Seq: 3, ToolUseID: "toolu_01A", Tool: "Bash", Input: input, Pool: "default", Repaired: true},
		TypeToolResult: &ToolResult{
			Seq: 3, ToolUseID: "toolu_01A", Name: "Bash", Content: "héllo wörld ✓\n", Truncated: true,
			BlobRef: "tw-blobs/acme/turn-1/3", StartedAt: t0, FinishedAt: t1, Worker: "exec-7f3a",
			Attempt: 2, Safe: true, ContextVersion: 7,
		},
		TypeToolProgress: &ToolProgress{Seq: 3, Text: "40 of 120 MB"},
		TypeTurnDone:     &TurnDone{Results: 4},
		TypeApprovalRequest: &ApprovalRequest{Seq: 3, ToolUseID: "toolu_01A", Tool: "Bash", Input: input,
			Reason: "rule Bash(git push:*) asks"},
		TypeApprovalDecision: &ApprovalDecision{Seq: 3, Allow: false, Reason: "not on a Friday — ¡no!"},
	}
}

// sortedSampleTypes returns the keys of samples() in order, for stable test names.
func sortedSampleTypes() []string { return slices.Sorted(maps.Keys(samples())) }

// callSeq returns the seq of per-call payloads and -1 for turn-level ones,
// which is what Meta.Seq (the ce-seq header) carries.
func callSeq(d Data) int {
	switch d := d.(type) {
	case *ToolUse:
		return d.Seq
	case *Dispatch:
		return d.Seq
	case *ToolResult:
		return d.Seq
	case *ToolProgress:
		return d.Seq
	}
	return -1
}

// utc returns d with its times in UTC: msgpack restores an instant in the
// local zone, and the instant is what the contract promises.
func utc(d Data) Data {
	if r, ok := d.(*ToolResult); ok {
		c := *r
		c.StartedAt, c.FinishedAt = c.StartedAt.UTC(), c.FinishedAt.UTC()
		return &c
	}
	return d
}

// headers returns valid ce-* headers for an event of type typ with data of
// content type ct, as a producer in another language would write them.
func headers(typ, ct string) nats.Header {
	return nats.Header{
		hdrSpecVersion: {"1.0"},
		hdrID:          {"evt-1"},
		hdrSource:      {"test/producer"},
		hdrType:        {typ},
		hdrTime:        {"2025-05-01T12:00:00.25Z"},
		hdrContentType: {ct},
		hdrTenant:      {"acme"},
		hdrTurn:        {"turn-1"},
	}
}

// shortType is the file-name part of a type: dev.toolwire.tool_use.v1 → tool_use.v1.
func shortType(typ string) string { return strings.TrimPrefix(typ, "dev.toolwire.") }
