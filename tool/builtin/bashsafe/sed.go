package bashsafe

import (
	"errors"
	"fmt"
	"strings"
)

// checkSed refuses in-place editing, scripts read from files (which cannot
// be inspected) and scripts that write files or run commands.
func checkSed(args []string) error {
	var scripts, operands []string
	explicit := false // a script came from -e or --expression
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case abbreviates(a, "--in-place"), abbreviates(a, "--file"):
			return fmt.Errorf("sed %s", a)
		case abbreviates(a, "--expression"):
			explicit = true
			if _, v, ok := strings.Cut(a, "="); ok {
				scripts = append(scripts, v)
			} else if i+1 < len(args) {
				i++
				scripts = append(scripts, args[i])
			}
		case abbreviates(a, "--line-length"):
			if !hasValue(a) {
				i++
			}
		case strings.HasPrefix(a, "--"):
			// --quiet, --regexp-extended, --separate, --null-data, --posix,
			// --sandbox, --debug, --unbuffered: none of them writes.
		case isShortCluster(a):
			script, skip, err := sedShortCluster(a)
			if err != nil {
				return err
			}
			if script != nil {
				explicit = true
				if *script == "" && i+1 < len(args) {
					*script = args[i+1]
				}
				scripts = append(scripts, *script)
			}
			i += skip
		default:
			operands = append(operands, a)
		}
	}
	if !explicit && len(operands) > 0 {
		scripts = append(scripts, operands[0])
	}
	for _, s := range scripts {
		if err := checkSedScript(s); err != nil {
			return fmt.Errorf("sed script %q: %w", s, err)
		}
	}
	return nil
}

// sedShortCluster reads one cluster of short options. It returns the script
// of an -e (pointing at "" when the script is the next argument) and how
// many following arguments the cluster consumed.
func sedShortCluster(a string) (script *string, skip int, err error) {
	for j := 1; j < len(a); j++ {
		switch c := a[j]; c {
		case 'n', 'r', 'E', 's', 'u', 'z', 'b':
		case 'i':
			return nil, 0, errors.New("sed -i edits in place")
		case 'f':
			return nil, 0, errors.New("sed -f reads the script from a file")
		case 'e':
			s := a[j+1:]
			if s == "" {
				skip = 1
			}
			return &s, skip, nil
		case 'l':
			if j == len(a)-1 {
				skip = 1
			}
			return nil, skip, nil
		default:
			return nil, 0, fmt.Errorf("sed -%c", c)
		}
	}
	return nil, 0, nil
}

// checkSedScript parses a sed script far enough to find every command and
// refuses w and W (write files), e (runs a command) and the w and e flags of
// s. Anything it cannot parse is refused, so that text it misreads can only
// make it refuse more, never hide a command.
func checkSedScript(script string) error {
	p := sedParser{s: script}
	depth := 0
	for {
		p.skipAll(" \t\n;")
		if p.eof() {
			break
		}
		if p.peek() == '#' {
			p.skipLine()
			continue
		}
		if err := p.addresses(); err != nil {
			return err
		}
		p.skipAll(" \t")
		if p.eof() {
			return errors.New("address without a command")
		}
		c := p.next()
		switch c {
		case '{':
			depth++
			continue
		case '}':
			if depth--; depth < 0 {
				return errors.New("unexpected }")
			}
		case 'w', 'W':
			return fmt.Errorf("%c command writes a file", c)
		case 'e':
			return errors.New("e command runs a command")
		case 's':
			if err := p.substitute(); err != nil {
				return err
			}
		case 'y':
			if err := p.delimited(2); err != nil {
				return err
			}
		case 'a', 'i', 'c', 'r', 'R':
			// Text and file names run to the end of the line.
			p.skipLine()
			continue
		case ':', 'b', 't', 'T', 'v':
			p.skipUntil(";\n")
		case 'l', 'L', 'q', 'Q':
			p.skipAll(" \t")
			p.skipAll("0123456789")
		case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		default:
			return fmt.Errorf("unknown command %q", c)
		}
		p.skipAll(" \t")
		if !p.eof() && strings.IndexByte(";\n}#", p.peek()) < 0 {
			return fmt.Errorf("unexpected %q after command %q", p.peek(), c)
		}
	}
	if depth != 0 {
		return errors.New("unbalanced {")
	}
	return nil
}

