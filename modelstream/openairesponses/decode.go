package openairesponses

import (
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is a small JSON reader for event data, after the one in
// modelstream/anthropic: the whole event is validated as strictly as
// encoding/json does, but only the fields of wireEvent are materialized,
// strings without escapes are not copied, and string values that are only
// joined (deltas, arguments) are not even unescaped until the call ends.
// Responses events are often large (response.completed repeats the whole
// output), so skipping what is not needed is most of the work.
// FuzzDecodeEvent checks it against encoding/json.

// maxDepth bounds nesting as encoding/json does, so both accept the same inputs.
const maxDepth = 10000

// syntaxError is malformed JSON; offset counts the bytes read up to and
// including the offending one, as json.SyntaxError.Offset does.
type syntaxError struct {
	msg    string
	offset int64
}

func (e *syntaxError) Error() string { return e.msg }

// shapeError is well-formed JSON where a value has an unexpected type. Like
// encoding/json, the decoder then skips the value and decodes the rest.
type shapeError struct {
	msg    string
	offset int64
}

func (e *shapeError) Error() string { return e.msg }

// decoder reads one event's data. arena holds the unescaped strings of the
// current event; byte-slice fields may point into it until the next event.
type decoder struct {
	data  []byte
	pos   int
	depth int
	shape *shapeError
	arena []byte
}

// decodeEvent fills w from data. It returns a *syntaxError for malformed
// JSON, or else a *shapeError for the first value of an unexpected type,
// with everything else decoded.
func (d *decoder) decodeEvent(data []byte, w *wireEvent) error {
	d.data, d.pos, d.depth, d.shape, d.arena = data, 0, 0, nil, d.arena[:0]
	w.reset()
	d.skipSpace()
	var err error
	switch {
	case d.pos == len(d.data):
		return d.eof()
	case d.data[d.pos] == '{':
		err = d.object(func(key []byte) error { return d.eventField(key, w) })
	default:
		start := d.pos
		if err = d.skipValue(); err == nil && !isNull(d.data[start:d.pos]) {
			d.mismatch(start, "event")
		}
	}
	if err != nil {
		return err
	}
	d.skipSpace()
	if d.pos < len(d.data) {
		return d.invalid("after top-level value")
	}
	if d.shape != nil {
		return d.shape
	}
	return nil
}

func (d *decoder) eventField(key []byte, w *wireEvent) error {
	switch string(key) {
	case "type":
		return d.typeField(&w.Type, "type")
	case "output_index":
		return d.intField(&w.OutputIndex, &w.HasOutputIndex, "output_index")
	case "item_id":
		return d.bytesField(&w.ItemID, "item_id")
	case "name":
		return d.bytesField(&w.Name, "name")
	case "delta":
		return d.escapedField(&w.Delta, nil, "delta")
	case "arguments":
		return d.escapedField(&w.Arguments, &w.HasArguments, "arguments")
	case "error":
		return d.rawField(&w.Error)
	case "item":
		w.HasItem = true
		w.Item = wireItem{}
		return d.item(&w.Item, "item")
	case "response":
		r := &w.Response
		return d.objectField("response", func(key []byte) error {
			switch string(key) {
			case "id":
				return d.bytesField(&r.ID, "response.id")
			case "status":
				return d.bytesField(&r.Status, "response.status")
			case "error":
				return d.rawField(&r.Error)
			case "incomplete_details":
				return d.objectField("response.incomplete_details", func(key []byte) error {
					if string(key) == "reason" {
						return d.bytesField(&r.IncompleteReason, "response.incomplete_details.reason")
					}
					return d.skipValue()
				})
			case "output":
				r.Output = r.Output[:0]
				return d.arrayField("response.output", func() error {
					return d.item(r.addOutput(), "response.output[]")
				})
			}
			return d.skipValue()
		})
	}
	return d.skipValue()
}

// item reads an output item.
func (d *decoder) item(it *wireItem, name string) error {
	return d.objectField(name, func(key []byte) error {
		switch string(key) {
		case "type":
			return d.bytesField(&it.Type, "item.type")
		case "id":
			return d.bytesField(&it.ID, "item.id")
		case "call_id":
			return d.bytesField(&it.CallID, "item.call_id")
		case "name":
			return d.bytesField(&it.Name, "item.name")
		case "status":
			return d.bytesField(&it.Status, "item.status")
		case "arguments":
			return d.escapedField(&it.Arguments, &it.HasArguments, "item.arguments")
		}
		return d.skipValue()
	})
}

// typeField reads the event type, without allocating for the types a stream repeats.
func (d *decoder) typeField(dst *string, name string) error {
	var b []byte
	if err := d.bytesField(&b, name); err != nil || b == nil {
		return err
	}
	*dst = intern(b)
	return nil
}

// escapedField reads a string as its content still escaped, so that the
// fragments of a call can be joined before they are unescaped: a surrogate
// pair or a UTF-8 sequence split between two deltas then survives. *has,
// if has is not nil, is set for any string.
func (d *decoder) escapedField(dst *[]byte, has *bool, name string) error {
	if d.pos < len(d.data) && d.data[d.pos] == '"' {
		start := d.pos
		if _, err := d.scanString(); err != nil {
			return err
		}
		*dst = d.data[start+1 : d.pos-1 : d.pos-1]
		if has != nil {
			*has = true
		}
		return nil
	}
	return d.other(name)
}

// intern returns s as a string, without allocating for the event types a
// stream repeats.
func intern(s []byte) string {
	switch string(s) {
	case "response.function_call_arguments.delta":
		return "response.function_call_arguments.delta"
	case "response.function_call_arguments.done":
		return "response.function_call_arguments.done"
	case "response.output_text.delta":
		return "response.output_text.delta"
	case "response.reasoning_summary_text.delta":
		return "response.reasoning_summary_text.delta"
	case "response.reasoning_text.delta":
		return "response.reasoning_text.delta"
	case "response.output_item.added":
		return "response.output_item.added"
	case "response.output_item.done":
		return "response.output_item.done"
	case "response.content_part.added":
		return "response.content_part.added"
	case "response.content_part.done":
		return "response.content_part.done"
	case "response.output_text.done":
		return "response.output_text.done"
	}
	return string(s)
}

// object reads an object, handing each key to field, which must consume the value.
func (d *decoder) object(field func(key []byte) error) error {
	if d.depth++; d.depth > maxDepth {
		return d.invalid("exceeded max depth")
	}
	d.pos++ // '{'
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		d.depth--
		return nil
	}
	for {
		if d.pos == len(d.data) {
			return d.eof()
		}
		if d.data[d.pos] != '"' {
			return d.invalid("looking for beginning of object key string")
		}
		key, err := d.str()
		if err != nil {
			return err
		}
		d.skipSpace()
		if d.pos == len(d.data) {
			return d.eof()
		}
		if d.data[d.pos] != ':' {
			return d.invalid("after object key")
		}
		d.pos++
		d.skipSpace()
		if err := field(key); err != nil {
			return err
		}
		d.skipSpace()
		if d.pos == len(d.data) {
			return d.eof()
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.skipSpace()
		case '}':
			d.pos++
			d.depth--
			return nil
		default:
			return d.invalid("after object key:value pair")
		}
	}
}

