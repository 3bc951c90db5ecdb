package router

import "github.com/toolwire/toolwire/schemas"

// limits are the router's bounds on input events.
type limits struct{ schemas.Limits }

// identify is the call an unusable tool_use names, for answering it: its
// seq and id from the data when they decoded within the limits, else the
// seq from the ce-seq header (which Decode keeps only when it is under the
// limit). nil when nothing says which call it was: such an event has no
// place in any turn, and only the dead letter records it.
//
// The turn's count the call carries comes along (from the data, else the
// ce-calls header), cut to the limit: a turn whose calls carry it has no
// turn_end, and answering its calls must still close it.
func (l limits) identify(meta schemas.Meta, data schemas.Data) *schemas.ToolUse {
	use := &schemas.ToolUse{Seq: meta.Seq, ToolUseID: "unknown", Calls: meta.Calls}
	if u, ok := data.(*schemas.ToolUse); ok && u.Seq >= 0 {
		if u.Seq >= l.MaxCallsPerTurn {
			return nil
		}
		use.Seq = u.Seq
		if u.ToolUseID != "" && len(u.ToolUseID) <= l.MaxIDBytes {
			use.ToolUseID = u.ToolUseID
		}
		if len(u.Name) <= l.MaxNameBytes {
			use.Name = u.Name
		}
		use.MaxConcurrency = u.MaxConcurrency
		if u.MaxConcurrency > l.MaxCallsPerTurn {
			use.MaxConcurrency = 0
		}
		if u.Calls > 0 {
			use.Calls = min(u.Calls, l.MaxCallsPerTurn)
		}
	}
	if use.Seq < 0 || use.Seq >= l.MaxCallsPerTurn {
		return nil
	}
	if use.Calls <= use.Seq {
		use.Calls = 0
	}
	return use
}
