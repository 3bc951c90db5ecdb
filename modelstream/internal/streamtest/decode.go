package streamtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/modelstream/internal/jsonwire"
	"github.com/toolwire/toolwire/modelstream/sse"
)

// Canonical re-encodes the valid JSON value raw through encoding/json,
// sorting keys, so that a decoder's raw value compares with a reference
// built from generic values.
func Canonical(t testing.TB, raw []byte) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("Canonical(%q): %v", raw, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("Canonical(%q): %v", raw, err)
	}
	return string(out)
}

// ReferenceValue decodes data with encoding/json into an any, numbers as
// json.Number. err is encoding/json's error, if any; ok is false when data
// holds duplicate keys, which encoding/json and a decoder may merge
// differently.
func ReferenceValue(t *testing.T, data []byte) (v any, err error, ok bool) {
	t.Helper()
	var check any
	if err := json.Unmarshal(data, &check); err != nil {
		// Unmarshal checks the syntax before it decodes, so a type error
		// (a number beyond float64, like 1e700) is valid JSON, which the
		// decoders keep as text: compare below, numbers as json.Number.
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return nil, err, true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%q: Unmarshal accepts it, Decoder says %v", data, err)
	}
	if HasDuplicateKeys(data) {
		return v, nil, false
	}
	return v, nil, true
}

// HasDuplicateKeys reports whether any object in the valid JSON data repeats a key.
func HasDuplicateKeys(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		keys     map[string]bool
		isObject bool
		wantKey  bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{', '[':
				if top != nil && top.isObject {
					top.wantKey = true
				}
				stack = append(stack, &frame{keys: map[string]bool{}, isObject: tok == '{', wantKey: true})
			default:
				stack = stack[:len(stack)-1]
			}
		default:
			if top != nil && top.isObject {
				if top.wantKey {
					k := tok.(string)
					if top.keys[k] {
						return true
					}
					top.keys[k] = true
					top.wantKey = false
				} else {
					top.wantKey = true
				}
			}
		}
	}
}

// CompareSyntaxErrors compares a decoder's err for data with encoding/json's
// refErr as far as syntax goes. When refErr is a syntax error, err must be
// one at the same offset with the same message, and it reports true: there
// is nothing more to compare. Otherwise err must not be a syntax error.
func CompareSyntaxErrors(t *testing.T, data []byte, err, refErr error) bool {
	t.Helper()
	var se *jsonwire.SyntaxError
	var refSE *json.SyntaxError
	if errors.As(refErr, &refSE) {
		if !errors.As(err, &se) {
			t.Fatalf("%q: encoding/json says %v, decoder says %v", data, refErr, err)
		}
		// At the end of the input encoding/json words some errors as if a
		// space followed; only the offset is compared there.
		atEnd := refSE.Offset == int64(len(data))
		if se.Offset != refSE.Offset || !atEnd && se.Msg != refSE.Error() {
			t.Fatalf("%q: syntax error %q at %d, encoding/json has %q at %d", data, se.Msg, se.Offset, refSE.Error(), refSE.Offset)
		}
		return true
	}
	if errors.As(err, &se) {
		t.Fatalf("%q: decoder says %v, encoding/json accepts it", data, err)
	}
	return false
}

// CompareWithReference compares a decoder's result for data, its err and
// the normal form got returns, with a reference's from encoding/json: ref,
// whether it found a wrong-typed value (refShape), its error refErr, and ok,
// false when the values are not to be compared (see ReferenceValue). A
// syntax error must match (see CompareSyntaxErrors), a wrong-typed value
// must give a jsonwire.ShapeError, and the normal forms must be equal.
func CompareWithReference[N any](t *testing.T, data []byte, err error, got func() N, ref N, refShape bool, refErr error, ok bool) {
	t.Helper()
	if CompareSyntaxErrors(t, data, err, refErr) {
		return
	}
	if refErr != nil {
		t.Fatalf("%q: encoding/json: %v", data, refErr)
	}
	if !ok {
		return
	}
	var shape *jsonwire.ShapeError
	if errors.As(err, &shape) != refShape {
		t.Fatalf("%q: decoder error %v, reference finds a wrong-typed value: %v", data, err, refShape)
	}
	if g := got(); !reflect.DeepEqual(g, ref) {
		t.Fatalf("%q:\n decoder   %+v\n reference %+v", data, g, ref)
	}
}

// JSONSyntaxSeeds are inputs every decoder must reject or accept as
// encoding/json does, whatever the format: broken syntax, values that are
// not objects, and nesting at and past encoding/json's depth limit.
var JSONSyntaxSeeds = []string{
	`[1,2]`, `"x"`, `null`, `5`,
	``, ` `, `{`, `{"a"`, `{"a":`, `{"a":1`, `{"a":1,}`, `{,}`, `{"a" 1}`, `[1,]`, `{"a":tru}`, `{"a":nul}`,
	`{"a":-}`, `{"a":01}`, `{"a":1.}`, `{"a":1e}`, `{"a":1e+}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}",
	`{} x`, `{}}`, `{"a":"unterminated`, `{"a":'x'}`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
}

// FixtureEvents returns the data of every SSE event of the fixtures in dir
// matching pattern.
func FixtureEvents(t testing.TB, dir, pattern string) [][]byte {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, pattern))
	var out [][]byte
	for _, n := range names {
		evs, err := sse.Events(bytes.NewReader(LoadFixture(t, dir, filepath.Base(n))))
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		for _, ev := range evs {
			out = append(out, ev.Data)
		}
	}
	return out
}

// DecoderInputs is seeds, then when pattern is not empty the data of every
// SSE event of the fixtures in dir matching it (see FixtureEvents): the
// inputs a decoder is compared with encoding/json on, and fuzzed from.
func DecoderInputs(t testing.TB, seeds []string, dir, pattern string) [][]byte {
	t.Helper()
	var out [][]byte
	for _, s := range seeds {
		out = append(out, []byte(s))
	}
	if pattern != "" {
		out = append(out, FixtureEvents(t, dir, pattern)...)
	}
	return out
}

// CheckParseInput checks a format's parseInput, whose errors call the text
// the tool's what ("arguments" with verb "are", "input" with "is"): blank
// text is an empty object, other text must be one JSON object, compacted.
func CheckParseInput(t *testing.T, parseInput func([]byte) (json.RawMessage, error), what, verb string) {
	t.Helper()
	subject := "tool " + what + " " + verb
	notJSON := subject + " not valid JSON: "
	tests := []struct{ in, want, err string }{
		{"", "{}", ""},
		{" \n\t", "{}", ""},
		{` {"a": [1, "b c"]} `, `{"a":[1,"b c"]}`, ""},
		{`  {"a":}`, "", notJSON + "invalid character '}' looking for beginning of value (after 8 bytes of the " + what + ")"},
		{`{} {}`, "", notJSON + "invalid character '{' after top-level value (after 4 bytes of the " + what + ")"},
		{`{"a":1`, "", notJSON + "unexpected end of JSON input (after 6 bytes of the " + what + ")"},
		{`"x"`, "", subject + " a JSON string, not an object"},
		{` null`, "", subject + " a JSON null, not an object"},
		{`12`, "", subject + " a JSON number, not an object"},
	}
	for _, tt := range tests {
		got, err := parseInput([]byte(tt.in))
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("parseInput(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("parseInput(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}
