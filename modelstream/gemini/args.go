package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file builds the arguments object of a Vertex streamed call from its
// partialArgs: each names a leaf by an RFC 9535 JSONPath ($.a.b[0]) and
// gives its value; a string whose part says willContinue is continued by the
// next part for the same path.

// nodeKind is the type of a node of an arguments tree.
type nodeKind uint8

const (
	kObject nodeKind = iota
	kArray
	kString
	// kLiteral is a number, true, false or null, kept as its JSON text.
	kLiteral
	// kHole is an array element no part has set yet.
	kHole
)

// node is a JSON value under construction. Objects keep their keys in the
// order they first appeared, so the arguments come out as the model wrote them.
type node struct {
	kind nodeKind
	keys []string
	// vals are an object's values, in keys order, or an array's elements.
	vals []*node
	// text is a string's value or a literal's JSON text.
	text []byte
}

const (
	// maxPathSegments bounds a jsonPath, and so the depth of the tree.
	maxPathSegments = 256
	// maxIndexGap bounds how far past an array's end an index may reach,
	// so that a path like $.a[99999999] cannot allocate without bound.
	maxIndexGap = 1024
	// maxDepth bounds the nesting of an args object used to seed a tree.
	maxDepth = 10000
)

func (n *node) setMember(key string, v *node) {
	for i, k := range n.keys {
		if k == key {
			n.vals[i] = v
			return
		}
	}
	n.keys = append(n.keys, key)
	n.vals = append(n.vals, v)
}

// segment is one step of a jsonPath: a member name, or an array index when index >= 0.
type segment struct {
	name  string
	index int
}

// parsePath parses a singular RFC 9535 query: $ followed by .name,
// ['name'], ["name"] or [index] segments. Wildcards, slices, filters,
// descendants and negative indexes do not name one place to build, so
// they are errors.
func parsePath(p string) ([]segment, error) {
	if !strings.HasPrefix(p, "$") {
		return nil, errors.New("does not start with $")
	}
	var segs []segment
	for i := 1; i < len(p); {
		if len(segs) == maxPathSegments {
			return nil, fmt.Errorf("has more than %d segments", maxPathSegments)
		}
		switch p[i] {
		case '.':
			i++
			if i < len(p) && (p[i] == '.' || p[i] == '*') {
				return nil, errors.New("uses a wildcard or descendant segment, which names no single value")
			}
			start := i
			for i < len(p) {
				r, size := utf8.DecodeRuneInString(p[i:])
				if !isNameChar(r, i == start) {
					break
				}
				i += size
			}
			if i == start {
				return nil, fmt.Errorf("has no member name after '.' at offset %d", start)
			}
			segs = append(segs, segment{name: p[start:i], index: -1})
		case '[':
			seg, n, err := parseBracket(p[i:])
			if err != nil {
				return nil, fmt.Errorf("%v at offset %d", err, i)
			}
			segs = append(segs, seg)
			i += n
		default:
			return nil, fmt.Errorf("has unexpected %q at offset %d", p[i], i)
		}
	}
	if len(segs) == 0 {
		return nil, errors.New("names the whole arguments object, not a member of it")
	}
	return segs, nil
}

// isNameChar reports whether r may appear in a member-name-shorthand (RFC 9535 §2.5.1.1).
func isNameChar(r rune, first bool) bool {
	switch {
	case r == utf8.RuneError:
		return false
	case r == '_', 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', r >= 0x80:
		return true
	case '0' <= r && r <= '9':
		return !first
	}
	return false
}

