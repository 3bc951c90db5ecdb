package gemini

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func FuzzParse(f *testing.F) {
	if names, err := filepath.Glob(filepath.Join(fixtureDir, "gemini*")); err == nil {
		for _, name := range names {
			f.Add(loadFixture(f, filepath.Base(name)))
		}
	}
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
		want := parse(t, bytes.NewReader(data))
		for _, c := range want.Calls {
			if c.At < 0 || c.At > int64(len(data)) {
				t.Fatalf("call %d At %d outside the input of %d bytes", c.Seq, c.At, len(data))
			}
			if c.Complete {
				var obj map[string]any
				if err := json.Unmarshal(c.Input, &obj); err != nil || obj == nil {
					t.Fatalf("complete call %d has Input %q that is not a JSON object: %v", c.Seq, c.Input, err)
				}
				if c.Name == "" {
					t.Fatalf("complete call %d has no name", c.Seq)
				}
			}
			if !c.Complete && !strings.HasPrefix(c.Err, "tool call") {
				t.Fatalf("incomplete call %d has Err %q", c.Seq, c.Err)
			}
		}
		if got := parse(t, iotest.OneByteReader(bytes.NewReader(data))); !reflect.DeepEqual(got, want) {
			t.Fatalf("one byte at a time:\n got %+v\nwant %+v", got, want)
		}
	})
}

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
	names, err := filepath.Glob(filepath.Join(fixtureDir, "gemini*"))
	if err != nil || len(names) == 0 {
		if _, statErr := os.Stat(fixtureDir); statErr != nil {
			t.Skipf("fixtures folder %s not found: %v", fixtureDir, statErr)
		}
		t.Fatalf("no gemini fixtures in %s (err %v)", fixtureDir, err)
	}
}
