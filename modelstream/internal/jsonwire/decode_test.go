package jsonwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// seeds are inputs for the scanner: well-formed values of every kind, the
// string escapes and invalid UTF-8 encoding/json replaces, and malformed
// inputs at every step of the grammar.
var seeds = []string{
	`{"a":"h\u00e9","b":[1,-2.5e3,{"x":null}],"c":true,"d":false}   `,
	`{"s":"\ud83d\ude00 \ud83d x \ude00 \ud83d\u0041 \/ \b\f\n\r\t"}`,
	"{\"s\":\"bad \xff utf8 \xed\xa0\x80 and \xc3\",\"\xff\":1}",
	`{"a":"x","a":"y"}`, `{"n":-0,"m":99999999999999999999,"f":1.0,"e":1E+2}`,
	`[1,2]`, `"x"`, `null`, `5`, `true`, `{}`, ` { } `, `{"a":[]}`, `{"a":{}}`,
	``, ` `, `{`, `{"a"`, `{"a":`, `{"a":1`, `{"a":1,}`, `{,}`, `{"a" 1}`, `[1,]`, `{"a":tru}`, `{"a":nul}`,
	`{"a":-}`, `{"a":01}`, `{"a":1.}`, `{"a":1e}`, `{"a":1e+}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}",
	`{} x`, `{}}`, `{"a":"unterminated`, `{"a":'x'}`, `{"a":1`, `{"a":-`, `{"a":"\`, `{"a":"\u`, `{"a":[1`, `{"a":[1 2]}`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
}

// value reads any value the way encoding/json decodes it into an any with
// UseNumber, with the Decoder's exported reading functions.
func value(d *Decoder) (any, error) {
	if d.Pos == len(d.Data) {
		return nil, d.EOF()
	}
	switch d.Data[d.Pos] {
	case '{':
		m := map[string]any{}
		err := d.Object(func(key []byte) error {
			v, err := value(d)
			m[string(key)] = v
			return err
		})
		return m, err
	case '[':
		a := []any{}
		err := d.ArrayField("array", func() error {
			v, err := value(d)
			a = append(a, v)
			return err
		})
		return a, err
	case '"':
		s, err := d.Str()
		return string(s), err
	}
	start := d.Pos
	if err := d.SkipValue(); err != nil {
		return nil, err
	}
	switch v := string(d.Data[start:d.Pos]); v {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "null":
		return nil, nil
	default:
		return json.Number(v), nil
	}
}

// compareWithEncodingJSON decodes data with Decode, reading every member of
// a top-level object, and with encoding/json, and reports how they differ.
func compareWithEncodingJSON(t *testing.T, data []byte) {
	t.Helper()
	var d Decoder
	got := map[string]any{}
	err := d.Decode(data, func(key []byte) error {
		v, err := value(&d)
		got[string(key)] = v
		return err
	})
	var ref any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	refErr := json.Unmarshal(data, new(any)) // the syntax error, with its offset
	if refErr == nil {
		if err := dec.Decode(&ref); err != nil {
			t.Fatalf("%q: json.Decoder: %v", data, err)
		}
	}

	var se *SyntaxError
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
		return
	}
	if refErr != nil {
		t.Fatalf("%q: encoding/json: %v", data, refErr)
	}
	if err != nil {
		var shape *ShapeError
		if _, isObject := ref.(map[string]any); isObject || ref == nil || !errors.As(err, &shape) {
			t.Fatalf("%q: decoder says %v, encoding/json accepts it as %v", data, err, ref)
		}
		return
	}
	if ref == nil {
		return // a top-level null
	}
	if !reflect.DeepEqual(any(got), ref) {
		t.Fatalf("%q:\n decoder       %#v\n encoding/json %#v", data, got, ref)
	}
}

// compareCompact checks Compact against json.Compact, and ParseInput against
// encoding/json, on valid input.
func compareCompact(t *testing.T, data []byte) {
	t.Helper()
	if !json.Valid(data) {
		if _, err := ParseInput(data, "x is", "x"); err == nil && len(bytes.TrimSpace(data)) > 0 {
			t.Fatalf("ParseInput(%q) accepts what encoding/json rejects", data)
		}
		return
	}
	var want bytes.Buffer
	if err := json.Compact(&want, data); err != nil {
		t.Fatalf("json.Compact(%q): %v", data, err)
	}
	if got := Compact(data); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("Compact(%q) = %q, json.Compact gives %q", data, got, want.Bytes())
	}
	got, err := ParseInput(data, "x is", "x")
	if isObject := want.Bytes()[0] == '{'; isObject != (err == nil) || isObject && !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("ParseInput(%q) = %q, %v; json.Compact gives %q", data, got, err, want.Bytes())
	}
}

