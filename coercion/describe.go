package coercion

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	jskind "github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// describe flattens the validator's error tree into one problem per failing
// leaf, worded for a model: what was expected, what came.
func describe(ve *jsonschema.ValidationError, doc any) []Problem {
	var out []Problem
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if pn, ok := e.ErrorKind.(*jskind.PropertyNames); ok && len(e.Causes) > 0 {
			// The causes say what is wrong with a name but not which
			// name: say both.
			msg := "invalid property name " + quote(pn.Property)
			if c := e.Causes[0]; len(c.Causes) == 0 {
				msg += ": " + message(c.ErrorKind, pn.Property)
			}
			out = append(out, Problem{Path: pointer(e.InstanceLocation), Message: msg})
			return
		}
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		got := valueAt(doc, e.InstanceLocation)
		out = append(out, Problem{Path: pointer(e.InstanceLocation), Message: message(e.ErrorKind, got)})
	}
	walk(ve)
	return out
}

// message words one failed keyword. Library wording is avoided so that the
// text stays stable and says what came, not just what failed.
func message(k jsonschema.ErrorKind, got any) string {
	switch k := k.(type) {
	case *jskind.Type:
		return typeMessage(k.Want, describeValue(got))
	case *jskind.Required:
		if len(k.Missing) == 1 {
			return "missing required property " + quote(k.Missing[0])
		}
		return "missing required properties " + quoteAll(k.Missing)
	case *jskind.AdditionalProperties:
		if len(k.Properties) == 1 {
			return "unexpected property " + quote(k.Properties[0]) + " (not in the schema)"
		}
		// Sorted: the validator lists them in map order.
		return "unexpected properties " + quoteAll(slices.Sorted(slices.Values(k.Properties))) + " (not in the schema)"
	case *jskind.Enum:
		return "expected one of " + showValues(k.Want) + ", got " + describeValue(got)
	case *jskind.Const:
		return "expected " + showValue(k.Want) + ", got " + describeValue(got)
	case *jskind.Format:
		return fmt.Sprintf("expected a valid %s, got %s", k.Want, describeValue(got))
	case *jskind.Pattern:
		return fmt.Sprintf("expected a string matching %s, got %s", quote(k.Want), describeValue(got))
	case *jskind.MinLength:
		return fmt.Sprintf("expected at least %d characters, got %d", k.Want, k.Got)
	case *jskind.MaxLength:
		return fmt.Sprintf("expected at most %d characters, got %d", k.Want, k.Got)
	case *jskind.MinItems:
		return fmt.Sprintf("expected at least %d items, got %d", k.Want, k.Got)
	case *jskind.MaxItems:
		return fmt.Sprintf("expected at most %d items, got %d", k.Want, k.Got)
	case *jskind.MinProperties:
		return fmt.Sprintf("expected at least %d properties, got %d", k.Want, k.Got)
	case *jskind.MaxProperties:
		return fmt.Sprintf("expected at most %d properties, got %d", k.Want, k.Got)
	case *jskind.Minimum:
		return bound(">=", k.Want, got)
	case *jskind.Maximum:
		return bound("<=", k.Want, got)
	case *jskind.ExclusiveMinimum:
		return bound(">", k.Want, got)
	case *jskind.ExclusiveMaximum:
		return bound("<", k.Want, got)
	case *jskind.MultipleOf:
		return fmt.Sprintf("expected a multiple of %s, got %s", ratText(k.Want), describeValue(got))
	case *jskind.UniqueItems:
		return fmt.Sprintf("items %d and %d are equal; items must be unique", k.Duplicates[0], k.Duplicates[1])
	case *jskind.AdditionalItems:
		return fmt.Sprintf("expected at most %d items", k.Count)
	case *jskind.Dependency:
		return fmt.Sprintf("property %s requires %s", quote(k.Prop), quoteAll(k.Missing))
	case *jskind.DependentRequired:
		return fmt.Sprintf("property %s requires %s", quote(k.Prop), quoteAll(k.Missing))
	case *jskind.PropertyNames:
		return "invalid property name " + quote(k.Property)
	case *jskind.OneOf:
		if len(k.Subschemas) >= 2 {
			return fmt.Sprintf("matches more than one allowed form (%d and %d); it must match exactly one",
				k.Subschemas[0], k.Subschemas[1])
		}
		return "matches none of the allowed forms"
	case *jskind.FalseSchema:
		return "no value is allowed here"
	case *jskind.Not:
		return "matches a form that is not allowed"
	case *jskind.Contains, *jskind.MinContains, *jskind.MaxContains:
		return "not enough (or too many) items match the required item form"
	case *jskind.RefCycle:
		return "the tool's schema loops on itself (a bug in the tool, not in the input)"
	default:
		if kw := k.KeywordPath(); len(kw) > 0 {
			return "fails the schema's " + quote(strings.Join(kw, "/")) + " rule"
		}
		return "does not match the schema"
	}
}

func bound(op string, want *big.Rat, got any) string {
	return fmt.Sprintf("expected a number %s %s, got %s", op, ratText(want), describeValue(got))
}

func ratText(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// describeValue names a value's type, with the value itself for scalars.
func describeValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean " + strconv.FormatBool(v)
	case json.Number:
		t := "number"
		if isIntegerLiteral(string(v)) {
			t = "integer"
		}
		return t + " " + truncateRunes(string(v), 40)
	case string:
		return "string " + quote(v)
	case []any:
		return "array"
	default:
		return "object"
	}
}

func showValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return quote(v)
	case json.Number:
		return string(v)
	case bool:
		return strconv.FormatBool(v)
	case []any:
		return "an array"
	default:
		return "an object"
	}
}

func showValues(list []any) string {
	const maxShown = 10
	parts := make([]string, 0, min(len(list), maxShown+1))
	for i, v := range list {
		if i == maxShown {
			parts = append(parts, fmt.Sprintf("… %d more", len(list)-i))
			break
		}
		parts = append(parts, showValue(v))
	}
	return strings.Join(parts, ", ")
}

// valueAt finds the value at an instance location.
func valueAt(doc any, loc []string) any {
	cur := doc
	for _, tok := range loc {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}
