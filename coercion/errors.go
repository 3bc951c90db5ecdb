package coercion

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/toolwire/toolwire/sanitizer"
)

// ErrBadSchema is wrapped by every error Compile returns.
var ErrBadSchema = errors.New("coercion: bad input schema")

// ParseError reports raw argument text that cannot be used, with the byte
// offset of the problem.
type ParseError struct {
	Offset int
	Msg    string
}

// Error returns the message the model is shown, position included.
func (e *ParseError) Error() string {
	return fmt.Sprintf("invalid arguments at offset %d: %s", e.Offset, e.Msg)
}

// Problem is one failing location of a validation.
type Problem struct {
	// Path is a JSON pointer to the failing value; "/" is the whole input.
	Path string
	// Message says what was expected and what came.
	Message string
}

// ValidationError lists everything wrong with a call's arguments.
type ValidationError struct {
	Problems []Problem
}

// The caps keep a hostile or huge input from turning into a huge message for
// the model: the first problems are the useful ones.
const (
	maxProblemLines = 20
	maxLineChars    = 300
	maxErrorChars   = 4000
)

// Error renders one capped line per problem (see Lines) under a heading,
// sanitized because it echoes the input.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString(errorHeading)
	for _, l := range e.Lines() {
		b.WriteString("\n- ")
		b.WriteString(l)
	}
	// Each line is clean; cleaning the whole catches markup that only
	// forms across lines.
	return sanitizer.Clean(b.String())
}

const errorHeading = "input is invalid:"

// Lines returns the lines Error lists: "path: message" for each problem,
// capped in length and in number (a last line says how many more there
// are), each sanitized. A path holding a character that could break the
// one-line-per-problem form, such as a newline in a key, is shown quoted.
func (e *ValidationError) Lines() []string {
	// Values from the input are already quoted with escapes; Clean also
	// removes any markup in them, since they are what the model (or an
	// attacker) sent.
	lines := make([]string, 0, min(len(e.Problems), maxProblemLines+1))
	size := len(errorHeading)
	for i, p := range e.Problems {
		if i == maxProblemLines || size >= maxErrorChars {
			lines = append(lines, fmt.Sprintf("… and %d more problems", len(e.Problems)-i))
			break
		}
		l := sanitizer.Clean(truncateRunes(showPath(p.Path)+": "+p.Message, maxLineChars))
		lines = append(lines, l)
		size += len("\n- ") + len(l)
	}
	return lines
}

// showPath writes a JSON pointer as it is, or quoted with escapes when it
// holds a character that is not printable (a newline, a control or
// invisible character).
func showPath(path string) string {
	if strings.ContainsFunc(path, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(path)
	}
	return path
}

// truncateRunes cuts s to at most n runes, marking the cut with an ellipsis.
func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n-1 {
			return s[:pos] + "…"
		}
		i++
	}
	return s
}
