package schemas

import (
	"errors"
	"reflect"
	"testing"
	"time"
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
