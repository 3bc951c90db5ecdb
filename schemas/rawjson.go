package schemas

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// RawJSON is a JSON value carried verbatim. In JSON it is embedded as the
// value itself; in msgpack it is a string holding the JSON text, so that
// big integers and number spellings survive. A msgpack producer may also
// send the value as a native msgpack map; it is converted to JSON on decode.
type RawJSON []byte

// MarshalJSON implements json.Marshaler.
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *RawJSON) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*r = nil
		return nil
	}
	*r = append((*r)[:0], b...)
	return nil
}

var errNotJSON = errors.New("not valid JSON text")

// EncodeMsgpack implements msgpack.CustomEncoder.
func (r RawJSON) EncodeMsgpack(enc *msgpack.Encoder) error {
	if len(r) == 0 {
		return enc.EncodeNil()
	}
	return enc.EncodeBytes(r)
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (r *RawJSON) DecodeMsgpack(dec *msgpack.Decoder) error {
	c, err := dec.PeekCode()
	if err != nil {
		return err
	}
	switch {
	case c == msgpcode.Nil:
		*r = nil
		return dec.Skip()
	case msgpcode.IsBin(c) || msgpcode.IsString(c):
		b, err := dec.DecodeBytes()
		if err != nil {
			return err
		}
		if !json.Valid(b) {
			return errNotJSON
		}
		if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
			*r = nil // as UnmarshalJSON does, so that null counts as absent in both encodings
			return nil
		}
		*r = b
		return nil
	default:
		v, err := dec.DecodeInterfaceLoose()
		if err != nil {
			return err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		*r = b
		return nil
	}
}