// parseBracket parses a bracketed selection at the start of p and returns it
// with its length.
func parseBracket(p string) (segment, int, error) {
	i := skipBlank(p, 1)
	if i == len(p) {
		return segment{}, 0, errors.New("has an unclosed '['")
	}
	var seg segment
	switch c := p[i]; {
	case c == '\'' || c == '"':
		name, n, err := parseQuoted(p[i:])
		if err != nil {
			return segment{}, 0, err
		}
		seg, i = segment{name: name, index: -1}, i+n
	case c == '-':
		return segment{}, 0, errors.New("has a negative index, which names no place to build")
	case '0' <= c && c <= '9':
		start := i
		for i < len(p) && '0' <= p[i] && p[i] <= '9' {
			i++
		}
		digits := p[start:i]
		if len(digits) > 1 && digits[0] == '0' {
			return segment{}, 0, fmt.Errorf("has index %s with a leading zero", digits)
		}
		n, err := strconv.Atoi(digits)
		if err != nil {
			return segment{}, 0, fmt.Errorf("has index %s out of range", digits)
		}
		seg = segment{index: n}
	default:
		return segment{}, 0, fmt.Errorf("has a selector starting with %q, which names no single value", c)
	}
	i = skipBlank(p, i)
	if i == len(p) || p[i] != ']' {
		return segment{}, 0, errors.New("has a bracket that is not one name or index")
	}
	return seg, i + 1, nil
}

func skipBlank(p string, i int) int {
	for i < len(p) && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r') {
		i++
	}
	return i
}

// parseQuoted parses a single- or double-quoted name at the start of p, with
// RFC 9535's escapes, and returns it with its length.
func parseQuoted(p string) (string, int, error) {
	quote := p[0]
	var b strings.Builder
	for i := 1; i < len(p); {
		c := p[i]
		switch {
		case c == quote:
			return b.String(), i + 1, nil
		case c == '\\':
			if i+1 == len(p) {
				return "", 0, errors.New("has an unfinished escape")
			}
			e := p[i+1]
			i += 2
			switch e {
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case '/', '\\', quote:
				b.WriteByte(e)
			case 'u':
				r, n, err := parseU(p[i-2:])
				if err != nil {
					return "", 0, err
				}
				b.WriteRune(r)
				i += n - 2
			default:
				return "", 0, fmt.Errorf("has an invalid escape \\%c", e)
			}
		case c < 0x20:
			return "", 0, errors.New("has a control character in a name")
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", 0, errors.New("has an unclosed quoted name")
}

// parseU reads \uXXXX, or a surrogate pair of two, at the start of p.
func parseU(p string) (rune, int, error) {
	hex := func(s string) (rune, bool) {
		if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(s[2:6], 16, 32)
		return rune(v), err == nil
	}
	r, ok := hex(p)
	if !ok {
		return 0, 0, errors.New("has an invalid \\u escape")
	}
	if 0xD800 <= r && r < 0xDC00 {
		if r2, ok := hex(p[6:]); ok && 0xDC00 <= r2 && r2 < 0xE000 {
			return (r-0xD800)<<10 | (r2 - 0xDC00) + 0x10000, 12, nil
		}
		return 0, 0, errors.New("has an unpaired surrogate escape")
	}
	if 0xDC00 <= r && r < 0xE000 {
		return 0, 0, errors.New("has an unpaired surrogate escape")
	}
	return r, 6, nil
}

// leafValue turns a partialArg's value into a leaf node; nil when it has none.
func leafValue(pa *wirePartialArg) (*node, error) {
	switch {
	case pa.StringValue != nil:
		return &node{kind: kString, text: []byte(*pa.StringValue)}, nil
	case pa.NumberValue != nil && !isNull(pa.NumberValue):
		return numberValue(pa.NumberValue)
	case pa.BoolValue != nil && !isNull(pa.BoolValue):
		v := string(bytes.TrimSpace(pa.BoolValue))
		if v != "true" && v != "false" {
			return nil, fmt.Errorf("boolValue %s is not a boolean", clip(pa.BoolValue))
		}
		return &node{kind: kLiteral, text: []byte(v)}, nil
	case pa.NullValue != nil:
		// proto3 JSON writes NullValue as null or "NULL_VALUE"; either is null.
		return &node{kind: kLiteral, text: []byte("null")}, nil
	}
	return nil, nil
}

// numberValue reads a numberValue: a JSON number, or a number in a string as
// proto3 JSON allows ("1.5", but "NaN" and "Infinity" have no JSON form).
func numberValue(raw json.RawMessage) (*node, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		if len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') || !json.Valid(raw) {
			return nil, fmt.Errorf("numberValue %s is not a number", clip(raw))
		}
		return &node{kind: kLiteral, text: bytes.Clone(raw)}, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("numberValue %s is not a number", clip(raw))
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("numberValue %q has no JSON form", s)
	}
	return &node{kind: kLiteral, text: strconv.AppendFloat(nil, f, 'g', -1, 64)}, nil
}

