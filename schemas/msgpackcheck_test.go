package schemas

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

func TestCheckMsgpackAcceptsEveryKind(t *testing.T) {
	values := []any{
		nil, true, false,
		0, 127, -1, -32, -33, math.MaxInt8 + 1, math.MaxUint16, math.MaxUint32, uint64(math.MaxUint64),
		math.MinInt8, math.MinInt16, math.MinInt32, int64(math.MinInt64),
		float32(1.5), 2.5,
		"", "short", string(bytes.Repeat([]byte("x"), 40)), string(bytes.Repeat([]byte("x"), 300)), string(bytes.Repeat([]byte("x"), 70000)),
		[]byte{}, []byte("bin"), bytes.Repeat([]byte{1}, 300), bytes.Repeat([]byte{1}, 70000),
		[]any{}, []any{1, "a", nil}, make([]any, 20), make([]any, 70000),
		map[string]any{}, map[string]any{"a": map[string]any{"b": []any{1}}},
		time.Unix(1, 0), time.Unix(1, 5), time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
	}
	big := map[string]any{}
	for i := range 20 {
		big[string(rune('a'+i))] = i
	}
	values = append(values, big)
	for _, v := range values {
		b, err := msgpack.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkMsgpack(b); err != nil {
			t.Errorf("%T (% x…): %v", v, b[:min(len(b), 8)], err)
		}
	}
	// Extensions of every size, including ext8/16/32.
	for _, n := range []int{1, 2, 4, 8, 16, 3, 300, 70000} {
		var buf bytes.Buffer
		enc := msgpack.NewEncoder(&buf)
		if err := enc.EncodeExtHeader(5, n); err != nil {
			t.Fatal(err)
		}
		buf.Write(make([]byte, n))
		if err := checkMsgpack(buf.Bytes()); err != nil {
			t.Errorf("ext of %d bytes: %v", n, err)
		}
	}
}

func TestCheckMsgpackRejects(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":            nil,
		"never-used code":  {0xc1},
		"truncated int":    {0xcd, 0x01},
		"truncated str":    {0xa5, 'a', 'b'},
		"truncated str32":  {0xdb, 0xff, 0xff, 0xff, 0xff, 'a'},
		"huge array":       {0xdd, 0xff, 0xff, 0xff, 0xff, 0x00},
		"huge map":         {0xdf, 0x7f, 0xff, 0xff, 0xff},
		"short map":        {0x82, 0xa1, 'a', 0x01, 0xa1, 'b'},
		"truncated ext":    {0xc7, 0x04, 0x01, 0x00},
		"truncated fixext": {0xd8, 0x01, 0x00},
		"trailing bytes":   {0x80, 0x80},
		"too deep":         append(bytes.Repeat([]byte{0x91}, maxDepth+1), 0x00),
	} {
		if err := checkMsgpack(b); err == nil {
			t.Errorf("%s (% x…): accepted", name, b[:min(len(b), 8)])
		}
	}
	if err := checkMsgpack(append(bytes.Repeat([]byte{0x91}, maxDepth), 0x00)); err != nil {
		t.Errorf("nesting of exactly maxDepth: %v", err)
	}
}

// Both encodings accept the same nesting, so a producer can switch freely.
func TestMaxDepthIsEncodingJSONs(t *testing.T) {
	nested := func(n int) []byte { return []byte(strings.Repeat("[", n) + strings.Repeat("]", n)) }
	var v any
	if err := json.Unmarshal(nested(maxDepth), &v); err != nil {
		t.Errorf("encoding/json rejects %d levels: %v", maxDepth, err)
	}
	if err := json.Unmarshal(nested(maxDepth+1), &v); err == nil {
		t.Errorf("encoding/json accepts %d levels", maxDepth+1)
	}
}
