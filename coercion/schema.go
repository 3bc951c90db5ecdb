package coercion

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaURL names the tool schema inside the validator; it is never fetched.
const schemaURL = "toolwire:///input-schema.json"

// Schema is a compiled tool input schema, immutable and safe for concurrent
// use.
type Schema struct {
	root      *node
	validator *jsonschema.Schema
}

// node is the part of one subschema that coercion needs.
type node struct {
	own        typeList         // from type, nullable, enum or const
	accepts    typeList         // own, narrowed by also and oneOf (computed)
	props      map[string]*node // properties
	patterns   []pattern        // patternProperties, in schema order
	additional *node            // additionalProperties, when a schema
	prefix     []*node          // prefixItems, or draft-7 array items
	items      *node            // items for positions past prefix
	required   []string
	also       []*node // $ref target and allOf branches: all apply
	oneOf      []*node // anyOf and oneOf branches: one applies
	done       bool    // accepts is computed
}

type pattern struct {
	re  *regexp.Regexp
	sub *node
}

// Compile compiles a tool's input schema (draft 2020-12 unless $schema says
// draft 7), allowing local references only; its error wraps ErrBadSchema.
func Compile(schema json.RawMessage) (*Schema, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		return nil, fmt.Errorf("%w: empty schema", ErrBadSchema)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSchema, err)
	}
	normalizeNullable(doc)

	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// The default loader reads local files: a tool schema must never make
	// the router read the disk or the network.
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSchema, err)
	}
	validator, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSchema, err)
	}

	b := builder{doc: doc, nodes: map[string]*node{}}
	root := b.build("", doc)
	// In pointer order, so that where reference cycles make the result
	// depend on the order, it is at least the same on every Compile.
	for _, ptr := range slices.Sorted(maps.Keys(b.nodes)) {
		b.computeAccepts(b.nodes[ptr], map[*node]bool{})
	}
	return &Schema{root: root, validator: validator}, nil
}

var errNoLoad = errors.New("only local references (#...) are allowed")

type noLoader struct{}

func (noLoader) Load(string) (any, error) { return nil, errNoLoad }

// builder turns the decoded schema into nodes, one per JSON pointer, so that
// recursive references become cycles in the graph instead of endless
// expansion.
type builder struct {
	doc   any
	nodes map[string]*node
}

func (b *builder) build(ptr string, raw any) *node {
	if n, ok := b.nodes[ptr]; ok {
		return n
	}
	n := &node{own: anyType}
	b.nodes[ptr] = n
	obj, ok := raw.(map[string]any)
	if !ok {
		return n // a boolean schema constrains nothing coercion can use
	}
	n.own = ownTypes(obj)
	if props, ok := obj["properties"].(map[string]any); ok {
		n.props = make(map[string]*node, len(props))
		for k, sub := range props {
			n.props[k] = b.build(ptr+"/properties/"+escapeToken(k), sub)
		}
	}
	if pats, ok := obj["patternProperties"].(map[string]any); ok {
		keys := slices.Sorted(maps.Keys(pats)) // map order is random; be stable
		for _, p := range keys {
			// The validator has compiled the same pattern with the same
			// engine, so this only fails for a pattern it rejected.
			if re, err := regexp.Compile(p); err == nil {
				n.patterns = append(n.patterns, pattern{re: re, sub: b.build(ptr+"/patternProperties/"+escapeToken(p), pats[p])})
			}
		}
	}
	if sub, ok := obj["additionalProperties"].(map[string]any); ok {
		n.additional = b.build(ptr+"/additionalProperties", sub)
	}
	n.prefix = b.buildList(ptr+"/prefixItems", obj["prefixItems"])
	switch items := obj["items"].(type) {
	case map[string]any:
		n.items = b.build(ptr+"/items", items)
	case []any: // draft 7 tuple form
		n.prefix = b.buildList(ptr+"/items", items)
		if sub, ok := obj["additionalItems"].(map[string]any); ok {
			n.items = b.build(ptr+"/additionalItems", sub)
		}
	}
	if req, ok := obj["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				n.required = append(n.required, s)
			}
		}
	}
	if ref, ok := obj["$ref"].(string); ok {
		if target, tptr, ok := b.resolve(ref); ok {
			n.also = append(n.also, b.build(tptr, target))
		}
	}
	n.also = append(n.also, b.buildList(ptr+"/allOf", obj["allOf"])...)
	n.oneOf = append(b.buildList(ptr+"/anyOf", obj["anyOf"]), b.buildList(ptr+"/oneOf", obj["oneOf"])...)
	return n
}