// objectField reads an object into field, or skips a null or a value of another type.
func (d *decoder) objectField(name string, field func(key []byte) error) error {
	if d.pos < len(d.data) && d.data[d.pos] == '{' {
		return d.object(field)
	}
	return d.other(name)
}

// arrayField reads an array, handing each element to elem, or skips a null
// or a value of another type.
func (d *decoder) arrayField(name string, elem func() error) error {
	if d.pos < len(d.data) && d.data[d.pos] == '[' {
		return d.array(elem)
	}
	return d.other(name)
}

func (d *decoder) bytesField(dst *[]byte, name string) error {
	if d.pos < len(d.data) && d.data[d.pos] == '"' {
		s, err := d.str()
		if err == nil {
			*dst = s
		}
		return err
	}
	return d.other(name)
}

// intField reads an integer into dst and sets *has, if has is not nil.
func (d *decoder) intField(dst *int, has *bool, name string) error {
	start := d.pos
	if err := d.skipValue(); err != nil {
		return err
	}
	v := d.data[start:d.pos]
	if v[0] != '-' && !isDigit(v[0]) {
		if !isNull(v) {
			d.mismatch(start, name)
		}
		return nil
	}
	n, err := strconv.ParseInt(string(v), 10, 0)
	if err != nil {
		d.mismatch(start, name)
		return nil
	}
	*dst = int(n)
	if has != nil {
		*has = true
	}
	return nil
}

