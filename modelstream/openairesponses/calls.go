package openairesponses

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strings"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/internal/jsonwire"
)

// fnCall is a function_call output item, open or finished.
type fnCall struct {
	seq int
	// outputIndex is the item's slot in the response output, -1 if unknown.
	outputIndex int
	// itemID is the item's own id (fc_...); callID is the id tool results cite (call_...).
	itemID, callID, name string
	// deltas is the argument text joined from the delta events, still
	// escaped; final is the full text a done event gave, also escaped.
	deltas   []byte
	final    []byte
	hasFinal bool
	// done says call holds the finished call, waiting to be reported in order.
	done bool
	call modelstream.Call
}

// fill takes what an item says about the call, keeping what is known.
func (c *fnCall) fill(it *wireItem) {
	if c.itemID == "" && len(it.ID) > 0 {
		c.itemID = string(it.ID)
	}
	if c.callID == "" && len(it.CallID) > 0 {
		c.callID = string(it.CallID)
	}
	if len(it.Name) > 0 && string(it.Name) != c.name {
		c.name = string(it.Name)
	}
}

// setFinal records the full argument text, escaped as the event held it.
func (c *fnCall) setFinal(escaped []byte) {
	c.final, c.hasFinal = append(c.final[:0], escaped...), true
}

// text returns the argument text: the full text if a done event gave it,
// else the joined deltas.
func (c *fnCall) text() []byte {
	if c.hasFinal {
		return jsonwire.Unquote(nil, c.final)
	}
	return jsonwire.Unquote(nil, c.deltas)
}

// finish builds the call of an item whose arguments are complete, at byte at.
func (c *fnCall) finish(respID string, at int64) {
	text := c.text()
	call := c.base(respID, text, at)
	if c.name == "" {
		call.Err = "tool call has no name: the stream never said which function to run"
	} else if input, err := parseInput(text); err != nil {
		call.Err = err.Error()
	} else {
		call.Input, call.Complete = input, true
	}
	c.done, c.call, c.deltas, c.final = true, call, nil, nil
}

// abandon builds the call of an item the stream ended inside.
func (c *fnCall) abandon(respID string, at int64, why string) {
	call := c.base(respID, c.text(), at)
	call.Err = why
	c.done, c.call, c.deltas, c.final = true, call, nil, nil
}

func (c *fnCall) base(respID string, text []byte, at int64) modelstream.Call {
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

// incompleteReason says why an unfinished function_call item is not runnable.
func incompleteReason(stopReason, failure string) string {
	var why []string
	if stopReason != "" {
		why = append(why, "stop reason "+stopReason)
	}
	if failure != "" {
		why = append(why, failure)
	}
	msg := "tool call incomplete: the stream ended before the function_call item was complete"
	if len(why) > 0 {
		msg += " (" + strings.Join(why, "; ") + ")"
	}
	return msg
}
