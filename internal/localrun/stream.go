package localrun

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/toolwire/toolwire/modelstream/chunks"
)

// ReadStream reads a model's response stream from the file at path: the
// stream as it came over the wire, or with chunked a .chunks.jsonl capture
// (one SSE data payload a line) turned back into that stream.
func ReadStream(path string, chunked bool) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if chunked {
		if data, err = io.ReadAll(chunks.NewReader(bytes.NewReader(data))); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return data, nil
}
