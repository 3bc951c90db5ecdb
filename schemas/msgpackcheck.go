package schemas

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// maxDepth bounds the nesting of event data. It is the limit encoding/json
// applies, so both encodings accept the same inputs.
const maxDepth = 10000

// checkMsgpack reports whether b holds exactly one well-formed msgpack value,
// nested at most maxDepth deep, whose declared lengths all fit in b.
//
// Both limits keep a hostile message from killing the process, which no
// recover can prevent. The msgpack decoder trusts declared lengths when it
// decodes into an interface, as it does for an `input` sent as a native map:
// an array header claiming 2^32-1 elements makes it allocate 64 GiB. And it
// recurses without limit: 1 MB of nested array headers (NATS's default
// max_payload) overflows the goroutine stack. One pass over the bytes,
// before any decoding, rules both out; once every element is known to take
// at least one byte of b, no allocation can exceed a small multiple of len(b).
func checkMsgpack(b []byte) error {
	s := msgpackScanner{b: b}
	if err := s.value(0); err != nil {
		return err
	}
	if s.off != len(b) {
		return fmt.Errorf("%d bytes after the value", len(b)-s.off)
	}
	return nil
}

// isMsgpackMap reports whether c starts a map.
func isMsgpackMap(c byte) bool {
	return c >= msgpcode.FixedMapLow && c <= msgpcode.FixedMapHigh || c == msgpcode.Map16 || c == msgpcode.Map32
}

type msgpackScanner struct {
	b   []byte
	off int
}

// value scans one value; depth counts the containers around it.
func (s *msgpackScanner) value(depth int) error {
	if s.off >= len(s.b) {
		return fmt.Errorf("unexpected end at byte %d", s.off)
	}
	c := s.b[s.off]
	s.off++
	switch {
	case c <= msgpcode.PosFixedNumHigh || c >= msgpcode.NegFixedNumLow:
		return nil
	case c >= msgpcode.FixedMapLow && c <= msgpcode.FixedMapHigh:
		return s.items(2*int(c&msgpcode.FixedMapMask), depth)
	case c >= msgpcode.FixedArrayLow && c <= msgpcode.FixedArrayHigh:
		return s.items(int(c&msgpcode.FixedArrayMask), depth)
	case c >= msgpcode.FixedStrLow && c <= msgpcode.FixedStrHigh:
		return s.skip(int(c & msgpcode.FixedStrMask))
	}
	switch c {
	case msgpcode.Nil, msgpcode.False, msgpcode.True:
		return nil
	case msgpcode.Uint8, msgpcode.Int8:
		return s.skip(1)
	case msgpcode.Uint16, msgpcode.Int16:
		return s.skip(2)
	case msgpcode.Uint32, msgpcode.Int32, msgpcode.Float:
		return s.skip(4)
	case msgpcode.Uint64, msgpcode.Int64, msgpcode.Double:
		return s.skip(8)
	case msgpcode.FixExt1, msgpcode.FixExt2, msgpcode.FixExt4, msgpcode.FixExt8, msgpcode.FixExt16:
		return s.skip(1 + 1<<(c-msgpcode.FixExt1)) // type byte, then 1 to 16 bytes
	case msgpcode.Str8, msgpcode.Bin8:
		return s.sized(1, 0)
	case msgpcode.Str16, msgpcode.Bin16:
		return s.sized(2, 0)
	case msgpcode.Str32, msgpcode.Bin32:
		return s.sized(4, 0)
	case msgpcode.Ext8:
		return s.sized(1, 1)
	case msgpcode.Ext16:
		return s.sized(2, 1)
	case msgpcode.Ext32:
		return s.sized(4, 1)
	case msgpcode.Array16, msgpcode.Array32, msgpcode.Map16, msgpcode.Map32:
		width := 2
		if c == msgpcode.Array32 || c == msgpcode.Map32 {
			width = 4
		}
		n, err := s.length(width)
		if err != nil {
			return err
		}
		if c == msgpcode.Map16 || c == msgpcode.Map32 {
			n *= 2
		}
		return s.items(n, depth)
	}
	return fmt.Errorf("invalid code %#x at byte %d", c, s.off-1)
}

// items scans the n elements of a container that has depth containers
// around it. As in encoding/json, maxDepth containers may nest, scalars
// inside the innermost one do not count.
func (s *msgpackScanner) items(n, depth int) error {
	if depth >= maxDepth {
		return fmt.Errorf("nested deeper than %d", maxDepth)
	}
	if n < 0 || n > len(s.b)-s.off { // n < 0: a 32-bit length overflowed int
		return fmt.Errorf("%d elements declared at byte %d, %d bytes left", n, s.off, len(s.b)-s.off)
	}
	for range n {
		if err := s.value(depth + 1); err != nil {
			return err
		}
	}
	return nil
}

// sized skips a length-prefixed payload: a big-endian length of width bytes,
// extra bytes (the ext type), then length bytes.
func (s *msgpackScanner) sized(width, extra int) error {
	n, err := s.length(width)
	if err != nil {
		return err
	}
	return s.skip(n + extra)
}

func (s *msgpackScanner) length(width int) (int, error) {
	if err := s.skip(width); err != nil {
		return 0, err
	}
	n := 0
	for _, c := range s.b[s.off-width : s.off] {
		n = n<<8 | int(c)
	}
	return n, nil
}

func (s *msgpackScanner) skip(n int) error {
	if n < 0 || n > len(s.b)-s.off {
		return fmt.Errorf("%d bytes declared at byte %d, %d left", n, s.off, len(s.b)-s.off)
	}
	s.off += n
	return nil
}
