package schemas

import "github.com/nats-io/nats.go"

// Bounds of the trace context an event carries. A traceparent of version
// 00 is 55 characters; later versions may append fields, hence the room.
// W3C asks vendors to pass on at least 512 characters of tracestate and
// lets them drop a longer one.
const (
	MaxTraceParent = 256
	MaxTraceState  = 512
)

// TraceOf is the ce-traceparent and ce-tracestate of an event's headers
// (Meta.TraceParent, Meta.TraceState). A trace context is advice: a value
// that is badly percent-encoded, over its bound or not printable ASCII is
// dropped (and a tracestate without its traceparent with it), never an
// error, so that it cannot cost the call. Whether the traceparent is
// well-formed W3C is the tracer's to judge; it ignores one that is not.
func TraceOf(h nats.Header) (parent, state string) {
	return boundTrace(headerValue(h, hdrTraceParent), headerValue(h, hdrTraceState))
}

// headerValue is h's first value of k, percent-decoded; "" when absent or
// badly encoded.
func headerValue(h nats.Header, k string) string {
	vs := h[k]
	if len(vs) == 0 || vs[0] == "" {
		return ""
	}
	v, err := percentDecode(vs[0])
	if err != nil {
		return ""
	}
	return v
}

// boundTrace keeps a trace context within its bounds: a bad traceparent
// takes its tracestate with it, a bad tracestate goes alone.
func boundTrace(parent, state string) (string, string) {
	if parent == "" || !printable(parent, MaxTraceParent) {
		return "", ""
	}
	if !printable(state, MaxTraceState) {
		state = ""
	}
	return parent, state
}

// printable reports whether s is at most max bytes of printable ASCII.
func printable(s string, max int) bool {
	if len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
