package schemas

import "github.com/vmihailenco/msgpack/v5"

// ToolAd is a worker's advertisement of one tool of its pool, kept in the
// TW_TOOLS bucket with a TTL the worker refreshes while it lives. The router
// routes calls of tools it does not host itself by these.
type ToolAd struct {
	Name        string  `msgpack:"name" json:"name"`
	Description string  `msgpack:"description,omitempty" json:"description,omitempty"`
	InputSchema RawJSON `msgpack:"input_schema" json:"input_schema"`
	Pool        string  `msgpack:"pool" json:"pool"`
	Worker      string  `msgpack:"worker" json:"worker"`
	// CancelsSiblings is the tool's flag, for the router's own rejections.
	CancelsSiblings bool `msgpack:"cancels_siblings,omitempty" json:"cancels_siblings,omitempty"`
}

// EncodeToolAd is the KV value of an advertisement.
func EncodeToolAd(a *ToolAd) ([]byte, error) { return msgpack.Marshal(a) }

// DecodeToolAd reads a KV value written by EncodeToolAd.
func DecodeToolAd(b []byte) (*ToolAd, error) {
	a := &ToolAd{}
	if err := msgpack.Unmarshal(b, a); err != nil {
		return nil, &FieldError{Field: "tool_ad", Reason: "not a msgpack tool advertisement", Err: err}
	}
	if a.Name == "" || a.Pool == "" {
		return nil, &FieldError{Field: "tool_ad", Reason: "name and pool are required"}
	}
	return a, nil
}
