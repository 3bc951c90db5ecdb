package coercion

import (
	"encoding/json"
	"strings"
)

// Coerce converts mistyped values in args to the types the schema accepts,
// adding or removing no key and losing no digit.
func (s *Schema) Coerce(args json.RawMessage) (json.RawMessage, error) {
	// When nothing needs converting, args itself is returned, byte for
	// byte; otherwise compact JSON in the original key order. Values that
	// cannot be converted are left for Validate to report.
	v, err := decodeJSON(args)
	if err != nil {
		return nil, err
	}
	if !coerceValue(&v, s.root, false) {
		return args, nil
	}
	return appendValue(make([]byte, 0, len(args)+8), &v, false), nil
}

// coerceValue applies the rules to v in place and reports whether it changed.
// wrapped says v is the only element of an array just made by wrapping it,
// so it must not be wrapped again: with a schema whose items are arrays of
// themselves, that would never end.
func coerceValue(v *value, n *node, wrapped bool) bool {
	if n == nil {
		return false
	}
	changed, wrap := false, false
	acc := n.accepts
	switch {
	case acc.any:
	case v.kind == kString:
		if nv, how := convertString(v.s, n, wrapped); how != unchanged {
			*v, changed, wrap = nv, true, how == wrappedUp
		}
	case !wrapped && acc.has(tArray) && v.kind != kArray && v.kind != kNull && !acceptsValue(acc, v):
		// A single value where a list is expected: the model meant a list
		// of one.
		*v, changed, wrap = value{kind: kArray, arr: []value{*v}}, true, true
	}
	switch v.kind {
	case kArray:
		for i := range v.arr {
			l := newLookup(v)
			if coerceValue(&v.arr[i], l.item(n, i), wrap) {
				changed = true
			}
		}
	case kObject:
		for i := range v.obj {
			m := &v.obj[i]
			l := newLookup(v)
			sub := l.prop(n, m.key)
			if sub == nil {
				l.left = lookupSteps
				sub = l.additional(n)
			}
			if coerceValue(&m.val, sub, false) {
				changed = true
			}
		}
	}
	return changed
}

// conversion says what convertString did.
type conversion uint8

const (
	unchanged conversion = iota
	converted            // parsed as another type
	wrappedUp            // wrapped as the one element of an array
)

// convertString applies the string rules of docs/coercion.md (Coercion) for
// what n accepts; wrapped forbids wrapping (see coerceValue).
func convertString(s string, n *node, wrapped bool) (value, conversion) {
	acc := n.accepts
	if acc.has(tNull) && strings.EqualFold(strings.TrimSpace(s), "null") {
		return value{kind: kNull}, converted
	}
	if acc.has(tString) {
		// Text that looks like a number or boolean stays a string, but a
		// JSON array or object is still parsed when the schema takes one.
		for _, t := range acc.list {
			if t == tArray || t == tObject {
				if v, ok := parseContainer(s, t); ok {
					return v, converted
				}
			}
		}
		return value{}, unchanged
	}
	for _, t := range acc.list {
		switch t {
		case tInteger:
			if lit, ok := integerText(s); ok {
				return value{kind: kNumber, s: lit}, converted
			}
		case tNumber:
			if lit, ok := numberText(s); ok {
				return value{kind: kNumber, s: lit}, converted
			}
		case tBoolean:
			if t := strings.TrimSpace(s); strings.EqualFold(t, "true") {
				return value{kind: kBool, b: true}, converted
			} else if strings.EqualFold(t, "false") {
				return value{kind: kBool}, converted
			}
		case tArray, tObject:
			if v, ok := parseContainer(s, t); ok {
				return v, converted
			}
			if t == tObject && strings.TrimSpace(s) == "" && !requiresAny(n) {
				return value{kind: kObject}, converted
			}
		}
	}
	// Wrapping is the least specific conversion, so it comes only after
	// every other accepted type had its chance: ["array","integer"] with
	// "42" gives 42, not ["42"].
	if acc.has(tArray) && !wrapped {
		return value{kind: kArray, arr: []value{{kind: kString, s: s}}}, wrappedUp
	}
	return value{}, unchanged
}

// parseContainer parses text that starts with "[" (or "{") as a JSON array
// (or object).
func parseContainer(s string, t jtype) (value, bool) {
	s = strings.TrimSpace(s)
	open := byte('[')
	if t == tObject {
		open = '{'
	}
	if len(s) == 0 || s[0] != open {
		return value{}, false
	}
	v, err := decodeJSON([]byte(s))
	if err != nil {
		return value{}, false
	}
	return v, true
}

// acceptsValue reports whether a non-string value already has a type l
// accepts, so it must not be wrapped in an array.
func acceptsValue(l typeList, v *value) bool {
	switch v.kind {
	case kBool:
		return l.has(tBoolean)
	case kNumber:
		return l.has(tNumber) || (l.has(tInteger) && isIntegerLiteral(v.s))
	case kObject:
		return l.has(tObject)
	case kNull:
		return l.has(tNull)
	default:
		return false
	}
}

func shapeOf(v *value) jtype {
	switch v.kind {
	case kNull:
		return tNull
	case kBool:
		return tBoolean
	case kNumber:
		if isIntegerLiteral(v.s) {
			return tInteger
		}
		return tNumber
	case kString:
		return tString
	case kArray:
		return tArray
	default:
		return tObject
	}
}
