package schemas

import "fmt"

// FieldError says which field of an event was wrong and how. Headers are
// named as on the wire (ce-type), data fields by their JSON/msgpack name.
type FieldError struct {
	Field  string
	Reason string
	// Limit names the configured limit the field is over (Limits), empty
	// when the field is wrong in another way.
	Limit string
	Err   error
}

// Error implements error.
func (e *FieldError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("schemas: field %s: %s: %v", e.Field, e.Reason, e.Err)
	}
	return fmt.Sprintf("schemas: field %s: %s", e.Field, e.Reason)
}

// Unwrap returns the underlying decode error, if any.
func (e *FieldError) Unwrap() error { return e.Err }
