package sanitizer

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// isRoleName reports the tag names removed in any case, with or without
// attributes: the role and turn markup of step 1 in docs/coercion.md, plus a
// few tags agents use for the same purpose, and the error wrapper itself, so
// an error cannot close its own <tool_use_error> early. name is lower case.
func isRoleName(name []byte) bool {
	switch string(name) {
	case "system", "user", "assistant",
		"tool_call", "function_call", "tool_result",
		"result", "response", "output", "input",
		"start_of_turn", "end_of_turn",
		"tool_calls", "tool_use", "tool_response",
		"function_calls", "function_results", "function_result",
		"system-reminder", "tool_use_error":
		return true
	}
	return false
}

// maxNameLen is the longest role name; longer names are not looked up.
const maxNameLen = len("function_results")

// text is what the markup checks read: the input itself while nothing has
// been removed, the output buffer after that.
type text interface{ ~string | ~[]byte }

// stripMarkup removes role tags and chat-template tokens in one left-to-right
// pass. Text is copied to an output buffer; whenever a ">" or "]" completes a
// tag at the end of the buffer, the tag is cut off the buffer. Because the
// check runs on the buffer, text that closes up around a removed tag is
// checked again, so nested tags of any depth go in this one pass:
// "<tool_<system>call>" loses "<system>", then the "<tool_call>" it leaves.
// Until the first cut the buffer would equal the input, so the input is read
// in place and no buffer is made for text without markup.
func stripMarkup(s string) (string, bool) {
	if !hasByte(s, '<', '[') || !hasByte(s, '>', ']') {
		return s, false
	}
	var st markupState
	st.opens = st.backing[:0]
	var buf []byte
	i := 0
	for buf == nil {
		j := nextMarkupByte(s, i)
		if j == len(s) {
			return s, false
		}
		i = j + 1
		if cut := onByte(&st, s[:i], s[j]); cut >= 0 {
			buf = append(make([]byte, 0, len(s)), s[:cut]...)
		}
	}
	for i < len(s) {
		j := nextMarkupByte(s, i)
		buf = append(buf, s[i:j]...)
		if j == len(s) {
			break
		}
		buf = append(buf, s[j])
		i = j + 1
		if cut := onByte(&st, buf, s[j]); cut >= 0 {
			buf = buf[:cut]
		}
	}
	return string(buf), true
}

// markupByte marks the bytes stripMarkup acts on.
var markupByte = [256]bool{'<': true, '>': true, ']': true}

func nextMarkupByte(s string, i int) int {
	for i < len(s) && !markupByte[s[i]] {
		i++
	}
	return i
}

// markupState tracks the "<" that may still open a tag: their positions in
// the text so far, innermost last. dead marks one already followed by a ">"
// without forming a tag: a tag has no ">" inside, so it can no longer start
// one.
type markupState struct {
	opens   []open
	backing [16]open
}

type open struct {
	pos  int
	dead bool
}

// onByte looks at the markup byte ending cur and returns the length to cut
// cur back to when that byte completes a tag or token, or -1.
func onByte[T text](st *markupState, cur T, c byte) int {
	cut := -1
	switch c {
	case '<':
		st.opens = append(st.opens, open{pos: len(cur) - 1})
		return -1
	case ']':
		if n := instTokenLen(cur); n > 0 {
			cut = len(cur) - n
		}
	case '>':
		if n := sysTokenLen(cur); n > 0 {
			cut = len(cur) - n
			break
		}
		if len(st.opens) == 0 {
			return -1
		}
		top := &st.opens[len(st.opens)-1]
		if top.dead {
			return -1
		}
		if seg := cur[top.pos:]; isRoleTag(seg) || isBarToken(seg) {
			cut = top.pos
		} else {
			top.dead = true
		}
	}
	for cut >= 0 && len(st.opens) > 0 && st.opens[len(st.opens)-1].pos >= cut {
		st.opens = st.opens[:len(st.opens)-1]
	}
	return cut
}

// isRoleTag reports whether seg, which starts with "<", ends with ">" and has
// neither inside, is a role tag: "<" [space] ["/"] [space] name, then ">",
// or space or "/" followed by anything (attributes).
func isRoleTag[T text](seg T) bool {
	i := skipSpace(seg, 1)
	if i < len(seg) && seg[i] == '/' {
		i = skipSpace(seg, i+1)
	}
	start := i
	var name [maxNameLen]byte
	for i < len(seg) && isNameChar(seg[i]) {
		if i-start == maxNameLen {
			return false
		}
		name[i-start] = lower(seg[i])
		i++
	}
	if i == start || !isRoleName(name[:i-start]) {
		return false
	}
	return seg[i] == '>' || seg[i] == '/' || isSpace(seg[i])
}

// isBarToken reports whether seg is a chat-template token: "<|name|>" in any
// spelling ("<|im_start|>", "<|eot_id|>", "<| user |>"), including
// DeepSeek's full-width bars ("<｜Assistant｜>"). Any name counts, so tokens
// of templates docs/coercion.md does not list go too.
func isBarToken[T text](seg T) bool {
	i := skipSpace(seg, 1)
	n := barLen(seg, i)
	if n == 0 {
		return false
	}
	i += n
	j := skipSpaceBack(seg, len(seg)-2) + 1 // end of the closing bar
	var closing int
	switch {
	case j-1 >= i && seg[j-1] == '|':
		closing = j - 1
	case j-len(fullBar) >= i && string(seg[j-len(fullBar):j]) == fullBar:
		closing = j - len(fullBar)
	default:
		return false
	}
	if closing == i {
		return false // "<||>" is an operator in some languages, not a token
	}
	for k := i; k < closing; k++ {
		if barLen(seg, k) > 0 {
			return false
		}
	}
	return true
}

