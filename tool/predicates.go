package tool

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Predicate answers a safety question about one call's input.
type Predicate func(input json.RawMessage) (bool, error)

// Always is a predicate that is true for every input.
func Always(json.RawMessage) (bool, error) { return true, nil }

// IsConcurrencySafe evaluates the concurrency predicate, failing closed.
func (t *Tool) IsConcurrencySafe(input json.RawMessage) bool {
	ok, _ := evalPredicate(t.def.ConcurrencySafe, input)
	return ok
}

// IsReadOnly evaluates the read-only predicate, failing closed.
func (t *Tool) IsReadOnly(input json.RawMessage) bool {
	ok, _ := evalPredicate(t.def.ReadOnly, input)
	return ok
}

// IsDestructive evaluates the destructive predicate; an error counts as false.
func (t *Tool) IsDestructive(input json.RawMessage) bool {
	ok, _ := evalPredicate(t.def.Destructive, input)
	return ok
}

// IsOpenWorld evaluates the open-world predicate; an error counts as false.
func (t *Tool) IsOpenWorld(input json.RawMessage) bool {
	ok, _ := evalPredicate(t.def.OpenWorld, input)
	return ok
}

// Safety is every safety predicate of one call, as the scheduler sees them.
type Safety struct {
	ConcurrencySafe bool
	ReadOnly        bool
	Destructive     bool
	OpenWorld       bool
	// Err is what the predicates that failed said, each named ("read_only:
	// …", joined by "; "); nil when none failed. A failed predicate's value
	// is false.
	Err error
}

// Safety evaluates every safety predicate on input, with the errors that
// made any of them false (so a user can see why a call ran alone).
func (t *Tool) Safety(input json.RawMessage) Safety {
	var (
		s    Safety
		errs []string
	)
	for _, p := range []struct {
		name string
		pred Predicate
		dst  *bool
	}{
		{"concurrency_safe", t.def.ConcurrencySafe, &s.ConcurrencySafe},
		{"read_only", t.def.ReadOnly, &s.ReadOnly},
		{"destructive", t.def.Destructive, &s.Destructive},
		{"open_world", t.def.OpenWorld, &s.OpenWorld},
	} {
		ok, err := evalPredicate(p.pred, input)
		*p.dst = ok
		if err != nil {
			errs = append(errs, p.name+": "+err.Error())
		}
	}
	if len(errs) > 0 {
		s.Err = fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return s
}

// evalPredicate runs p, treating a nil predicate, an error or a panic as false.
func evalPredicate(p Predicate, input json.RawMessage) (ok bool, err error) {
	if p == nil {
		return false, nil
	}
	defer func() {
		if r := recover(); r != nil {
			ok, err = false, fmt.Errorf("predicate panicked: %v", r)
		}
	}()
	ok, err = p(input)
	if err != nil {
		return false, err
	}
	return ok, nil
}
