package openairesponses

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/internal/jsonwire"
)

// itemCall is an output item the client must execute, open or finished.
type itemCall struct {
	seq  int
	kind itemKind
	// outputIndex is the item's slot in the response output, -1 if unknown.
	outputIndex int
	// itemID is the item's own id (fc_...); callID is the id tool results cite (call_...).
	itemID, callID, name string
	// deltas is the input text joined from the delta events, still escaped;
	// final is the full input a done event or the item gave: escaped string
	// content, or, when finalRaw, a JSON value as it came.
	deltas   []byte
	final    []byte
	hasFinal bool
	finalRaw bool
	// done says call holds the finished call, waiting to be reported in order.
	done bool
	call modelstream.Call
}

// fill takes what an item says about the call, keeping what is known; but
// the call_id of a done item wins (authoritative), as it is the one the
// final output repeats and tool results must cite.
func (c *itemCall) fill(kind itemKind, it *wireItem, authoritative bool) {
	c.kind = kind
	if c.itemID == "" && len(it.ID) > 0 {
		c.itemID = string(it.ID)
	}
	if len(it.CallID) > 0 && (c.callID == "" || authoritative) {
		c.callID = string(it.CallID)
	}
	switch tool := itemKinds[kind].tool; {
	case tool != "":
		c.name = tool
	case len(it.Name) > 0 && string(it.Name) != c.name:
		c.name = string(it.Name)
	}
}

// setFinal records the full input, escaped string content or, when raw, a
// JSON value, as the event held it.
func (c *itemCall) setFinal(v []byte, raw bool) {
	c.final, c.hasFinal, c.finalRaw = append(c.final[:0], v...), true, raw
}

// text returns the input text: the full text if a done event gave it,
// else the joined deltas.
func (c *itemCall) text() []byte {
	switch {
	case c.hasFinal && c.finalRaw:
		return bytes.Clone(c.final)
	case c.hasFinal:
		return jsonwire.Unquote(nil, c.final)
	}
	return jsonwire.Unquote(nil, c.deltas)
}

// finish builds the call of an item whose input is complete, at byte at.
func (c *itemCall) finish(respID string, at int64) {
	text := c.text()
	call := c.base(respID, text, at)
	k := itemKinds[c.kind]
	switch {
	case c.name == "":
		call.Err = "tool call has no name: the stream never said which function to run"
	case c.kind == customToolCall && c.finalRaw:
		call.Err = fmt.Sprintf("%s a JSON %s, not a string", k.subject, jsonwire.Kind(text[0]))
	case c.kind == customToolCall:
		call.Input, call.Complete = freeFormInput(text), true
	case k.tool != "" && !c.hasFinal:
		// Only the done item holds these inputs; {} would run something else.
		call.Err = fmt.Sprintf("tool call has no input: the %s item has no %s", k.typ, k.field)
	default:
		if input, err := jsonwire.ParseInput(text, k.subject, k.field); err != nil {
			call.Err, call.Ended = err.Error(), true
		} else {
			call.Input, call.Complete = input, true
		}
	}
	c.done, c.call, c.deltas, c.final = true, call, nil, nil
}

// abandon builds the call of an item the stream ended inside.
func (c *itemCall) abandon(respID string, at int64, why string) {
	call := c.base(respID, c.text(), at)
	call.Err = why
	c.done, c.call, c.deltas, c.final = true, call, nil, nil
}

func (c *itemCall) base(respID string, text []byte, at int64) modelstream.Call {
	id := c.callID
	if id == "" {
		id = c.itemID
	}
	if id == "" {
		id = syntheticID(respID, c.outputIndex, c.seq, c.name, text)
	}
	return modelstream.Call{Seq: c.seq, ID: id, Name: c.name, RawInput: string(text), At: at}
}

// syntheticID makes an id for a call that came with neither call_id nor
// item id. It is a hash of what the stream said about the call, so parsing
// the same stream again gives the same id, while calls of other responses
// almost surely differ.
func syntheticID(respID string, outputIndex, seq int, name string, args []byte) string {
	h := sha256.New()
	var n [16]byte
	binary.BigEndian.PutUint64(n[:8], uint64(outputIndex))
	binary.BigEndian.PutUint64(n[8:], uint64(seq))
	for _, part := range [][]byte{[]byte(respID), n[:], []byte(name), args} {
		var l [8]byte
		binary.BigEndian.PutUint64(l[:], uint64(len(part)))
		h.Write(l[:])
		h.Write(part)
	}
	return "call_synth_" + hex.EncodeToString(h.Sum(nil)[:12])
}

// incompleteReason says why an unfinished item is not runnable.
func incompleteReason(itemType, stopReason, failure string) string {
	var why []string
	if stopReason != "" {
		why = append(why, "stop reason "+stopReason)
	}
	if failure != "" {
		why = append(why, failure)
	}
	msg := "tool call incomplete: the stream ended before the " + itemType + " item was complete"
	if len(why) > 0 {
		msg += " (" + strings.Join(why, "; ") + ")"
	}
	return msg
}
