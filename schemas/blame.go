package schemas

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
)

// blameMsgpack names the field at fault in a msgpack body that failed to decode.
func blameMsgpack(d Data, body []byte, cause error) error {
	var fields map[string]msgpack.RawMessage
	if err := msgpack.Unmarshal(body, &fields); err != nil {
		return &FieldError{Field: "data", Reason: "not a msgpack map of " + d.EventType(), Err: cause}
	}
	return blame(d, fields, msgpack.Unmarshal, cause)
}

// blameJSON names the field at fault in a JSON body that failed to decode.
func blameJSON(d Data, body []byte, cause error) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return &FieldError{Field: "data", Reason: "not a JSON object of " + d.EventType(), Err: cause}
	}
	return blame(d, fields, json.Unmarshal, cause)
}

// blame turns a whole-body decode failure into a *FieldError naming the
// first field, in declaration order, whose value does not decode on its own.
// msgpack's errors never name the field, and encoding/json's do only for a
// plain type mismatch (not, say, a bad time), so the body is split into its
// fields and each is decoded again; this runs only on the error path.
func blame[R ~[]byte](d Data, fields map[string]R, unmarshal func([]byte, any) error, cause error) error {
	rt := reflect.TypeOf(d).Elem()
	for i := range rt.NumField() {
		f := rt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		raw, ok := fields[name]
		if !ok {
			continue
		}
		if err := unmarshal(raw, reflect.New(f.Type).Interface()); err != nil {
			return &FieldError{Field: name, Reason: "expected " + f.Type.String(), Err: err}
		}
	}
	return &FieldError{Field: "data", Reason: "does not decode as " + d.EventType(), Err: cause}
}
