package argcheck_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/coercion"
	"github.com/toolwire/toolwire/internal/argcheck"
)

func TestCheck(t *testing.T) {
	schema, err := coercion.Compile([]byte(`{"type":"object","properties":{"count":{"type":"integer","minimum":1}},"required":["count"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		in       string
		raw      bool
		input    string
		valid    bool
		repaired bool
		errPart  string
	}{
		{"coerced", "{\n  \"count\": \"3\"\n}", false, `{"count":3}`, true, false, ""},
		{"invalid", `{"count":0}`, false, `{"count":0}`, false, false, "count"},
		{"raw repaired", "```json\n{\"count\": 2,}\n```", true, `{"count":2}`, true, true, ""},
		{"raw cut off", `{"count": "1`, true, "", false, false, "offset"},
		{"raw empty is {}", ``, true, `{}`, false, false, "count"},
		{"invalid UTF-8 kept readable", "{\"count\":1,\"x\":\"\xff\"}", false, "{\"count\":1,\"x\":\"\uFFFD\"}", true, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, err := argcheck.Check(schema, []byte(c.in), c.raw)
			if err != nil {
				t.Fatal(err)
			}
			if string(v.Input) != c.input || v.Valid != c.valid || v.Repaired != c.repaired || v.Errors == nil {
				t.Errorf("verdict %+v (input %s)", v, v.Input)
			}
			if got := strings.Join(v.Errors, "\n"); (c.errPart == "") != (got == "") || !strings.Contains(got, c.errPart) {
				t.Errorf("errors %q, want one mentioning %q", got, c.errPart)
			}
		})
	}
	for _, in := range []string{`["count"]`, `{"count":`, ``} {
		if _, err := argcheck.Check(schema, []byte(in), false); !errors.Is(err, argcheck.ErrNotObject) {
			t.Errorf("%q without raw: %v, want ErrNotObject", in, err)
		}
	}
}
