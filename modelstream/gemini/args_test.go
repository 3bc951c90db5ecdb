package gemini

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParsePath(t *testing.T) {
	m := func(name string) segment { return segment{name: name, index: -1} }
	i := func(n int) segment { return segment{index: n} }
	for _, tt := range []struct {
		path string
		want []segment
	}{
		{"$.a", []segment{m("a")}},
		{"$.recipe.ingredients[0].amount", []segment{m("recipe"), m("ingredients"), i(0), m("amount")}},
		{"$['a b'][\"c\"][12]", []segment{m("a b"), m("c"), i(12)}},
		{"$[ 'x' ][\t3 ]", []segment{m("x"), i(3)}},
		{"$._x9.é", []segment{m("_x9"), m("é")}},
		{`$['\u00e9\n\'\\']`, []segment{m("é\n'\\")}},
		{`$["\ud83d\ude00"]`, []segment{m("😀")}},
		{"$[0][1]", []segment{i(0), i(1)}},
	} {
		got, err := parsePath(tt.path)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parsePath(%q) = %v, %v; want %v", tt.path, got, err, tt.want)
		}
	}
	for _, tt := range []struct{ path, errHas string }{
		{"a.b", "does not start with $"},
		{"$", "names the whole arguments object"},
		{"$.", "no member name"},
		{"$..a", "wildcard or descendant"},
		{"$.*", "wildcard or descendant"},
		{"$[*]", "selector starting with '*'"},
		{"$[-1]", "negative index"},
		{"$[01]", "leading zero"},
		{"$[0:2]", "not one name or index"},
		{"$['a','b']", "not one name or index"},
		{"$['a", "unclosed quoted name"},
		{"$[", "unclosed '['"},
		{"$.1a", "no member name"},
		{"$[?@.a]", "selector starting with '?'"},
		{"$[99999999999999999999]", "out of range"},
		{`$['\x']`, "invalid escape"},
		{`$['\ud83d']`, "unpaired surrogate"},
		{"$a", "unexpected 'a'"},
		{"$" + strings.Repeat(".a", maxPathSegments+1), "more than 256 segments"},
	} {
		if got, err := parsePath(tt.path); err == nil || !strings.Contains(err.Error(), tt.errHas) {
			t.Errorf("parsePath(%q) = %v, %v; want an error containing %q", tt.path, got, err, tt.errHas)
		}
	}
}

func TestSetAndRender(t *testing.T) {
	root := &node{kind: kObject}
	str := func(s string) *node { return &node{kind: kString, text: []byte(s)} }
	lit := func(s string) *node { return &node{kind: kLiteral, text: []byte(s)} }
	steps := []struct {
		path   string
		leaf   *node
		append bool
		errHas string
	}{
		{path: "$.b[1]", leaf: lit("2")},
		{path: "$.a", leaf: str("x")},
		{path: "$.a", leaf: str("y"), append: true},
		{path: "$.b[0]", leaf: lit("1")},
		{path: "$.c.d[0].e", leaf: str("\x01\"\\\t\xff")},
		{path: "$.a.x", leaf: lit("1"), errHas: "a path through a string"},
		{path: "$.b.x", leaf: lit("1"), errHas: "a path through an array"},
		{path: "$.c[0]", leaf: lit("1"), errHas: "a path through an object"},
		{path: "$[0]", leaf: lit("1"), errHas: "index 0 of a value that is not an array"},
		{path: "$.c", leaf: lit("1"), errHas: "where an object or array was already built"},
		{path: "$.b[5000]", leaf: lit("1"), errHas: "more than 1024 past the end"},
	}
	for _, s := range steps {
		segs, err := parsePath(s.path)
		if err != nil {
			t.Fatalf("parsePath(%q): %v", s.path, err)
		}
		err = set(root, segs, s.leaf, s.append)
		if (s.errHas == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), s.errHas) {
			t.Errorf("set(%q) = %v, want error containing %q", s.path, err, s.errHas)
		}
	}
	got, full := render(nil, root)
	want := `{"b":[1,2],"a":"xy","c":{"d":[{"e":"\u0001\"\\\t` + "\ufffd" + `"}]}}`
	if string(got) != want || !full {
		t.Errorf("render = %s (full %v)\nwant   %s", got, full, want)
	}
	if !json.Valid(got) {
		t.Errorf("render gave invalid JSON %s", got)
	}
}

func TestTreeFromJSON(t *testing.T) {
	n, err := treeFromJSON([]byte(` {"z": [1, {"y": "\u00e9"}, true, null], "a": -0.5e3, "z2": {}} `))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := render(nil, n); string(got) != `{"z":[1,{"y":"é"},true,null],"a":-0.5e3,"z2":{}}` {
		t.Errorf("render(treeFromJSON) = %s", got)
	}
	for _, in := range []string{`[1]`, `{} {}`, `"s"`} {
		if _, err := treeFromJSON([]byte(in)); err == nil {
			t.Errorf("treeFromJSON(%s) accepted", in)
		}
	}
}