func TestDecoderMatchesEncodingJSON(t *testing.T) {
	for _, s := range seeds {
		compareWithEncodingJSON(t, []byte(s))
	}
}

func TestCompact(t *testing.T) {
	for _, s := range append(seeds, " {\"a\" :\t[1 , \"x \\\" y\\\\\" ,{} ]}\n") {
		compareCompact(t, []byte(s))
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareWithEncodingJSON(t, data)
		compareCompact(t, data)
	})
}

func TestParseInput(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"", "{}", ""},
		{" \n\t", "{}", ""},
		{` {"a": [1, "b c"]} `, `{"a":[1,"b c"]}`, ""},
		{`  {"a":}`, "", "tool input is not valid JSON: invalid character '}' looking for beginning of value (after 8 bytes of the input)"},
		{`{} {}`, "", "tool input is not valid JSON: invalid character '{' after top-level value (after 4 bytes of the input)"},
		{`{"a":1`, "", "tool input is not valid JSON: unexpected end of JSON input (after 6 bytes of the input)"},
		{`"x"`, "", "tool input is a JSON string, not an object"},
		{` null`, "", "tool input is a JSON null, not an object"},
		{`12`, "", "tool input is a JSON number, not an object"},
		{`[]`, "", "tool input is a JSON array, not an object"},
	}
	for _, tt := range tests {
		got, err := ParseInput([]byte(tt.in), "tool input is", "input")
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseInput(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("ParseInput(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

// TestShape checks the reports of values of the wrong type: the first is
// kept, a null is none, and Quiet hides them.
func TestShape(t *testing.T) {
	var d Decoder
	var n int
	var has bool
	var s []byte
	field := func(key []byte) error {
		switch string(key) {
		case "i":
			return d.IntField(&n, &has, "i")
		case "s":
			return d.BytesField(&s, "s")
		case "o":
			return d.ObjectField("o", func([]byte) error { return d.SkipValue() })
		}
		return d.SkipValue()
	}
	tests := []struct{ in, err string }{
		{`{"i":1,"s":"x","o":{}}`, ""},
		{`{"i":null,"s":null,"o":null}`, ""},
		{`{"i":"1","s":2}`, "json: cannot use string value for field i"},
		{`{"i":1.5}`, "json: cannot use number value for field i"},
		{`{"s":{},"i":[]}`, "json: cannot use object value for field s"},
		{`{"o":[1]}`, "json: cannot use array value for field o"},
		{`[1]`, "json: cannot use array value for field event"},
		{`null`, ""},
	}
	for _, tt := range tests {
		err := d.Decode([]byte(tt.in), field)
		if got := ""; err != nil {
			if got = err.Error(); got != tt.err {
				t.Errorf("%s: error %q, want %q", tt.in, got, tt.err)
			}
		} else if tt.err != "" {
			t.Errorf("%s: no error, want %q", tt.in, tt.err)
		}
		d.Quiet = true
		if err := d.Decode([]byte(tt.in), field); err != nil {
			t.Errorf("%s, quiet: %v", tt.in, err)
		}
		d.Quiet = false
	}
	if err := d.Decode([]byte(`{"i":7}`), field); err != nil || n != 7 || !has {
		t.Errorf("IntField: %d, %v, %v", n, has, err)
	}
}

// TestArena checks that strings unescaped into the arena stay intact while
// later strings of the same value are unescaped, and that plain strings are
// not copied.
func TestArena(t *testing.T) {
	var d Decoder
	var got [][]byte
	data := []byte(`{"a":"a\"b","b":"t\u0079pe","c":"plain"}`)
	err := d.Decode(data, func([]byte) error {
		var s []byte
		err := d.BytesField(&s, "x")
		got = append(got, s)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0]) != `a"b` || string(got[1]) != "type" || string(got[2]) != "plain" {
		t.Errorf("got %q", got)
	}
	if &got[2][0] != &data[len(data)-7] {
		t.Errorf("plain string was copied")
	}
}
