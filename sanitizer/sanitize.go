package sanitizer

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// DefaultMaxChars is the error length cap when Options.MaxChars is not set.
const DefaultMaxChars = 2000

// Options configures Error.
type Options struct {
	// MaxChars caps the sanitized error in characters (runes), the
	// truncation marker included; 0 or less means DefaultMaxChars.
	MaxChars int
}

const (
	openTag  = "<tool_use_error>"
	closeTag = "</tool_use_error>"
)

// Error sanitizes a tool error to a fixpoint, caps it and wraps it in
// <tool_use_error>…</tool_use_error>.
func Error(text string, opt Options) string {
	maxChars := opt.MaxChars
	if maxChars <= 0 {
		maxChars = DefaultMaxChars
	}
	// Trim what the tool wrote, then clean: trimming after would also eat
	// the text that stood next to a removed piece (" mid " between two
	// CDATA sections), which must stay as it was.
	kept, mark := capRunes(Clean(strings.TrimSpace(text)), maxChars)
	return openTag + kept + mark + closeTag // one allocation
}

// Clean applies Error's removals to a fixpoint, without capping or wrapping,
// for an error embedded elsewhere.
func Clean(text string) string {
	s := text
	for range maxPasses {
		var again bool
		if s, again = pass(s); !again {
			// Every complete tag is gone; neutralize the openers left.
			if s, again = neutralizeOpeners(s); !again {
				return s
			}
		}
	}
	// Only input built to nest one kind of markup inside another, level
	// after level, gets here. Rather than spend quadratic time, make every
	// tag and token impossible by replacing the brackets they all need.
	// Steps 2–4 may still change the text a couple of times (a fence line
	// freed of a control character); each change shortens it.
	s = neutralize.Replace(s)
	for changed := true; changed; {
		s, changed = pass(s)
	}
	return s
}

// Output removes only escapes, control and invisible characters from a
// successful result, keeping its content.
func Output(text string) string {
	// A file may legitimately contain fences or tags, so markup stays.
	s, _ := stripInvisible(text)
	return s
}

// maxPasses bounds the fixpoint loop. One pass already removes nested tags
// of any depth; further passes are needed only when removing one kind of
// thing (an escape, a CDATA section) reassembles another.
const maxPasses = 32

var neutralize = strings.NewReplacer("<", "‹", ">", "›", "[", "(", "]", ")")

// pass applies steps 1–4 once, in order, and reports whether another pass
// could change anything. Step 1 alone reaches its own fixpoint within the
// pass and steps 2–4 run after it, so only a change made by steps 2–4 can
// leave work for a next pass.
func pass(s string) (string, bool) {
	s, _ = stripMarkup(s)
	s, c2 := stripFences(s)
	s, c3 := stripCDATA(s)
	s, c4 := stripInvisible(s)
	return s, c2 || c3 || c4
}

// capRunes cuts s to max runes on a character boundary and returns what is
// kept and a marker saying how much was cut (empty when nothing was); the
// marker counts toward max.
func capRunes(s string, max int) (kept, mark string) {
	if len(s) <= max {
		return s, "" // no more runes than bytes
	}
	total := utf8.RuneCountInString(s)
	if total <= max {
		return s, ""
	}
	// Keep as much as fits beside the marker; the marker's length depends
	// on how much is cut, so start from the longest and grow while it fits.
	keep := max - markerLen(total)
	for keep+1 < total && keep+1+markerLen(total-keep-1) <= max {
		keep++
	}
	if keep < 0 {
		keep = 0
	}
	cut := len(s)
	n := 0
	for i := range s {
		if n == keep {
			cut = i
			break
		}
		n++
	}
	return s[:cut], marker(total - keep)
}

func marker(cut int) string { return "… [truncated " + strconv.Itoa(cut) + " chars]" }

func markerLen(cut int) int { return utf8.RuneCountInString(marker(cut)) }

// Cap cuts text to at most maxChars characters on a character boundary,
// marking the cut as Error does (the marker counts toward maxChars); 0 or
// less means no cap. It is the size cap for a successful output, whose
// limit is set per tool.
func Cap(text string, maxChars int) string {
	if maxChars <= 0 {
		return text
	}
	kept, mark := capRunes(text, maxChars)
	return kept + mark
}
