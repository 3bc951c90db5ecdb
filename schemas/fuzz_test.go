package schemas

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// FuzzDecode feeds Decode arbitrary bodies, types and ce-seq values under a
// fixed set of otherwise valid headers. Decode must never panic, must report
// every failure as a *FieldError, and whatever it accepts must survive a
// msgpack round trip unchanged.
func FuzzDecode(f *testing.F) {
	for _, ct := range []string{ContentMsgpack, ContentJSON} {
		for typ, data := range samples() {
			h, body, err := Encode(Meta{Source: "s", Seq: callSeq(data), ContentType: ct}, data)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(typ, h.Get(hdrSeq), ct == ContentJSON, body)
		}
	}
	f.Add(TypeToolUse, "0", false, []byte("\x84\xa3seq\x00\xabtool_use_id\xa1t\xa8complete\xc3\xa5input\xdd\xff\xff\xff\xff"))
	f.Add(TypeToolUse, "0", false, []byte("\x83\xa3seq\x00\xabtool_use_id\xa1t\xa5input\x81\xa1a\x92\x01\xc0"))
	f.Add(TypeTurnEnd, "", true, []byte(`{"calls":1} x`))
	f.Add(TypeToolUse, "", true, []byte(`{"seq":1000000000,"tool_use_id":"t","name":"Noop","input":{},"complete":true}`))
	f.Add(TypeTurnEnd, "", true, []byte(`{"calls":1000000000}`))
	f.Add(TypeToolUse, "99999999999", false, []byte{0x80})
	f.Add("dev.toolwire.nope.v1", "x", false, []byte{0xc0})

	f.Fuzz(func(t *testing.T, typ, seq string, asJSON bool, body []byte) {
		ct := ContentMsgpack
		if asJSON {
			ct = ContentJSON
		}
		h := headers(typ, ct)
		h[hdrSeq] = []string{seq}
		meta, data, err := Decode(h, body)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error is not a *FieldError: %v", err)
			}
			if fe.Limit != "" && !strings.Contains(err.Error(), "limits."+fe.Limit) {
				t.Fatalf("a limit error does not name its limit: %v", err)
			}
			return
		}
		if err := DefaultLimits().Check(data); err != nil || meta.Seq >= DefaultMaxCallsPerTurn {
			t.Fatalf("accepted an event over the limits (%v, ce-seq %d): %+v", err, meta.Seq, data)
		}
		meta.ContentType = ContentMsgpack
		meta.Time = time.Unix(1, 0)
		h1, b1, err := Encode(meta, data)
		if err != nil {
			t.Fatalf("accepted %+v but cannot encode it: %v", data, err)
		}
		_, data2, err := Decode(h1, b1)
		if err != nil {
			t.Fatalf("cannot decode own encoding of %+v: %v", data, err)
		}
		_, b2, err := Encode(meta, data2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b1, b2) {
			t.Fatalf("msgpack round trip changed the data:\n% x\n% x", b1, b2)
		}
	})
}
