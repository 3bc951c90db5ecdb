package schemas

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
)

// blame turns a whole-body decode failure into a *FieldError naming the
// first field whose value does not fit its type. msgpack's own errors do
// not name fields, so the body is decoded again loosely, field by field;
// this runs only on the error path.
func blame(typ string, body []byte, cause error) error {
	var loose map[string]any
	if err := msgpack.Unmarshal(body, &loose); err != nil {
		return &FieldError{Field: "data", Reason: "not a msgpack map of " + typ, Err: cause}
	}
	d, err := newData(typ)
	if err != nil {
		return err
	}
	rt := reflect.TypeOf(d).Elem()
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("msgpack"), ",")
		v, ok := loose[name]
		if !ok {
			continue
		}
		b, err := msgpack.Marshal(v)
		if err != nil {
			continue
		}
		if err := msgpack.Unmarshal(b, reflect.New(f.Type).Interface()); err != nil {
			return &FieldError{Field: name, Reason: fmt.Sprintf("expected %s, got %T", f.Type, v), Err: err}
		}
	}
	return &FieldError{Field: "data", Reason: "does not decode as " + typ, Err: cause}
}
