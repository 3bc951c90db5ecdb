package schemas

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

func TestRoundTrip(t *testing.T) {
	for _, ct := range []string{ContentMsgpack, ContentJSON} {
		for _, typ := range sortedSampleTypes() {
			t.Run(ct+"/"+shortType(typ), func(t *testing.T) {
				data := samples()[typ]
				in := Meta{
					ID:          "evt 1/ü",
					Source:      "toolwire/adapter",
					Subject:     `turn 1 — "quoted" 100% ✓`,
					Time:        time.Date(2025, 5, 1, 14, 0, 0, 123456789, time.FixedZone("CEST", 2*3600)),
					Tenant:      "acme corp/ü",
					Turn:        "turn 42\tβ",
					Seq:         callSeq(data),
					TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
					TraceState:  "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7",
					ContentType: ct,
				}
				h, body, err := Encode(in, data)
				if err != nil {
					t.Fatalf("Encode: %v", err)
				}
				for k, vs := range h {
					for _, v := range vs {
						if !printableASCII(v) {
							t.Errorf("header %s = %q: want only U+0021–U+007E", k, v)
						}
					}
				}
				if got := h.Get(hdrTenant); got != "acme%20corp/%C3%BC" {
					t.Errorf("ce-tenant = %q, want acme%%20corp/%%C3%%BC", got)
				}

				out, got, err := Decode(h, body)
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				if !reflect.DeepEqual(utc(got), utc(data)) {
					t.Errorf("data:\n got %#v\nwant %#v", got, data)
				}
				want := in
				want.Type = typ
				if !out.Time.Equal(in.Time) {
					t.Errorf("Time = %v, want %v", out.Time, in.Time)
				}
				out.Time, want.Time = time.Time{}, time.Time{}
				if out != want {
					t.Errorf("meta:\n got %+v\nwant %+v", out, want)
				}
			})
		}
	}
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7E {
			return false
		}
	}
	return s != ""
}

func TestEncodeFillsDefaults(t *testing.T) {
	before := time.Now()
	h, body, err := Encode(Meta{Source: "test", Seq: -1}, &TurnDone{Results: 1})
	if err != nil {
		t.Fatal(err)
	}
	meta, _, err := Decode(h, body)
	if err != nil {
		t.Fatal(err)
	}
	if meta.ID == "" || meta.ContentType != ContentMsgpack || meta.Time.Before(before) {
		t.Errorf("defaults not filled: %+v", meta)
	}
	if _, ok := h[hdrSeq]; ok {
		t.Errorf("turn-level event has ce-seq %q", h.Get(hdrSeq))
	}
}

func TestEncodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		meta  Meta
		data  Data
		field string
	}{
		{"invalid data", Meta{Source: "s"}, &ToolUse{Seq: 0}, "tool_use_id"},
		{"no source", Meta{}, &TurnDone{}, hdrSource},
		{"content type", Meta{Source: "s", ContentType: "text/plain"}, &TurnDone{}, hdrContentType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Encode(tc.meta, tc.data)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("Encode error = %v, want a *FieldError for %s", err, tc.field)
			}
		})
	}
}

// Producers in other languages often qualify the media type.
func TestDecodeContentTypeParameters(t *testing.T) {
	for _, ct := range []string{"application/json; charset=utf-8", "Application/JSON"} {
		meta, d, err := Decode(headers(TypeTurnDone, ct), []byte(`{"results":2}`))
		if err != nil {
			t.Fatalf("%q: %v", ct, err)
		}
		if meta.ContentType != ContentJSON || d.(*TurnDone).Results != 2 {
			t.Errorf("%q: got %+v %+v", ct, meta, d)
		}
	}
}

func TestDecodeWithoutContentTypeIsMsgpack(t *testing.T) {
	h, body, err := Encode(Meta{Source: "s", Seq: -1}, &TurnEnd{Calls: 2})
	if err != nil {
		t.Fatal(err)
	}
	h.Del(hdrContentType)
	meta, d, err := Decode(h, body)
	if err != nil {
		t.Fatal(err)
	}
	if meta.ContentType != ContentMsgpack || d.(*TurnEnd).Calls != 2 {
		t.Errorf("got %+v %+v", meta, d)
	}
}

