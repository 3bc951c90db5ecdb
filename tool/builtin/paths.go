package builtin

import "encoding/json"

// filePathOf is the path a file tool's call touches, for permission rules
// such as "Read(./secrets/**)".
func filePathOf(input json.RawMessage) string {
	var in struct {
		FilePath string `json:"file_path"`
	}
	_ = json.Unmarshal(input, &in)
	return in.FilePath
}

// searchPathOf is the directory a search tool's call walks ("." when the
// call names none), for permission rules.
func searchPathOf(input json.RawMessage) string {
	var in struct {
		Path string `json:"path"`
	}
	_ = json.Unmarshal(input, &in)
	if in.Path == "" {
		return "."
	}
	return in.Path
}
