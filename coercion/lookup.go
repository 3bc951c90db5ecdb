package coercion

// lookup searches everything that applies to a value under a node: the node
// itself, what it references and its allOf branches, then the anyOf/oneOf
// branch the value's shape selects; the first match wins. Its step budget
// keeps a schema whose references fan out and loop from costing more than a
// fixed amount of work per value.
type lookup struct {
	v    *value
	left int
}

const lookupSteps = 256

func newLookup(v *value) lookup { return lookup{v: v, left: lookupSteps} }

func (l *lookup) step(n *node) bool {
	if n == nil || l.left <= 0 {
		return false
	}
	l.left--
	return true
}

func (l *lookup) prop(n *node, key string) *node {
	if !l.step(n) {
		return nil
	}
	if sub, ok := n.props[key]; ok {
		return sub
	}
	for _, p := range n.patterns {
		if p.re.MatchString(key) {
			return p.sub
		}
	}
	for _, a := range n.also {
		if sub := l.prop(a, key); sub != nil {
			return sub
		}
	}
	return l.prop(l.branch(n), key)
}

func (l *lookup) additional(n *node) *node {
	if !l.step(n) {
		return nil
	}
	if n.additional != nil {
		return n.additional
	}
	for _, a := range n.also {
		if sub := l.additional(a); sub != nil {
			return sub
		}
	}
	return l.additional(l.branch(n))
}

func (l *lookup) item(n *node, i int) *node {
	if !l.step(n) {
		return nil
	}
	if i < len(n.prefix) {
		return n.prefix[i]
	}
	if n.items != nil {
		return n.items
	}
	for _, a := range n.also {
		if sub := l.item(a, i); sub != nil {
			return sub
		}
	}
	return l.item(l.branch(n), i)
}

// hasRequired reports whether an object under n must have some property.
func (l *lookup) hasRequired(n *node) bool {
	if !l.step(n) {
		return false
	}
	if len(n.required) > 0 {
		return true
	}
	for _, a := range n.also {
		if l.hasRequired(a) {
			return true
		}
	}
	return false
}

// branch picks the anyOf/oneOf branch the value's shape selects: the first
// that names the value's type, preferring, for an object, one whose required
// properties are all present; failing that, the first unconstrained branch.
func (l *lookup) branch(n *node) *node {
	if len(n.oneOf) == 0 {
		return nil
	}
	t := shapeOf(l.v)
	var named, open *node
	for _, br := range n.oneOf {
		switch {
		case br.accepts.explicitly(t) || (t == tInteger && br.accepts.explicitly(tNumber)):
			if t != tObject || l.hasAllRequired(br) {
				return br
			}
			if named == nil {
				named = br
			}
		case br.accepts.any && open == nil:
			open = br
		}
	}
	if named != nil {
		return named
	}
	return open
}

func (l *lookup) hasAllRequired(n *node) bool {
	if !l.step(n) {
		return true
	}
	for _, r := range n.required {
		if !hasKey(l.v, r) {
			return false
		}
	}
	for _, a := range n.also {
		if !l.hasAllRequired(a) {
			return false
		}
	}
	return true
}

func hasKey(v *value, key string) bool {
	for i := range v.obj {
		if v.obj[i].key == key {
			return true
		}
	}
	return false
}

// requiresAny reports whether an object under n must have some property,
// which keeps "" from becoming {} where {} would be invalid anyway.
func requiresAny(n *node) bool {
	l := newLookup(&value{kind: kObject})
	return l.hasRequired(n)
}
