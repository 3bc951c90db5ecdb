package gemini

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/modelstream"
)

// callBuilder is a functionCall being read: a whole one, or a Vertex
// streamed one whose parts are still coming.
type callBuilder struct {
	seq  int
	id   string
	name string
	// args is the args object of a one-part call, as sent; nil when omitted.
	args json.RawMessage
	// tree is the arguments of a streamed call, built from its parts.
	tree *node
	// continuing holds the jsonPaths whose last string part said willContinue.
	continuing map[string]bool
	// err is the first problem with the arguments; it makes the call not runnable.
	err string
}

// streamed reports whether the call's arguments are built from parts.
func (b *callBuilder) streamed() bool { return b.tree != nil }

// startTree switches b to building its arguments from parts, seeded with
// the args it got so far.
func (b *callBuilder) startTree() {
	if b.tree != nil {
		return
	}
	b.tree = &node{kind: kObject}
	if len(b.args) > 0 && !isNull(b.args) {
		b.mergeArgs(b.args)
	}
	b.args = nil
}

// mergeArgs sets the members of an args object sent in a part of a streamed call.
func (b *callBuilder) mergeArgs(raw json.RawMessage) {
	if len(raw) == 0 || isNull(raw) {
		return
	}
	seed, err := treeFromJSON(raw)
	if err != nil {
		b.fail(fmt.Sprintf("tool call args %s: %v", clip(raw), err))
		return
	}
	for i, k := range seed.keys {
		b.tree.setMember(k, seed.vals[i])
	}
}

// applyPartial applies one part's partialArgs.
func (b *callBuilder) applyPartial(parts []wirePartialArg) {
	for i := range parts {
		pa := &parts[i]
		segs, err := parsePath(pa.JSONPath)
		if err != nil {
			b.fail(fmt.Sprintf("tool call partialArgs: jsonPath %q %v", pa.JSONPath, err))
			continue
		}
		leaf, err := leafValue(pa)
		if err != nil {
			b.fail(fmt.Sprintf("tool call partialArgs: jsonPath %q: %v", pa.JSONPath, err))
			continue
		}
		wasContinuing := b.continuing[pa.JSONPath]
		if leaf != nil {
			if err := set(b.tree, segs, leaf, wasContinuing); err != nil {
				b.fail(fmt.Sprintf("tool call partialArgs: jsonPath %q sets %v", pa.JSONPath, err))
				continue
			}
		}
		switch {
		case pa.WillContinue && (leaf == nil || leaf.kind == kString):
			if b.continuing == nil {
				b.continuing = make(map[string]bool)
			}
			b.continuing[pa.JSONPath] = true
		case leaf != nil && wasContinuing:
			delete(b.continuing, pa.JSONPath)
		}
	}
}

func (b *callBuilder) fail(msg string) {
	if b.err == "" {
		b.err = msg
	}
}

// complete builds the call of a builder whose last part arrived at byte at.
func (b *callBuilder) complete(responseID string, at int64) modelstream.Call {
	var input json.RawMessage
	raw := ""
	err := b.err
	switch {
	case b.streamed():
		text, full := render(nil, b.tree)
		raw = string(text)
		if !full && err == "" {
			err = "tool call partialArgs left an array element unset: " + raw
		}
		input = text
	case len(b.args) == 0 || isNull(b.args):
		raw, input = string(b.args), json.RawMessage("{}")
	default:
		raw = string(b.args)
		in, perr := objectInput(b.args)
		if perr != nil && err == "" {
			err = perr.Error()
		}
		input = in
	}
	c := b.base(responseID, raw, at)
	if err != "" {
		c.Err = err
	} else {
		c.Input, c.Complete = input, true
	}
	return c
}

// abandon builds the call of a streamed call the stream ended inside.
func (b *callBuilder) abandon(responseID string, at int64, why string) modelstream.Call {
	raw := string(b.args)
	if b.streamed() {
		text, _ := render(nil, b.tree)
		raw = string(text)
	}
	c := b.base(responseID, raw, at)
	c.Err = why
	return c
}

func (b *callBuilder) base(responseID, raw string, at int64) modelstream.Call {
	id := b.id
	if id == "" {
		id = syntheticID(responseID, b.seq, b.name, raw)
	}
	return modelstream.Call{Seq: b.seq, ID: id, Name: b.name, RawInput: raw, At: at}
}

// objectInput checks that args, valid JSON from the decoder, is an object
// and returns it compacted.
func objectInput(args json.RawMessage) (json.RawMessage, error) {
	args = bytes.TrimSpace(args)
	if args[0] != '{' {
		return nil, fmt.Errorf("tool call args is a JSON %s, not an object", kind(args[0]))
	}
	var buf bytes.Buffer
	buf.Grow(len(args))
	if err := json.Compact(&buf, args); err != nil {
		return nil, fmt.Errorf("tool call args is not valid JSON: %v", err)
	}
	return buf.Bytes(), nil
}

// kind names the JSON value that starts with c.
func kind(c byte) string {
	switch c {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// syntheticID makes an id for a call that came without one (Gemini 2.x
// sends none). It is a hash of what the stream said about the call, so
// parsing the same stream again gives the same id, while calls of other
// responses almost surely differ.
func syntheticID(responseID string, seq int, name, input string) string {
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(seq))
	for _, part := range [][]byte{[]byte(responseID), n[:], []byte(name), []byte(input)} {
		var l [8]byte
		binary.BigEndian.PutUint64(l[:], uint64(len(part)))
		h.Write(l[:])
		h.Write(part)
	}
	return fmt.Sprintf("call_gemini_%d_%s", seq, hex.EncodeToString(h.Sum(nil)[:12]))
}

// incompleteReason says why a streamed call is not runnable.
func incompleteReason(why ...string) string {
	msg := "tool call incomplete: the stream ended before the streamed functionCall was complete"
	var parts []string
	for _, w := range why {
		if w != "" {
			parts = append(parts, w)
		}
	}
	if len(parts) > 0 {
		msg += " (" + strings.Join(parts, "; ") + ")"
	}
	return msg
}
