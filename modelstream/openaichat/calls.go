package openaichat

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/internal/jsonwire"
)

// toolCall is one tool call of the message, open or finished.
type toolCall struct {
	seq int
	// index is the call's tool_calls index, -1 when its fragments had none.
	index    int
	id, name string
	// args is the argument text joined, still escaped as the JSON strings
	// held it; it is unescaped once, when the call ends.
	args []byte
	// value follows the unescaped arguments to see their top-level value close.
	value jsonwire.ValueEnd
	// done says call holds the finished call, waiting to be reported in order.
	done bool
	call modelstream.Call
}

// describe names the call in an error message: its id and tool, as far as
// known, each clipped, as they come from the stream.
func (c *toolCall) describe() string {
	var parts []string
	if c.id != "" {
		parts = append(parts, "id "+clip([]byte(c.id)))
	}
	if c.name != "" {
		name := c.name
		if len(name) > maxClip {
			name = name[:maxClip] + "..."
		}
		parts = append(parts, "tool "+name)
	}
	if c.index >= 0 {
		parts = append(parts, fmt.Sprintf("index %d", c.index))
	}
	return strings.Join(parts, ", ")
}

// addArgs appends a fragment's arguments: escaped string content, or the
// raw JSON of an object, which is escaped to match.
func (c *toolCall) addArgs(frag []byte, isObject bool) {
	if !isObject {
		c.args = append(c.args, frag...)
		return
	}
	for _, b := range frag {
		switch b {
		case '"', '\\':
			c.args = append(c.args, '\\', b)
		case '\n':
			c.args = append(c.args, '\\', 'n')
		case '\r':
			c.args = append(c.args, '\\', 'r')
		case '\t':
			c.args = append(c.args, '\\', 't')
		default:
			c.args = append(c.args, b)
		}
	}
}

// finish builds the call of a block that ended normally at byte at.
func (c *toolCall) finish(msgID string, at int64) {
	text := jsonwire.Unquote(nil, c.args)
	call := c.base(msgID, text, at)
	if c.name == "" {
		call.Err = "tool call has no name: the stream never said which tool to run"
	} else if input, err := parseInput(text); err != nil {
		call.Err, call.Ended = err.Error(), true
	} else {
		call.Input, call.Complete = input, true
	}
	c.done, c.call, c.args = true, call, nil
}

// abandon builds the call of a block the stream ended inside.
func (c *toolCall) abandon(msgID string, at int64, why string) {
	call := c.base(msgID, jsonwire.Unquote(nil, c.args), at)
	call.Err = why
	c.done, c.call, c.args = true, call, nil
}

func (c *toolCall) base(msgID string, text []byte, at int64) modelstream.Call {
	id := c.id
	if id == "" {
		id = syntheticID(msgID, c.index, c.seq, c.name, text)
	}
	return modelstream.Call{Seq: c.seq, ID: id, Name: c.name, RawInput: string(text), At: at}
}

// syntheticID makes an id for a call that came without one. It is a hash of
// what the stream said about the call, so parsing the same stream again
// gives the same id, while calls of other messages almost surely differ.
func syntheticID(msgID string, index, seq int, name string, args []byte) string {
	h := sha256.New()
	var n [16]byte
	binary.BigEndian.PutUint64(n[:8], uint64(index))
	binary.BigEndian.PutUint64(n[8:], uint64(seq))
	for _, part := range [][]byte{[]byte(msgID), n[:], []byte(name), args} {
		var l [8]byte
		binary.BigEndian.PutUint64(l[:], uint64(len(part)))
		h.Write(l[:])
		h.Write(part)
	}
	return "call_synth_" + hex.EncodeToString(h.Sum(nil)[:12])
}

// incompleteReason says why an open call is not runnable.
func incompleteReason(cause string) string {
	msg := "tool call incomplete: the stream ended before the call was complete"
	if cause != "" {
		msg += " (" + cause + ")"
	}
	return msg
}

// cutOff reports whether a finish_reason means the output was cut short, so
// that the call being streamed is not whole even if its text parses.
func cutOff(finishReason string) bool {
	switch strings.ToLower(finishReason) {
	case "length", "max_tokens", "content_filter":
		return true
	}
	return false
}
