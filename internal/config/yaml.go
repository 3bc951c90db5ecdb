package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A YAML file is checked as the JSON text it stands for, so that both
// forms get the same checks and messages: fromYAML writes that text and
// remembers where in the YAML each of its values and keys began, and an
// error at an offset of the text is reported at the line and column of
// the YAML node it falls in.

// maxExpanded bounds the JSON text a YAML file may stand for: aliases can
// make a small file stand for an enormous one.
const maxExpanded = 16 << 20

// mark is where a value or key of the JSON text came from in the YAML.
type mark struct {
	off       int64
	line, col int
}

// yamlText is a YAML file's JSON text and its marks, in offset order.
type yamlText struct {
	json  []byte
	marks []mark
}

// at is the YAML line and column of offset off of the JSON text.
func (y *yamlText) at(off int64) (line, col int) {
	i := sort.Search(len(y.marks), func(i int) bool { return y.marks[i].off > off }) - 1
	if i < 0 {
		return 1, 1
	}
	return y.marks[i].line, y.marks[i].col
}

const emptyYAML = "the file is empty: want a YAML mapping of settings like \"deny: [Write]\""

// yamlError is a problem of the YAML itself at a line and column.
type yamlError struct {
	line, col int
	msg       string
}

func (e *yamlError) Error() string { return fmt.Sprintf("%d:%d: %s", e.line, e.col, e.msg) }

func nodeError(n *yaml.Node, format string, args ...any) error {
	return &yamlError{line: n.Line, col: n.Column, msg: fmt.Sprintf(format, args...)}
}

// yamlLine finds the line in the YAML parser's messages ("yaml: line 3: …").
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// parseError is the YAML parser's error err at the line it names.
func parseError(err error) *yamlError {
	msg := err.Error()
	line := 1
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = strings.TrimPrefix(msg, m[0])
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	return &yamlError{line: line, col: 1, msg: "not valid YAML: " + msg}
}

// fromYAML turns the YAML text data into the JSON text it stands for.
func fromYAML(data []byte) (*yamlText, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &yamlError{line: 1, col: 1, msg: emptyYAML}
		}
		return nil, parseError(err)
	}
	var second yaml.Node
	switch err := dec.Decode(&second); {
	case err == nil:
		return nil, &yamlError{line: max(second.Line, 1), col: 1, msg: "a second YAML document: want one mapping of settings"}
	case !errors.Is(err, io.EOF):
		// Whatever follows the first document is part of the file too.
		return nil, parseError(err)
	}
	y := &yamlText{}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil, nodeError(root, emptyYAML)
	}
	if root.Kind != yaml.MappingNode {
		return nil, nodeError(root, "want a YAML mapping of settings like \"deny: [Write]\", found %s", kindName(root))
	}
	var b bytes.Buffer
	if err := y.write(&b, root, 0); err != nil {
		return nil, err
	}
	y.json = b.Bytes()
	return y, nil
}

func (y *yamlText) mark(b *bytes.Buffer, n *yaml.Node) {
	y.marks = append(y.marks, mark{off: int64(b.Len()), line: n.Line, col: n.Column})
}

// write appends n as JSON to b; depth guards against aliases that refer
// to themselves.
func (y *yamlText) write(b *bytes.Buffer, n *yaml.Node, depth int) error {
	if depth > 100 {
		return nodeError(n, "nested more than 100 deep")
	}
	if b.Len() > maxExpanded {
		return nodeError(n, "the file stands for more than %d MiB of settings (aliases?)", maxExpanded>>20)
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return nodeError(n, "an alias to nothing")
		}
		// The value is placed at the alias, its parts at the anchor's.
		first := len(y.marks)
		err := y.write(b, n.Alias, depth+1)
		if first < len(y.marks) {
			y.marks[first].line, y.marks[first].col = n.Line, n.Column
		}
		return err
	}
	y.mark(b, n)
	switch n.Kind {
	case yaml.MappingNode:
		b.WriteByte('{')
		first := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return nodeError(k, "a key must be a plain value, found %s", kindName(k))
			}
			if k.ShortTag() == "!!merge" {
				return nodeError(k, "merge keys (<<) are not supported: write the settings out")
			}
			if line, dup := first[k.Value]; dup {
				return nodeError(k, "key %q appears twice in this mapping (first on line %d)", k.Value, line)
			}
			first[k.Value] = k.Line
			if i > 0 {
				b.WriteByte(',')
			}
			y.mark(b, k)
			name, _ := json.Marshal(k.Value)
			b.Write(name)
			b.WriteByte(':')
			if err := y.write(b, v, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, e := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := y.write(b, e, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case yaml.ScalarNode:
		return writeScalar(b, n)
	}
	return nodeError(n, "unexpected YAML %s", kindName(n))
}

// writeScalar writes a scalar as the JSON value of its YAML type.
func writeScalar(b *bytes.Buffer, n *yaml.Node) error {
	var v any
	switch n.ShortTag() {
	case "!!null":
		b.WriteString("null")
		return nil
	case "!!bool":
		var t bool
		if err := n.Decode(&t); err != nil {
			return nodeError(n, "%v", err)
		}
		v = t
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			return nodeError(n, "the integer %s does not fit in 64 bits", n.Value)
		}
		v = i
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nodeError(n, "%v", err)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nodeError(n, "%s is not a finite number", n.Value)
		}
		v = f
	default: // strings, timestamps, binary: their text
		v = n.Value
	}
	text, err := json.Marshal(v)
	if err != nil {
		return nodeError(n, "%v", err)
	}
	b.Write(text)
	return nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		return "a plain value"
	}
	return "a document"
}
