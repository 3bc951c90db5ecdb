package builtin

import (
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/tool"
)

// cappedBuffer keeps the first max bytes written to it and counts the rest.
// It never fails a write: failing would make io.Copy stop reading, and the
// command would then block on a full pipe instead of running to its end.
type cappedBuffer struct {
	max     int
	buf     []byte
	dropped int64
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	room := b.max - len(b.buf)
	if room >= len(p) {
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	if room > 0 {
		b.buf = append(b.buf, p[:room]...)
	}
	b.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

// String is the captured output as valid UTF-8 without trailing newlines,
// marked when output was dropped.
func (b *cappedBuffer) String() string {
	s := strings.ToValidUTF8(string(b.buf), "\uFFFD")
	s = strings.TrimRight(s, "\n")
	if b.dropped > 0 {
		s += fmt.Sprintf("\n... [output truncated: %d more bytes]", b.dropped)
	}
	return s
}

// cut says how much output there was when some was dropped, nil when
// everything was kept.
func (b *cappedBuffer) cut() *tool.OutputCut {
	if b.dropped == 0 {
		return nil
	}
	return &tool.OutputCut{Total: int64(len(b.buf)) + b.dropped, Kept: int64(len(b.buf))}
}

// joinLines joins the non-empty parts with newlines.
func joinLines(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p)
	}
	return b.String()
}