// rawField keeps a value as it is, a slice of the data; a null is kept as
// "null", as json.RawMessage does.
func (d *decoder) rawField(dst *[]byte) error {
	start := d.pos
	if err := d.skipValue(); err != nil {
		return err
	}
	*dst = d.data[start:d.pos:d.pos]
	return nil
}

// other skips a value that has not the type name wants, noting the mismatch unless it is null.
func (d *decoder) other(name string) error {
	start := d.pos
	if err := d.skipValue(); err != nil {
		return err
	}
	if !isNull(d.data[start:d.pos]) {
		d.mismatch(start, name)
	}
	return nil
}

func (d *decoder) mismatch(start int, name string) {
	if d.shape == nil {
		d.shape = &shapeError{
			msg:    fmt.Sprintf("json: cannot use %s value for field %s", kind(d.data[start]), name),
			offset: int64(d.pos),
		}
	}
}

func isNull(v []byte) bool { return string(v) == "null" }

// skipValue validates and skips one value.
func (d *decoder) skipValue() error {
	if d.pos == len(d.data) {
		return d.eof()
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(func([]byte) error { return d.skipValue() })
	case c == '[':
		return d.array(d.skipValue)
	case c == '"':
		_, err := d.scanString()
		return err
	case c == '-' || isDigit(c):
		return d.number()
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	}
	return d.invalid("looking for beginning of value")
}

// array reads an array, handing each element to elem, which must consume it.
func (d *decoder) array(elem func() error) error {
	if d.depth++; d.depth > maxDepth {
		return d.invalid("exceeded max depth")
	}
	d.pos++ // '['
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		d.depth--
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		d.skipSpace()
		if d.pos == len(d.data) {
			return d.eof()
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.skipSpace()
		case ']':
			d.pos++
			d.depth--
			return nil
		default:
			return d.invalid("after array element")
		}
	}
}

func (d *decoder) literal(lit string) error {
	for i := range len(lit) {
		if d.pos == len(d.data) {
			return d.eof()
		}
		if d.data[d.pos] != lit[i] {
			return d.invalid("in literal " + lit + " (expecting " + quoteChar(lit[i]) + ")")
		}
		d.pos++
	}
	return nil
}

// number checks the JSON number grammar: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?
func (d *decoder) number() error {
	if d.data[d.pos] == '-' {
		d.pos++
		if d.pos == len(d.data) {
			return d.eof()
		}
		if !isDigit(d.data[d.pos]) {
			return d.invalid("in numeric literal")
		}
	}
	if d.data[d.pos] == '0' {
		d.pos++
	} else {
		d.digits()
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if d.pos == len(d.data) {
			return d.eof()
		}
		if !isDigit(d.data[d.pos]) {
			return d.invalid("after decimal point in numeric literal")
		}
		d.digits()
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if d.pos == len(d.data) {
			return d.eof()
		}
		if !isDigit(d.data[d.pos]) {
			return d.invalid("in exponent of numeric literal")
		}
		d.digits()
	}
	return nil
}

