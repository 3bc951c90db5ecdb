package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"

	"github.com/vmihailenco/msgpack/v5"
)

// mediaType returns the content type of event data named by a
// ce-datacontenttype value, msgpack when it is empty. Parameters are
// ignored: producers in other languages often send
// "application/json; charset=utf-8", which means the same.
func mediaType(v string) (string, error) {
	if v == "" {
		return ContentMsgpack, nil
	}
	mt, _, err := mime.ParseMediaType(v)
	if err == nil && (mt == ContentMsgpack || mt == ContentJSON) {
		return mt, nil
	}
	return "", &FieldError{Field: hdrContentType, Reason: fmt.Sprintf("unsupported %q (use %s or %s)", v, ContentMsgpack, ContentJSON)}
}

// unmarshalData decodes body, of content type ct, into d.
func unmarshalData(ct string, body []byte, d Data) error {
	if ct == ContentJSON {
		return unmarshalJSON(body, d)
	}
	return unmarshalMsgpack(body, d)
}

// unmarshalMsgpack accepts exactly one msgpack map. The decoder alone would
// also take nil or an empty array (and zero the payload, so the sentinels of
// newData could no longer tell a missing field from a zero one), an array of
// the fields in declaration order, and trailing bytes.
func unmarshalMsgpack(body []byte, d Data) error {
	if err := checkMsgpack(body); err != nil {
		return &FieldError{Field: "data", Reason: "not well-formed msgpack", Err: err}
	}
	if !isMsgpackMap(body[0]) {
		return &FieldError{Field: "data", Reason: "not a msgpack map of " + d.EventType()}
	}
	if err := msgpack.Unmarshal(body, d); err != nil {
		return blameMsgpack(d, body, err)
	}
	return nil
}

// unmarshalJSON accepts exactly one JSON object; encoding/json alone would
// take null and leave the payload as it was.
func unmarshalJSON(body []byte, d Data) error {
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return &FieldError{Field: "data", Reason: "not a JSON object of " + d.EventType()}
	}
	if err := json.Unmarshal(body, d); err != nil {
		return blameJSON(d, body, err)
	}
	return nil
}
