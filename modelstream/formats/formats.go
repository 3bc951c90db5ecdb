// Package formats maps stream format names, as users give them on the
// command line and in configuration, to parsers.
package formats

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/anthropic"
	"github.com/toolwire/toolwire/modelstream/gemini"
	"github.com/toolwire/toolwire/modelstream/hermes"
	"github.com/toolwire/toolwire/modelstream/openaichat"
	"github.com/toolwire/toolwire/modelstream/openairesponses"
)

// ErrUnknown is returned for a format toolwire cannot parse.
var ErrUnknown = errors.New("formats: unknown stream format")

var constructors = map[string]func() modelstream.Parser{
	"anthropic":        func() modelstream.Parser { return anthropic.New() },
	"gemini":           func() modelstream.Parser { return gemini.New() },
	"hermes":           func() modelstream.Parser { return hermes.New() },
	"openai-chat":      func() modelstream.Parser { return openaichat.New() },
	"openai-responses": func() modelstream.Parser { return openairesponses.New() },
}

// Parser returns a new parser for the named format.
func Parser(name string) (modelstream.Parser, error) {
	c, ok := constructors[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknown, name, strings.Join(Names(), ", "))
	}
	return c(), nil
}

// Names lists the known formats, sorted.
func Names() []string {
	names := make([]string, 0, len(constructors))
	for n := range constructors {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
