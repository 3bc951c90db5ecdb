package coercion

import (
	"errors"
	"fmt"
	"strings"

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

// Error renders one capped line per problem, sanitized because it echoes the
// input.
func (e *ValidationError) Error() string {
	// Values from the input are already quoted with escapes; Clean also
	// removes any markup in them, since they are what the model (or an
	// attacker) sent.
	var b strings.Builder
	b.WriteString("input is invalid:")
	for i, p := range e.Problems {
		if i == maxProblemLines || b.Len() >= maxErrorChars {
			fmt.Fprintf(&b, "\n- … and %d more problems", len(e.Problems)-i)
			break
		}
		b.WriteString("\n- ")
		b.WriteString(truncateRunes(p.Path+": "+p.Message, maxLineChars))
	}
	return sanitizer.Clean(b.String())
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