// TestUseTime: ce-usetime round-trips, is left out when zero, and a bad
// value is ignored rather than refusing the event.
func TestUseTime(t *testing.T) {
	used := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)
	h, body, err := Encode(Meta{Source: "/t", Tenant: "a", Turn: "t", Seq: 0, UseTime: used}, &TurnCancel{})
	if err != nil {
		t.Fatal(err)
	}
	meta, _, err := Decode(h, body)
	if err != nil || !meta.UseTime.Equal(used) || !UseTimeOf(h).Equal(used) {
		t.Fatalf("round trip: %v %v %v", meta.UseTime, UseTimeOf(h), err)
	}
	h.Set("ce-usetime", "yesterday")
	if meta, _, err := Decode(h, body); err != nil || !meta.UseTime.IsZero() || !UseTimeOf(h).IsZero() {
		t.Errorf("a bad ce-usetime: %v %v", meta.UseTime, err)
	}
	h2, _, _ := Encode(Meta{Source: "/t", Tenant: "a", Turn: "t", Seq: 0}, &TurnCancel{})
	if _, ok := h2["ce-usetime"]; ok {
		t.Error("a zero use time is encoded")
	}
}

// TestTurnDone: a result marked as its turn's last reads as the result and
// the turn's completion; the mark is refused on another event or with a
// count that does not end at the result, and OutHeaders sets or drops it.
func TestTurnDone(t *testing.T) {
	res := &ToolResult{Seq: 2, ToolUseID: "toolu_2", Name: "Noop", Content: "ok", StartedAt: time.Now().UTC(), FinishedAt: time.Now().UTC()}
	h, body, err := Encode(Meta{Source: "/t", Tenant: "a", Turn: "t", Seq: 2, TurnDone: 3}, res)
	if err != nil {
		t.Fatal(err)
	}
	meta, d, err := Decode(h, body)
	if err != nil || meta.TurnDone != 3 || TurnDoneOf(h) != 3 {
		t.Fatalf("round trip: %+v %v", meta, err)
	}
	if done := DoneOf(meta, d); done == nil || done.Results != 3 {
		t.Errorf("DoneOf a marked result: %+v", done)
	}
	plain := OutHeaders(h, 0)
	if TurnDoneOf(plain) != 0 {
		t.Error("OutHeaders(h, 0) kept the mark")
	}
	if meta, d, err := Decode(plain, body); err != nil || DoneOf(meta, d) != nil {
		t.Errorf("an unmarked result ends its turn: %v", err)
	}
	if TurnDoneOf(OutHeaders(plain, 3)) != 3 {
		t.Error("OutHeaders(h, 3) did not mark")
	}
	for _, v := range []string{"2", "4", "0", "-1", "three"} {
		bad := OutHeaders(h, 0)
		bad[hdrTurnDone] = []string{v}
		if _, _, err := Decode(bad, body); err == nil || !strings.Contains(err.Error(), hdrTurnDone) {
			t.Errorf("ce-turndone %q on result 2: %v", v, err)
		}
	}
	eh, ebody, err := Encode(Meta{Source: "/t", Tenant: "a", Turn: "t", Seq: -1}, &TurnDone{Results: 3})
	if err != nil {
		t.Fatal(err)
	}
	eh[hdrTurnDone] = []string{"3"}
	if _, _, err := Decode(eh, ebody); err == nil || !strings.Contains(err.Error(), "only a") {
		t.Errorf("ce-turndone on a turn_done: %v", err)
	}
	if done := DoneOf(Meta{}, &TurnDone{Results: 1}); done == nil || done.Results != 1 {
		t.Errorf("DoneOf a turn_done: %+v", done)
	}
}

// TestCopiedFrom: a message that names, in Nats-Subject, a subject the one
// it was found on does not cover is a copy; one that names none, or the
// subject itself, is not.
func TestCopiedFrom(t *testing.T) {
	for _, c := range []struct {
		found  string
		named  []string
		copied bool
	}{
		{"tw.b.out.t", nil, false},
		{"tw.b.out.t", []string{"tw.b.out.t"}, false},
		{"tw.b.out.t", []string{"tw.a.out.t"}, true},
		{"tw.b.out.t", []string{"tw.b.out.t", "tw.a.out.t"}, true},
		{"tw.b.approval.t.*.request", []string{"tw.b.approval.t.3.request"}, false},
		{"tw.b.approval.t.*.request", []string{"tw.a.approval.t.3.request"}, true},
		{"tw.b.approval.t.>", []string{"tw.b.approval.t.3.decision"}, false},
		{"tw.b.approval.t.>", []string{"tw.b.approval.t"}, true},
		{"tw.b.out.t", []string{"tw.b.out.t.x"}, true},
		{"tw.b.out.t", []string{"tw.b.out"}, true},
	} {
		h := nats.Header{}
		for _, v := range c.named {
			h.Add("Nats-Subject", v)
		}
		if _, got := CopiedFrom(h, c.found); got != c.copied {
			t.Errorf("CopiedFrom(%v, %s) = %v, want %v", c.named, c.found, got, c.copied)
		}
	}
}
