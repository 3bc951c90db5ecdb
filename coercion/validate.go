package coercion

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Validate checks args against the full schema and returns a *ValidationError
// listing each failing path.
func (s *Schema) Validate(args json.RawMessage) error {
	// Text that is not JSON is reported as a problem at "/" too, so the
	// caller always gets the one error type. Duplicate keys are a problem:
	// decoders disagree on which one wins.
	v, err := decodeJSON(args)
	if err != nil {
		return &ValidationError{Problems: []Problem{{Path: "/", Message: err.Error()}}}
	}
	return s.validate(&v)
}

// Apply coerces then validates args, returning the coerced arguments even when
// validation fails.
func (s *Schema) Apply(args json.RawMessage) (json.RawMessage, error) {
	// One decode serves both steps. Text that is not JSON is a *ParseError.
	v, err := decodeJSON(args)
	if err != nil {
		return nil, err
	}
	out := args
	if coerceValue(&v, s.root, false) {
		out = appendValue(make([]byte, 0, len(args)+8), &v, false)
	}
	if err := s.validate(&v); err != nil {
		return out, err
	}
	return out, nil
}

func (s *Schema) validate(v *value) error {
	var problems []Problem
	doc := toAny(v, nil, &problems)
	if err := s.check(doc); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			problems = append(problems, describe(ve, doc)...)
		} else {
			problems = append(problems, Problem{Path: "/", Message: err.Error()})
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return &ValidationError{Problems: tidy(problems)}
}

// check runs the validator. A panic in it (third-party code, fed input
// from the model) becomes a failed validation: the call is not run, and the
// router does not crash.
func (s *Schema) check(doc any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the validator failed on this input: %v", r)
		}
	}()
	return s.validator.Validate(doc)
}

// toAny converts v to the form the validator takes (json.Number keeps
// numbers exact), noting duplicate keys as problems.
func toAny(v *value, path []string, problems *[]Problem) any {
	switch v.kind {
	case kNull:
		return nil
	case kBool:
		return v.b
	case kNumber:
		return json.Number(v.s)
	case kString:
		return v.s
	case kArray:
		out := make([]any, len(v.arr))
		for i := range v.arr {
			out[i] = toAny(&v.arr[i], append(path, strconv.Itoa(i)), problems)
		}
		return out
	default:
		out := make(map[string]any, len(v.obj))
		for i := range v.obj {
			m := &v.obj[i]
			if _, dup := out[m.key]; dup {
				*problems = append(*problems, Problem{
					Path:    pointer(path),
					Message: fmt.Sprintf("duplicate property %s: send each property once", quote(m.key)),
				})
			}
			out[m.key] = toAny(&m.val, append(path, m.key), problems)
		}
		return out
	}
}

// tidy merges type problems reported at one path by several union branches
// ("expected integer" and "expected null" become "expected integer or null",
// in the schema's order), drops repeats and orders by path, then message.
// The validator walks Go maps, so problems at one path (from dependencies,
// propertyNames, several patternProperties) come in any order; sorting
// them makes the same input always give the same text.
func tidy(problems []Problem) []Problem {
	slices.SortStableFunc(problems, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	out := problems[:0]
	for _, p := range problems {
		if n := len(out); n > 0 && out[n-1].Path == p.Path {
			if merged, ok := mergeTypeMessages(out[n-1].Message, p.Message); ok {
				out[n-1].Message = merged
				continue
			}
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Problem) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Message, b.Message))
	})
	return slices.Compact(out)
}

const expectedPrefix = "expected "

// mergeTypeMessages joins "expected A, got X" and "expected B, got X".
func mergeTypeMessages(a, b string) (string, bool) {
	wantA, gotA, okA := splitTypeMessage(a)
	wantB, gotB, okB := splitTypeMessage(b)
	if !okA || !okB || gotA != gotB {
		return "", false
	}
	want := strings.Split(wantA, " or ")
	for _, w := range strings.Split(wantB, " or ") {
		if !slices.Contains(want, w) {
			want = append(want, w)
		}
	}
	return typeMessage(want, gotA), true
}

func typeMessage(want []string, got string) string {
	return expectedPrefix + strings.Join(want, " or ") + ", got " + got
}

func splitTypeMessage(m string) (want, got string, ok bool) {
	rest, ok := strings.CutPrefix(m, expectedPrefix)
	if !ok {
		return "", "", false
	}
	want, got, ok = strings.Cut(rest, ", got ")
	if !ok {
		return "", "", false
	}
	for _, w := range strings.Split(want, " or ") {
		if _, isType := parseType(w); !isType {
			return "", "", false
		}
	}
	return want, got, true
}

// pointer renders an instance location as a JSON pointer; the whole input is
// "/".
func pointer(path []string) string {
	if len(path) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, tok := range path {
		b.WriteByte('/')
		b.WriteString(escapeToken(tok))
	}
	return b.String()
}

// quote shows text from the input in a message: quoted, escaped (control
// and invisible characters become visible escapes) and shortened.
func quote(s string) string {
	const maxRunes = 60
	if n := 0; len(s) > maxRunes {
		for i := range s {
			if n == maxRunes {
				return strconv.Quote(s[:i]) + "…"
			}
			n++
		}
	}
	return strconv.Quote(s)
}

func quoteAll(list []string) string {
	const maxShown = 10
	var b strings.Builder
	for i, s := range list {
		if i == maxShown {
			fmt.Fprintf(&b, " and %d more", len(list)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(s))
	}
	return b.String()
}