func (d *decoder) digits() {
	for d.pos < len(d.data) && isDigit(d.data[d.pos]) {
		d.pos++
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// str reads a string and returns its value: a slice of the input when it
// needs no unescaping, else of the arena.
func (d *decoder) str() ([]byte, error) {
	start := d.pos + 1
	plain, err := d.scanString()
	if err != nil {
		return nil, err
	}
	s := d.data[start : d.pos-1 : d.pos-1]
	if plain {
		return s, nil
	}
	n := len(d.arena)
	d.arena = unquote(d.arena, s)
	return d.arena[n:len(d.arena):len(d.arena)], nil
}

// scanString validates the string at d.pos and moves past it. plain reports
// that its content is already its value: no escapes and valid UTF-8.
func (d *decoder) scanString() (plain bool, err error) {
	d.pos++ // opening quote
	plain = true
	for {
		// Jump to the next byte that needs a look.
		for d.pos < len(d.data) && plainByte[d.data[d.pos]] {
			d.pos++
		}
		if d.pos == len(d.data) {
			return false, d.eof()
		}
		switch c := d.data[d.pos]; {
		case c == '"':
			d.pos++
			return plain, nil
		case c == '\\':
			plain = false
			if err := d.escape(); err != nil {
				return false, err
			}
		case c < 0x20:
			return false, d.invalid("in string literal")
		default:
			r, size := utf8.DecodeRune(d.data[d.pos:])
			if r == utf8.RuneError && size == 1 {
				plain = false // invalid UTF-8 becomes U+FFFD, as encoding/json does
			}
			d.pos += size
		}
	}
}

// plainByte marks the bytes a string holds as they are: ASCII other than
// control characters, the quote and the backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// escape validates the escape sequence at d.pos.
func (d *decoder) escape() error {
	d.pos++ // backslash
	if d.pos == len(d.data) {
		return d.eof()
	}
	switch d.data[d.pos] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		d.pos++
		return nil
	case 'u':
		d.pos++
		for range 4 {
			if d.pos == len(d.data) {
				return d.eof()
			}
			if hexVal(d.data[d.pos]) < 0 {
				return d.invalid("in \\u hexadecimal character escape")
			}
			d.pos++
		}
		return nil
	}
	return d.invalid("in string escape code")
}

func hexVal(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

// unquote appends the value of the validated string content s to dst, with
// encoding/json's rules for what is not well-formed: a lone surrogate escape
// or an invalid UTF-8 byte becomes U+FFFD.
func unquote(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			if s[i+1] != 'u' {
				dst = append(dst, unescape[s[i+1]])
				i += 2
				continue
			}
			r := u4(s[i+2:])
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2 = u4(s[i+2:])
				}
				if pair := utf16.DecodeRune(r, r2); pair != unicode.ReplacementChar {
					r = pair
					i += 6
				} else {
					r = unicode.ReplacementChar
				}
			}
			dst = utf8.AppendRune(dst, r)
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			dst = utf8.AppendRune(dst, r) // RuneError for an invalid byte
			i += size
		}
	}
	return dst
}

// unescape maps the byte after a backslash to what it stands for.
var unescape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// u4 reads four validated hex digits.
func u4(s []byte) rune {
	return hexVal(s[0])<<12 | hexVal(s[1])<<8 | hexVal(s[2])<<4 | hexVal(s[3])
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) eof() error {
	return &syntaxError{msg: "unexpected end of JSON input", offset: int64(len(d.data))}
}

func (d *decoder) invalid(context string) error {
	return d.syntax("invalid character " + quoteChar(d.data[d.pos]) + " " + context)
}

func (d *decoder) syntax(msg string) error {
	return &syntaxError{msg: msg, offset: int64(d.pos + 1)}
}

// quoteChar formats c as encoding/json does in its errors.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}
