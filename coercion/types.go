package coercion

import "strings"

// jtype is a JSON Schema type name.
type jtype uint8

const (
	tNull jtype = iota
	tBoolean
	tInteger
	tNumber
	tString
	tArray
	tObject
)

var typeNames = [...]string{"null", "boolean", "integer", "number", "string", "array", "object"}

func (t jtype) String() string { return typeNames[t] }

func parseType(name string) (jtype, bool) {
	for i, n := range typeNames {
		if n == name {
			return jtype(i), true
		}
	}
	return 0, false
}

// typeList is what a schema accepts: either anything (no constraint the
// coercion rules can use), or a list of types in the schema's order, which
// decides which conversion of a union wins.
type typeList struct {
	any  bool
	list []jtype
}

var anyType = typeList{any: true}

func (l typeList) has(t jtype) bool {
	if l.any {
		return true
	}
	for _, x := range l.list {
		if x == t {
			return true
		}
	}
	return false
}

// explicitly reports whether l names t (an unconstrained list names nothing).
func (l typeList) explicitly(t jtype) bool { return !l.any && l.has(t) }

func (l typeList) add(t jtype) typeList {
	if l.any || l.has(t) {
		return l
	}
	return typeList{list: append(l.list[:len(l.list):len(l.list)], t)}
}

// union is what either list accepts, a's order first.
func union(a, b typeList) typeList {
	if a.any || b.any {
		return anyType
	}
	for _, t := range b.list {
		a = a.add(t)
	}
	return a
}

// intersect is what both lists accept, in a's order; integer is what
// integer and number have in common.
func intersect(a, b typeList) typeList {
	if a.any {
		return b
	}
	if b.any {
		return a
	}
	out := typeList{list: []jtype{}}
	for _, t := range a.list {
		switch {
		case b.has(t):
			out = out.add(t)
		case t == tNumber && b.has(tInteger), t == tInteger && b.has(tNumber):
			out = out.add(tInteger)
		}
	}
	return out
}

func (l typeList) String() string {
	if l.any {
		return "any"
	}
	names := make([]string, len(l.list))
	for i, t := range l.list {
		names[i] = t.String()
	}
	return strings.Join(names, " or ")
}