// set puts leaf at segs under root, creating the objects and arrays on the
// way. When appendString is set and a string is already there, leaf's text
// is appended to it instead: that is how a streamed string goes on.
func set(root *node, segs []segment, leaf *node, appendString bool) error {
	cur := root
	for i, seg := range segs {
		last := i == len(segs)-1
		var slot **node
		if seg.index < 0 {
			if cur.kind != kObject {
				return fmt.Errorf("member %q of a value that is not an object", seg.name)
			}
			k := slices.Index(cur.keys, seg.name)
			if k < 0 {
				k = len(cur.keys)
				cur.keys = append(cur.keys, seg.name)
				cur.vals = append(cur.vals, &node{kind: kHole})
			}
			slot = &cur.vals[k]
		} else {
			if cur.kind != kArray {
				return fmt.Errorf("index %d of a value that is not an array", seg.index)
			}
			if seg.index > len(cur.vals)+maxIndexGap {
				return fmt.Errorf("index %d is more than %d past the end of its array", seg.index, maxIndexGap)
			}
			for len(cur.vals) <= seg.index {
				cur.vals = append(cur.vals, &node{kind: kHole})
			}
			slot = &cur.vals[seg.index]
		}
		child := *slot
		if last {
			if child.kind == kObject || child.kind == kArray {
				return errors.New("a value where an object or array was already built")
			}
			if appendString && child.kind == kString && leaf.kind == kString {
				child.text = append(child.text, leaf.text...)
				return nil
			}
			*slot = leaf
			return nil
		}
		want := kObject
		if segs[i+1].index >= 0 {
			want = kArray
		}
		switch child.kind {
		case kHole:
			*slot = &node{kind: want}
		case want:
		default:
			return fmt.Errorf("a path through %s", kindName(child.kind))
		}
		cur = *slot
	}
	return nil
}

func kindName(k nodeKind) string {
	switch k {
	case kObject:
		return "an object"
	case kArray:
		return "an array"
	case kString:
		return "a string"
	}
	return "a scalar value"
}

// render appends n as compact JSON; holes become null, and complete says
// whether there were none.
func render(dst []byte, n *node) (out []byte, complete bool) {
	complete = true
	var walk func(n *node)
	walk = func(n *node) {
		switch n.kind {
		case kObject:
			dst = append(dst, '{')
			for i, k := range n.keys {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = appendString(dst, []byte(k))
				dst = append(dst, ':')
				walk(n.vals[i])
			}
			dst = append(dst, '}')
		case kArray:
			dst = append(dst, '[')
			for i, v := range n.vals {
				if i > 0 {
					dst = append(dst, ',')
				}
				walk(v)
			}
			dst = append(dst, ']')
		case kString:
			dst = appendString(dst, n.text)
		case kLiteral:
			dst = append(dst, n.text...)
		case kHole:
			complete = false
			dst = append(dst, "null"...)
		}
	}
	walk(n)
	return dst, complete
}

// appendString appends s as a JSON string, escaping only what JSON requires;
// invalid UTF-8 becomes U+FFFD.
func appendString(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, "\ufffd"...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// treeFromJSON builds a tree from a JSON object, to seed a streamed call
// whose first part also carried args.
func treeFromJSON(raw []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := readNode(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	if n.kind != kObject {
		return nil, errors.New("not a JSON object")
	}
	return n, nil
}

func readNode(dec *json.Decoder, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, errors.New("nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			n := &node{kind: kObject}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				child, err := readNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.setMember(kt.(string), child)
			}
			_, err := dec.Token()
			return n, err
		}
		n := &node{kind: kArray}
		for dec.More() {
			child, err := readNode(dec, depth+1)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, child)
		}
		_, err := dec.Token()
		return n, err
	case string:
		return &node{kind: kString, text: []byte(v)}, nil
	case json.Number:
		return &node{kind: kLiteral, text: []byte(v)}, nil
	case bool:
		return &node{kind: kLiteral, text: []byte(strconv.FormatBool(v))}, nil
	case nil:
		return &node{kind: kLiteral, text: []byte("null")}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}
