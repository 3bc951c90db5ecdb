package gemini

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
)

func FuzzParse(f *testing.F) {
	streamtest.AddFixtureSeeds(f, fixtureDir, "gemini*")
	for _, events := range [][]string{
		{chunk(opener("f")), partial(true, pstr("$.a[0].b", "x", true)), partial(false, pstr("$.a[0].b", "y", false)), stop},
		{chunk(call("f", `{"a":1}`), call("g", "")), overload},
		{chunk(opener("f")), partial(true, pval("$['k'][1]", "numberValue", "2")), "raw:{\"error\":{\"code\":500}}"},
		{"data:" + stop + "\r\r: c\r\n", "event: error\ndata: x\n\n"},
	} {
		data, _ := frame(events)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		streamtest.CheckFuzzInput(t, parse, data, fuzzChecks)
	})
}

// fuzzChecks are this format's checks of any input.
var fuzzChecks = streamtest.FuzzChecks{Named: true, ErrOK: func(err string) bool { return strings.HasPrefix(err, "tool call") }}

// FuzzPartialArgs applies paths and values from the fuzzer to one tree: it
// must never panic, and what it renders must be valid JSON.
func FuzzPartialArgs(f *testing.F) {
	f.Add("$.a.b[0]", "x", "$['c'][1]", "2", true)
	f.Add("$.a", "x", "$.a.b", "y", false)
	f.Add(`$["\u00e9"][0][0]`, "", "$[0]", "-1e5", true)
	f.Fuzz(func(t *testing.T, p1, v1, p2, v2 string, more bool) {
		b := &callBuilder{name: "f"}
		b.startTree()
		sv := v1
		b.applyPartial([]wirePartialArg{
			{JSONPath: p1, StringValue: &sv, WillContinue: more},
			{JSONPath: p2, NumberValue: json.RawMessage(v2)},
			{JSONPath: p1, StringValue: &sv},
			{JSONPath: p2, NullValue: json.RawMessage("null")},
		})
		c := b.complete("r", 0)
		if !json.Valid([]byte(c.RawInput)) {
			t.Fatalf("rendered args %q are not valid JSON", c.RawInput)
		}
		if c.Complete && !bytes.HasPrefix(c.Input, []byte("{")) {
			t.Fatalf("complete input %s is not an object", c.Input)
		}
	})
}

// TestFuzzSeedsExist makes sure the fuzz seeds are not silently empty.
func TestFuzzSeedsExist(t *testing.T) {
	streamtest.CheckFuzzSeedsExist(t, fixtureDir, "gemini*", "gemini")
}
