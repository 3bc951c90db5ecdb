package coercion

import (
	"encoding/json"
	"testing"
)

func TestCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{}`, `{}`},
		{` { "b" : 1 , "a" : [ true , null , "x" ] } `, `{"a":[true,null,"x"],"b":1}`},
		{`{"b":{"d":1,"c":2},"a":0}`, `{"a":0,"b":{"c":2,"d":1}}`},
		// Code point order: "B" < "a" < "é" < "😀" (not UTF-16 order).
		{`{"😀":1,"é":2,"a":3,"B":4,"\uffff":5}`, `{"B":4,"a":3,"\u00e9":2,"\uffff":5,"\ud83d\ude00":1}`},
		{`{"s":"é😀"}`, `{"s":"\u00e9\ud83d\ude00"}`},
		{`{"s":"\u00e9"}`, `{"s":"\u00e9"}`},
		{`{"s":"a\"b\\c\/d\n\t\u0001<>&"}`, `{"s":"a\"b\\c/d\n\t\u0001<>&"}`},
		{`{"n":9007199254740993,"f":1.50,"e":1E3}`, `{"e":1E3,"f":1.50,"n":9007199254740993}`},
		{`{"a":1,"a":2}`, `{"a":1,"a":2}`},
		{`{"s":"\ud800"}`, `{"s":"\ufffd"}`},
		{"{\"s\":\"\xff\"}", `{"s":"\ufffd"}`},
		{`[3,{"b":1,"a":2}]`, `[3,{"a":2,"b":1}]`},
	}
	for _, tt := range tests {
		got, err := Canonical(json.RawMessage(tt.in))
		if err != nil {
			t.Errorf("Canonical(%s): %v", tt.in, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("Canonical(%s)\n got %s\nwant %s", tt.in, got, tt.want)
		}
		again, err := Canonical(got)
		if err != nil || string(again) != string(got) {
			t.Errorf("Canonical is not idempotent on %s: %s", got, again)
		}
	}
	if _, err := Canonical(json.RawMessage(`{"a":`)); err == nil {
		t.Error("Canonical accepted broken JSON")
	}
}