func (b *builder) buildList(ptr string, raw any) []*node {
	list, ok := raw.([]any)
	if !ok {
		return nil
	}
	out := make([]*node, len(list))
	for i, sub := range list {
		out[i] = b.build(fmt.Sprintf("%s/%d", ptr, i), sub)
	}
	return out
}

// resolve follows a local reference ("#", "#/$defs/x", "#/definitions/x")
// and returns the target with its canonical pointer. Other references
// (anchors, other documents) are left to the validator; for coercion they
// constrain nothing.
func (b *builder) resolve(ref string) (any, string, bool) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, "", false
	}
	frag, err := url.PathUnescape(frag)
	if err != nil || (frag != "" && frag[0] != '/') {
		return nil, "", false
	}
	cur := b.doc
	ptr := ""
	if frag == "" {
		return cur, ptr, true
	}
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			if cur, ok = c[tok]; !ok {
				return nil, "", false
			}
		case []any:
			i, err := parseIndex(tok)
			if err != nil || i >= len(c) {
				return nil, "", false
			}
			cur = c[i]
		default:
			return nil, "", false
		}
		ptr += "/" + escapeToken(tok)
	}
	return cur, ptr, true
}

// computeAccepts narrows a node's own types by everything that also applies
// and by the union of its one-of branches. A reference cycle counts as no
// constraint on the edge that closes it.
func (b *builder) computeAccepts(n *node, visiting map[*node]bool) typeList {
	if n.done {
		return n.accepts
	}
	if visiting[n] {
		return anyType
	}
	visiting[n] = true
	t := n.own
	for _, a := range n.also {
		t = intersect(t, b.computeAccepts(a, visiting))
	}
	if len(n.oneOf) > 0 {
		u := typeList{list: []jtype{}}
		for _, br := range n.oneOf {
			u = union(u, b.computeAccepts(br, visiting))
		}
		t = intersect(t, u)
	}
	delete(visiting, n)
	n.accepts, n.done = t, true
	return t
}

// ownTypes reads type (a name or a list) and OpenAPI's nullable; without a
// type, enum or const values imply the types they have.
func ownTypes(obj map[string]any) typeList {
	var l typeList
	switch t := obj["type"].(type) {
	case string:
		if jt, ok := parseType(t); ok {
			l = l.add(jt)
		}
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				if jt, ok := parseType(s); ok {
					l = l.add(jt)
				}
			}
		}
	default:
		var values []any
		if enum, ok := obj["enum"].([]any); ok {
			values = enum
		} else if c, ok := obj["const"]; ok {
			values = []any{c}
		} else {
			return anyType
		}
		for _, v := range values {
			l = l.add(typeOfAny(v))
		}
	}
	if l.list == nil {
		return anyType
	}
	if nullable, _ := obj["nullable"].(bool); nullable {
		l = l.add(tNull)
	}
	return l
}

func typeOfAny(v any) jtype {
	switch v := v.(type) {
	case nil:
		return tNull
	case bool:
		return tBoolean
	case json.Number:
		if isIntegerLiteral(string(v)) {
			return tInteger
		}
		return tNumber
	case string:
		return tString
	case []any:
		return tArray
	default:
		return tObject
	}
}

func escapeToken(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}
