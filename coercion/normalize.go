package coercion

import "strconv"

// Keywords whose value is a subschema, a list of subschemas, or a map of
// name to subschema. The walk follows only these, so data inside enum,
// const, default or examples is never mistaken for a schema.
var (
	schemaKeywords = []string{
		"additionalProperties", "additionalItems", "items", "not", "if", "then", "else",
		"contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema",
	}
	schemaListKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	schemaMapKeywords  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)

// normalizeNullable rewrites OpenAPI's `nullable: true` next to a type into a
// type list with "null", so that the validator accepts the null that
// coercion produces for "null". JSON Schema itself ignores nullable.
func normalizeNullable(schema any) {
	obj, ok := schema.(map[string]any)
	if !ok {
		return
	}
	if nullable, _ := obj["nullable"].(bool); nullable {
		switch t := obj["type"].(type) {
		case string:
			if t != "null" {
				obj["type"] = []any{t, "null"}
			}
		case []any:
			if !containsString(t, "null") {
				obj["type"] = append(t[:len(t):len(t)], "null")
			}
		}
	}
	for _, k := range schemaKeywords {
		normalizeNullable(obj[k])
	}
	for _, k := range schemaListKeywords {
		if list, ok := obj[k].([]any); ok {
			for _, sub := range list {
				normalizeNullable(sub)
			}
		}
	}
	for _, k := range schemaMapKeywords {
		if m, ok := obj[k].(map[string]any); ok {
			for _, sub := range m {
				normalizeNullable(sub)
			}
		}
	}
}

func containsString(list []any, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// parseIndex parses a JSON pointer array index (no sign, no leading zeros).
func parseIndex(tok string) (int, error) {
	if tok == "" || tok[0] == '+' || tok[0] == '-' || (len(tok) > 1 && tok[0] == '0') {
		return 0, strconv.ErrSyntax
	}
	return strconv.Atoi(tok)
}
