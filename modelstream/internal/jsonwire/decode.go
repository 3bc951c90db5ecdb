// Package jsonwire is the JSON reader the streaming parsers of modelstream
// share: a scanner that validates a whole value as strictly as encoding/json
// does, with the same error messages and offsets, while the caller
// materializes only the fields it needs. Strings without escapes are not
// copied at all. Each parser keeps its own field extraction on top of
// Decoder; FuzzDecode checks the scanner against encoding/json.
package jsonwire

import (
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds nesting as encoding/json does, so both accept the same inputs.
const maxDepth = 10000

// SyntaxError is malformed JSON; Offset counts the bytes read up to and
// including the offending one, as json.SyntaxError.Offset does.
type SyntaxError struct {
	Msg    string
	Offset int64
}

func (e *SyntaxError) Error() string { return e.Msg }

// ShapeError is well-formed JSON where a value has an unexpected type. Like
// encoding/json, the decoder then skips the value and decodes the rest.
type ShapeError struct {
	Msg    string
	Offset int64
}

func (e *ShapeError) Error() string { return e.Msg }

// Decoder reads one JSON value. Data and Pos are the input and the read
// position, which field functions may look at. The arena holds the unescaped
// strings of the current value; byte slices returned by Str and BytesField
// may point into it until the next Decode.
type Decoder struct {
	Data []byte
	Pos  int
	// Quiet, while set, keeps values of the wrong type from being reported:
	// they are skipped silently.
	Quiet bool
	depth int
	shape *ShapeError
	arena []byte
}

// Decode reads data, handing each key of a top-level object to field, which
// must consume the value. It returns a *SyntaxError for malformed JSON, or
// else a *ShapeError for the first value of an unexpected type (a top-level
// value other than an object or null counts as one), with everything else
// decoded.
func (d *Decoder) Decode(data []byte, field func(key []byte) error) error {
	d.Data, d.Pos, d.depth, d.shape, d.arena = data, 0, 0, nil, d.arena[:0]
	d.SkipSpace()
	var err error
	switch {
	case d.Pos == len(d.Data):
		return d.EOF()
	case d.Data[d.Pos] == '{':
		err = d.Object(field)
	default:
		start := d.Pos
		if err = d.SkipValue(); err == nil && !IsNull(d.Data[start:d.Pos]) {
			d.Mismatch(start, "event")
		}
	}
	if err != nil {
		return err
	}
	d.SkipSpace()
	if d.Pos < len(d.Data) {
		return d.Invalid("after top-level value")
	}
	if d.shape != nil {
		return d.shape
	}
	return nil
}

// Object reads an object, handing each key to field, which must consume the value.
func (d *Decoder) Object(field func(key []byte) error) error {
	if d.depth++; d.depth > maxDepth {
		return d.Invalid("exceeded max depth")
	}
	d.Pos++ // '{'
	d.SkipSpace()
	if d.Pos < len(d.Data) && d.Data[d.Pos] == '}' {
		d.Pos++
		d.depth--
		return nil
	}
	for {
		if d.Pos == len(d.Data) {
			return d.EOF()
		}
		if d.Data[d.Pos] != '"' {
			return d.Invalid("looking for beginning of object key string")
		}
		key, err := d.Str()
		if err != nil {
			return err
		}
		d.SkipSpace()
		if d.Pos == len(d.Data) {
			return d.EOF()
		}
		if d.Data[d.Pos] != ':' {
			return d.Invalid("after object key")
		}
		d.Pos++
		d.SkipSpace()
		if err := field(key); err != nil {
			return err
		}
		d.SkipSpace()
		if d.Pos == len(d.Data) {
			return d.EOF()
		}
		switch d.Data[d.Pos] {
		case ',':
			d.Pos++
			d.SkipSpace()
		case '}':
			d.Pos++
			d.depth--
			return nil
		default:
			return d.Invalid("after object key:value pair")
		}
	}
}

// ObjectField reads an object into field, or skips a null or a value of another type.
func (d *Decoder) ObjectField(name string, field func(key []byte) error) error {
	if d.Pos < len(d.Data) && d.Data[d.Pos] == '{' {
		return d.Object(field)
	}
	return d.Other(name)
}

// ArrayField reads an array, handing each element to elem, or skips a null
// or a value of another type.
func (d *Decoder) ArrayField(name string, elem func() error) error {
	if d.Pos < len(d.Data) && d.Data[d.Pos] == '[' {
		return d.array(elem)
	}
	return d.Other(name)
}

// BytesField reads a string's value into dst, or skips a null or a value of another type.
func (d *Decoder) BytesField(dst *[]byte, name string) error {
	if d.Pos < len(d.Data) && d.Data[d.Pos] == '"' {
		s, err := d.Str()
		if err == nil {
			*dst = s
		}
		return err
	}
	return d.Other(name)
}

// IntField reads an integer into dst and sets *has, if has is not nil.
func (d *Decoder) IntField(dst *int, has *bool, name string) error {
	start := d.Pos
	if err := d.SkipValue(); err != nil {
		return err
	}
	v := d.Data[start:d.Pos]
	if v[0] != '-' && !IsDigit(v[0]) {
		if !IsNull(v) {
			d.Mismatch(start, name)
		}
		return nil
	}
	n, err := strconv.ParseInt(string(v), 10, 0)
	if err != nil {
		d.Mismatch(start, name)
		return nil
	}
	*dst = int(n)
	if has != nil {
		*has = true
	}
	return nil
}

// StringOrObjectField reads a string as its content still escaped, or an
// object as its raw JSON with *isObject set, and sets *has if has is not
// nil; any other value is skipped as Other does. Keeping the content
// escaped lets the fragments of a call be joined before they are
// unescaped, so that a surrogate pair or a UTF-8 sequence split between two
// of them survives. Arguments are a string on the wire, but an object is
// unambiguous, and some items send one.
func (d *Decoder) StringOrObjectField(dst *[]byte, has, isObject *bool, name string) error {
	if d.Pos == len(d.Data) {
		return d.EOF()
	}
	start := d.Pos
	switch d.Data[d.Pos] {
	case '"':
		if _, err := d.ScanString(); err != nil {
			return err
		}
		*dst, *isObject = d.Data[start+1:d.Pos-1:d.Pos-1], false
	case '{':
		if err := d.SkipValue(); err != nil {
			return err
		}
		*dst, *isObject = d.Data[start:d.Pos:d.Pos], true
	default:
		return d.Other(name)
	}
	if has != nil {
		*has = true
	}
	return nil
}

// RawField keeps a value as it is, a slice of the data; a null is kept as
// "null", as json.RawMessage does.
func (d *Decoder) RawField(dst *[]byte) error {
	start := d.Pos
	if err := d.SkipValue(); err != nil {
		return err
	}
	*dst = d.Data[start:d.Pos:d.Pos]
	return nil
}

// Other skips a value that has not the type name wants, noting the mismatch unless it is null.
func (d *Decoder) Other(name string) error {
	start := d.Pos
	if err := d.SkipValue(); err != nil {
		return err
	}
	if !IsNull(d.Data[start:d.Pos]) {
		d.Mismatch(start, name)
	}
	return nil
}

// Mismatch notes that the value at start, now read, has not the type name
// wants, unless an earlier one was noted or d is Quiet.
func (d *Decoder) Mismatch(start int, name string) {
	if d.shape == nil && !d.Quiet {
		d.shape = &ShapeError{
			Msg:    fmt.Sprintf("json: cannot use %s value for field %s", Kind(d.Data[start]), name),
			Offset: int64(d.Pos),
		}
	}
}

// IsNull reports whether the value v is null.
func IsNull(v []byte) bool { return string(v) == "null" }

// SkipValue validates and skips one value.
func (d *Decoder) SkipValue() error {
	if d.Pos == len(d.Data) {
		return d.EOF()
	}
	switch c := d.Data[d.Pos]; {
	case c == '{':
		return d.Object(func([]byte) error { return d.SkipValue() })
	case c == '[':
		return d.array(nil)
	case c == '"':
		_, err := d.ScanString()
		return err
	case c == '-' || IsDigit(c):
		return d.Number()
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	}
	return d.Invalid("looking for beginning of value")
}

// array reads an array, handing each element to elem, which must consume
// it; a nil elem skips the elements.
func (d *Decoder) array(elem func() error) error {
	if d.depth++; d.depth > maxDepth {
		return d.Invalid("exceeded max depth")
	}
	d.Pos++ // '['
	d.SkipSpace()
	if d.Pos < len(d.Data) && d.Data[d.Pos] == ']' {
		d.Pos++
		d.depth--
		return nil
	}
	for {
		var err error
		if elem == nil {
			err = d.SkipValue()
		} else {
			err = elem()
		}
		if err != nil {
			return err
		}
		d.SkipSpace()
		if d.Pos == len(d.Data) {
			return d.EOF()
		}
		switch d.Data[d.Pos] {
		case ',':
			d.Pos++
			d.SkipSpace()
		case ']':
			d.Pos++
			d.depth--
			return nil
		default:
			return d.Invalid("after array element")
		}
	}
}

func (d *Decoder) literal(lit string) error {
	for i := range len(lit) {
		if d.Pos == len(d.Data) {
			return d.EOF()
		}
		if d.Data[d.Pos] != lit[i] {
			return d.Invalid("in literal " + lit + " (expecting " + quoteChar(lit[i]) + ")")
		}
		d.Pos++
	}
	return nil
}

// Number checks the JSON number grammar: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?
func (d *Decoder) Number() error {
	if d.Data[d.Pos] == '-' {
		d.Pos++
		if d.Pos == len(d.Data) {
			return d.EOF()
		}
		if !IsDigit(d.Data[d.Pos]) {
			return d.Invalid("in numeric literal")
		}
	}
	if d.Data[d.Pos] == '0' {
		d.Pos++
	} else {
		d.digits()
	}
	if d.Pos < len(d.Data) && d.Data[d.Pos] == '.' {
		d.Pos++
		if d.Pos == len(d.Data) {
			return d.EOF()
		}
		if !IsDigit(d.Data[d.Pos]) {
			return d.Invalid("after decimal point in numeric literal")
		}
		d.digits()
	}
	if d.Pos < len(d.Data) && (d.Data[d.Pos] == 'e' || d.Data[d.Pos] == 'E') {
		d.Pos++
		if d.Pos < len(d.Data) && (d.Data[d.Pos] == '+' || d.Data[d.Pos] == '-') {
			d.Pos++
		}
		if d.Pos == len(d.Data) {
			return d.EOF()
		}
		if !IsDigit(d.Data[d.Pos]) {
			return d.Invalid("in exponent of numeric literal")
		}
		d.digits()
	}
	return nil
}

func (d *Decoder) digits() {
	for d.Pos < len(d.Data) && IsDigit(d.Data[d.Pos]) {
		d.Pos++
	}
}

// IsDigit reports whether c is an ASCII digit.
func IsDigit(c byte) bool { return '0' <= c && c <= '9' }

// Str reads a string and returns its value: a slice of the input when it
// needs no unescaping, else of the arena.
func (d *Decoder) Str() ([]byte, error) {
	start := d.Pos + 1
	plain, err := d.ScanString()
	if err != nil {
		return nil, err
	}
	s := d.Data[start : d.Pos-1 : d.Pos-1]
	if plain {
		return s, nil
	}
	n := len(d.arena)
	d.arena = Unquote(d.arena, s)
	return d.arena[n:len(d.arena):len(d.arena)], nil
}

// ScanString validates the string at d.Pos and moves past it. plain reports
// that its content is already its value: no escapes and valid UTF-8.
func (d *Decoder) ScanString() (plain bool, err error) {
	d.Pos++ // opening quote
	plain = true
	for {
		// Jump to the next byte that needs a look.
		for d.Pos < len(d.Data) && plainByte[d.Data[d.Pos]] {
			d.Pos++
		}
		if d.Pos == len(d.Data) {
			return false, d.EOF()
		}
		switch c := d.Data[d.Pos]; {
		case c == '"':
			d.Pos++
			return plain, nil
		case c == '\\':
			plain = false
			if err := d.escape(); err != nil {
				return false, err
			}
		case c < 0x20:
			return false, d.Invalid("in string literal")
		default:
			r, size := utf8.DecodeRune(d.Data[d.Pos:])
			if r == utf8.RuneError && size == 1 {
				plain = false // invalid UTF-8 becomes U+FFFD, as encoding/json does
			}
			d.Pos += size
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

// escape validates the escape sequence at d.Pos.
func (d *Decoder) escape() error {
	d.Pos++ // backslash
	if d.Pos == len(d.Data) {
		return d.EOF()
	}
	switch d.Data[d.Pos] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		d.Pos++
		return nil
	case 'u':
		d.Pos++
		for range 4 {
			if d.Pos == len(d.Data) {
				return d.EOF()
			}
			if hexVal(d.Data[d.Pos]) < 0 {
				return d.Invalid("in \\u hexadecimal character escape")
			}
			d.Pos++
		}
		return nil
	}
	return d.Invalid("in string escape code")
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

// Unquote appends the value of the validated string content s to dst, with
// encoding/json's rules for what is not well-formed: a lone surrogate escape
// or an invalid UTF-8 byte becomes U+FFFD.
func Unquote(dst, s []byte) []byte {
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

// SkipSpace moves past JSON white space.
func (d *Decoder) SkipSpace() {
	for d.Pos < len(d.Data) {
		switch d.Data[d.Pos] {
		case ' ', '\t', '\n', '\r':
			d.Pos++
		default:
			return
		}
	}
}

// EOF is the error for input that ends inside a value.
func (d *Decoder) EOF() error {
	return &SyntaxError{Msg: "unexpected end of JSON input", Offset: int64(len(d.Data))}
}

// Invalid is the error for the byte at d.Pos, unexpected in context.
func (d *Decoder) Invalid(context string) error {
	return &SyntaxError{Msg: "invalid character " + quoteChar(d.Data[d.Pos]) + " " + context, Offset: int64(d.Pos + 1)}
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
