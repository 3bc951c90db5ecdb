package anthropic

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/toolwire/toolwire/modelstream"
)

// toolBlock is a tool_use content block, open or finished.
type toolBlock struct {
	seq   int
	index int
	id    string
	name  string
	// startInput is a non-placeholder input from content_block_start, which
	// programmatic tool calling sends instead of deltas.
	startInput json.RawMessage
	raw        []byte
	// done says call holds the finished call, waiting to be reported in order.
	done bool
	call modelstream.Call
}

// finish builds the call of a block that reached content_block_stop at byte at.
func (b *toolBlock) finish(msgID string, at int64) {
	text := b.raw
	if len(bytes.TrimSpace(text)) == 0 && b.startInput != nil {
		text = b.startInput
	}
	c := b.base(msgID, text, at)
	if input, err := parseInput(text); err != nil {
		c.Err, c.Ended = err.Error(), true
	} else {
		c.Input, c.Complete = input, true
	}
	b.done, b.call, b.raw = true, c, nil
}

// abandon builds the call of a block the stream ended inside.
func (b *toolBlock) abandon(msgID string, at int64, why string) {
	c := b.base(msgID, b.raw, at)
	c.Err = why
	b.done, b.call, b.raw = true, c, nil
}

func (b *toolBlock) base(msgID string, text []byte, at int64) modelstream.Call {
	id := b.id
	if id == "" {
		id = syntheticID(msgID, b.index, b.seq, b.name, text)
	}
	return modelstream.Call{Seq: b.seq, ID: id, Name: b.name, RawInput: string(text), At: at}
}

// syntheticID makes an id for a tool_use block that came without one. It is
// a hash of what the stream said about the call, so parsing the same stream
// again gives the same id, while calls of other messages almost surely differ.
func syntheticID(msgID string, index, seq int, name string, input []byte) string {
	h := sha256.New()
	var n [16]byte
	binary.BigEndian.PutUint64(n[:8], uint64(index))
	binary.BigEndian.PutUint64(n[8:], uint64(seq))
	for _, part := range [][]byte{[]byte(msgID), n[:], []byte(name), input} {
		var l [8]byte
		binary.BigEndian.PutUint64(l[:], uint64(len(part)))
		h.Write(l[:])
		h.Write(part)
	}
	return "toolu_synth_" + hex.EncodeToString(h.Sum(nil)[:12])
}

// incompleteReason says why an unfinished tool_use block is not runnable.
func incompleteReason(stopReason, failure string) string {
	var why []string
	if stopReason != "" {
		why = append(why, "stop_reason "+stopReason)
	}
	if failure != "" {
		why = append(why, failure)
	}
	msg := "tool call incomplete: the stream ended before the tool_use block was complete"
	if len(why) > 0 {
		msg += " (" + strings.Join(why, "; ") + ")"
	}
	return msg
}