const fullBar = "｜" // U+FF5C

// barLen returns the byte length of a bar at seg[i], or 0.
func barLen[T text](seg T, i int) int {
	if i < len(seg) && seg[i] == '|' {
		return 1
	}
	if len(seg)-i >= len(fullBar) && string(seg[i:i+len(fullBar)]) == fullBar {
		return len(fullBar)
	}
	return 0
}

// sysTokenLen returns the length of a Llama-2 "<<SYS>>" or "<</SYS>>" token
// ending buf, or 0. Read backwards because its first ">" already ends a
// "<SYS>" that is no tag.
func sysTokenLen[T text](buf T) int {
	i := len(buf) - 1
	if i < 1 || buf[i-1] != '>' {
		return 0
	}
	i = skipSpaceBack(buf, i-2)
	if i < 2 || lower(buf[i]) != 's' || lower(buf[i-1]) != 'y' || lower(buf[i-2]) != 's' {
		return 0
	}
	i = skipSpaceBack(buf, i-3)
	if i >= 0 && buf[i] == '/' {
		i = skipSpaceBack(buf, i-1)
	}
	if i < 1 || buf[i] != '<' || buf[i-1] != '<' {
		return 0
	}
	return len(buf) - (i - 1)
}

// instTokenLen returns the length of a Llama-2 "[INST]" or "[/INST]" token
// ending buf, or 0.
func instTokenLen[T text](buf T) int {
	i := skipSpaceBack(buf, len(buf)-2)
	if i < 3 || lower(buf[i]) != 't' || lower(buf[i-1]) != 's' || lower(buf[i-2]) != 'n' || lower(buf[i-3]) != 'i' {
		return 0
	}
	i = skipSpaceBack(buf, i-4)
	if i >= 0 && buf[i] == '/' {
		i = skipSpaceBack(buf, i-1)
	}
	if i < 0 || buf[i] != '[' {
		return 0
	}
	return len(buf) - i
}

func skipSpace[T text](b T, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func skipSpaceBack[T text](b T, i int) int {
	for i >= 0 && isSpace(b[i]) {
		i--
	}
	return i
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func hasByte(s string, a, b byte) bool {
	return strings.IndexByte(s, a) >= 0 || strings.IndexByte(s, b) >= 0
}

// neutralizeOpeners deals with what step 1 leaves of role tags: it removes
// every complete tag, but not an opener whose attributes hold a "<"
// (<system a="<b>">, <system <b>>), one never closed (a trailing
// "</tool_use_error", which the wrapper's own closing tag would complete),
// or one spaced with non-ASCII spaces (<\u00a0system>). Each such opener,
// "<" [spaces] ["/" [spaces]] role name, then a space, "/", "<", ">" or
// the end of the text, has its "<" replaced by "‹", so that no reader can
// take it for a tag and the text stays readable. It reports whether it
// changed anything; the caller then runs step 1 again, since a "<" that
// is gone no longer hides the markup around it.
func neutralizeOpeners(s string) (string, bool) {
	var b strings.Builder
	kept := 0 // s[kept:] is not yet copied
	for i := strings.IndexByte(s, '<'); i >= 0; {
		if isOpener(s, i) {
			if kept == 0 {
				b.Grow(len(s) + 8)
			}
			b.WriteString(s[kept:i])
			b.WriteString(neutralLT)
			kept = i + 1
		}
		j := strings.IndexByte(s[i+1:], '<')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	if kept == 0 {
		return s, false
	}
	b.WriteString(s[kept:])
	return b.String(), true
}

const neutralLT = "‹" // U+2039, what the fallback of Clean uses too

// isOpener reports whether the "<" at s[i] opens a role tag (see
// neutralizeOpeners). What it reads after s[i] is spaces, "/" and name
// characters, none of which is "<", so the reads of two openers never
// overlap and a whole scan stays linear.
func isOpener(s string, i int) bool {
	j := skipAnySpace(s, i+1)
	if j < len(s) && s[j] == '/' {
		j = skipAnySpace(s, j+1)
	}
	start := j
	var name [maxNameLen]byte
	for j < len(s) && isNameChar(s[j]) {
		if j-start == maxNameLen {
			return false
		}
		name[j-start] = lower(s[j])
		j++
	}
	if j == start || !isRoleName(name[:j-start]) {
		return false
	}
	if j == len(s) {
		return true
	}
	switch s[j] {
	case '/', '<', '>':
		return true
	}
	return anySpaceLen(s, j) > 0
}

// anySpaceLen returns the byte length of the ASCII or Unicode space at
// s[i], or 0.
func anySpaceLen(s string, i int) int {
	if c := s[i]; c < utf8.RuneSelf {
		if isSpace(c) {
			return 1
		}
		return 0
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if unicode.IsSpace(r) {
		return size
	}
	return 0
}

func skipAnySpace(s string, i int) int {
	for i < len(s) {
		n := anySpaceLen(s, i)
		if n == 0 {
			break
		}
		i += n
	}
	return i
}