// sedParser is a cursor over a sed script.
type sedParser struct {
	s string
	i int
}

func (p *sedParser) eof() bool  { return p.i >= len(p.s) }
func (p *sedParser) peek() byte { return p.s[p.i] }

func (p *sedParser) next() byte {
	c := p.s[p.i]
	p.i++
	return c
}

func (p *sedParser) skipAll(set string) {
	for !p.eof() && strings.IndexByte(set, p.peek()) >= 0 {
		p.i++
	}
}

func (p *sedParser) skipUntil(set string) {
	for !p.eof() && strings.IndexByte(set, p.peek()) < 0 {
		p.i++
	}
}

// skipLine skips to the end of the line, where a backslash before the
// newline continues the line.
func (p *sedParser) skipLine() {
	for !p.eof() {
		switch p.next() {
		case '\\':
			if !p.eof() {
				p.i++
			}
		case '\n':
			return
		}
	}
}

// addresses reads an optional address or address range and a following '!'.
func (p *sedParser) addresses() error {
	ok, err := p.address()
	if err != nil || !ok {
		return err
	}
	p.skipAll(" \t")
	if !p.eof() && p.peek() == ',' {
		p.i++
		p.skipAll(" \t")
		if !p.eof() && (p.peek() == '+' || p.peek() == '~') {
			p.i++
			p.skipAll("0123456789")
		} else if ok, err := p.address(); err != nil {
			return err
		} else if !ok {
			return errors.New("missing second address")
		}
	}
	p.skipAll(" \t")
	if !p.eof() && p.peek() == '!' {
		p.i++
	}
	return nil
}

// address reads one address: a line number (with an optional ~step), $,
// /regex/ or \cregexc, the last two with optional I and M flags.
func (p *sedParser) address() (bool, error) {
	if p.eof() {
		return false, nil
	}
	switch c := p.peek(); {
	case c >= '0' && c <= '9':
		p.skipAll("0123456789")
		if !p.eof() && p.peek() == '~' {
			p.i++
			p.skipAll("0123456789")
		}
		return true, nil
	case c == '$':
		p.i++
		return true, nil
	case c == '/' || c == '\\':
		if c == '\\' {
			p.i++
			if p.eof() {
				return false, errors.New("missing address delimiter")
			}
		}
		delim := p.next()
		if err := p.until(delim); err != nil {
			return false, err
		}
		p.skipAll("IM")
		return true, nil
	}
	return false, nil
}

// until reads up to and past the unescaped delimiter.
func (p *sedParser) until(delim byte) error {
	for !p.eof() {
		switch c := p.next(); c {
		case '\\':
			if !p.eof() {
				p.i++
			}
		case delim:
			return nil
		case '\n':
			if delim != '\n' {
				return errors.New("newline inside a regex")
			}
		}
	}
	return fmt.Errorf("unterminated %q expression", delim)
}

// delimited reads n delimiter-terminated parts after the delimiter itself,
// as s and y have.
func (p *sedParser) delimited(n int) error {
	if p.eof() {
		return errors.New("missing delimiter")
	}
	delim := p.next()
	if delim == '\\' || delim == '\n' {
		return fmt.Errorf("invalid delimiter %q", delim)
	}
	for range n {
		if err := p.until(delim); err != nil {
			return err
		}
	}
	return nil
}

// substitute reads the rest of an s command and its flags.
func (p *sedParser) substitute() error {
	if err := p.delimited(2); err != nil {
		return err
	}
	for !p.eof() {
		switch c := p.peek(); {
		case c == 'w':
			return errors.New("s///w writes a file")
		case c == 'e':
			return errors.New("s///e runs the pattern space as a command")
		case strings.IndexByte("gpiImM0123456789", c) >= 0:
			p.i++
		default:
			return nil
		}
	}
	return nil
}
