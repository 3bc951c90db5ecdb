// Package bashsafe classifies shell commands statically, without running
// them: whether a command only reads (so the scheduler may run it beside
// other calls and a worker may run it again after a crash) and whether it may
// destroy data.
//
// The read-only classifier errs towards "not read-only": anything it does not
// fully understand — a construct, a command, an option — makes the whole
// command not read-only. A wrong "no" costs some parallelism; a wrong "yes"
// could run a write twice or beside another call.
package bashsafe

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// ErrNotReadOnly is wrapped by every error Check returns.
var ErrNotReadOnly = errors.New("not read-only")

// IsReadOnly reports whether command only reads, as Check decides.
func IsReadOnly(command string) bool { return Check(command) == nil }

// Check returns nil when command is read-only and otherwise an error wrapping
// ErrNotReadOnly that names the first reason found.
//
// A command is read-only when it parses as bash and every simple command in
// it — across pipelines, lists, subshells and blocks — is on the read-only
// list with options that keep it so, and nothing else in it has an effect:
// no output redirection except to /dev/null, /dev/stdout or /dev/stderr (or
// another descriptor), no command, process or arithmetic substitution, no
// parameter expansion (not even inside double quotes), no unquoted glob or
// brace expansion, no tilde other than ~ and ~/path (the user's home, a
// fixed place), no assignments (env prefixes such as FOO=bar cmd
// included: they can change what a program does, as GIT_DIR or LD_PRELOAD
// show), no function or variable declarations, no control flow and no
// background jobs. A command name with a directory is accepted only from
// /bin or /usr/bin, where it means the same program as its base name. `cd`
// anywhere together with `git` anywhere is not read-only: git run in a
// directory the command chose can execute that repository's configured
// programs (core.fsmonitor and the like).
func Check(command string) (err error) {
	defer func() {
		// The parser is fuzzed upstream, but a classifier must never take
		// the caller down: a panic only means "not read-only".
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: classifier panicked: %v", ErrNotReadOnly, r)
		}
	}()
	if strings.TrimSpace(command) == "" {
		return fmt.Errorf("%w: empty command", ErrNotReadOnly)
	}
	f, err := parse(command)
	if err != nil {
		return fmt.Errorf("%w: parse: %w", ErrNotReadOnly, err)
	}
	var c checker
	if err := c.stmts(f.Stmts); err != nil {
		return fmt.Errorf("%w: %w", ErrNotReadOnly, err)
	}
	if c.sawCd && c.sawGit {
		return fmt.Errorf("%w: cd combined with git", ErrNotReadOnly)
	}
	return nil
}

// parse parses command as bash.
func parse(command string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
}

// checker walks one parsed command; it remembers what must be judged across
// commands rather than one at a time.
type checker struct {
	sawCd  bool
	sawGit bool
}

func (c *checker) stmts(stmts []*syntax.Stmt) error {
	for _, s := range stmts {
		if err := c.stmt(s); err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) stmt(s *syntax.Stmt) error {
	if s.Background || s.Coprocess || s.Disown {
		// A background job outlives the statement that started it, so
		// nothing about it can be promised.
		return errors.New("background job")
	}
	for _, r := range s.Redirs {
		if err := checkRedirect(r); err != nil {
			return err
		}
	}
	if s.Cmd == nil {
		return nil // only redirections, all of them already judged harmless
	}
	return c.command(s.Cmd)
}

func (c *checker) command(cmd syntax.Command) error {
	switch cmd := cmd.(type) {
	case *syntax.CallExpr:
		return c.call(cmd)
	case *syntax.BinaryCmd:
		// &&, ||, | and |& only sequence or connect their two sides.
		if err := c.stmt(cmd.X); err != nil {
			return err
		}
		return c.stmt(cmd.Y)
	case *syntax.Subshell:
		return c.stmts(cmd.Stmts)
	case *syntax.Block:
		return c.stmts(cmd.Stmts)
	case *syntax.TimeClause:
		if cmd.Stmt == nil {
			return nil
		}
		return c.stmt(cmd.Stmt)
	default:
		// Loops, conditionals, [[ ]], (( )), let, declarations and
		// functions: each can assign or loop over expansions, and none is
		// needed to read a file.
		return fmt.Errorf("%s is not allowed", nodeName(cmd))
	}
}

func (c *checker) call(call *syntax.CallExpr) error {
	if len(call.Assigns) > 0 {
		return errors.New("variable assignment")
	}
	args := make([]string, len(call.Args))
	for i, w := range call.Args {
		s, err := argument(w)
		if err != nil {
			return err
		}
		args[i] = s
	}
	name, err := commandName(args[0])
	if err != nil {
		return err
	}
	switch name {
	case "cd":
		c.sawCd = true
	case "git":
		c.sawGit = true
	}
	return checkCommand(name, args[1:])
}

// commandName maps a command word to the name its rules are kept under.
func commandName(word string) (string, error) {
	i := strings.LastIndexByte(word, '/')
	if i < 0 {
		return word, nil
	}
	switch word[:i] {
	case "/bin", "/usr/bin":
		return word[i+1:], nil
	}
	return "", fmt.Errorf("command %q outside /bin and /usr/bin", word)
}

// isSafeSink reports whether an output redirection to path writes no file.
func isSafeSink(path string) bool {
	switch path {
	case "/dev/null", "/dev/stdout", "/dev/stderr":
		return true
	}
	return false
}

func checkRedirect(r *syntax.Redirect) error {
	if r.N != nil && !isDigits(r.N.Value) {
		// {var}>file assigns a variable.
		return fmt.Errorf("redirection with variable %q", r.N.Value)
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		// The body of an unquoted here-document is expanded like a
		// double-quoted string, so it may substitute commands.
		if r.Hdoc != nil {
			for _, p := range r.Hdoc.Parts {
				if _, ok := p.(*syntax.Lit); !ok {
					return fmt.Errorf("%s in here-document", nodeName(p))
				}
			}
		}
		return nil
	}
	target, err := literal(r.Word)
	if err != nil {
		return fmt.Errorf("redirection target: %w", err)
	}
	switch r.Op {
	case syntax.RdrIn, syntax.WordHdoc:
		// Reading a file or a here-string; neither expands globs.
		return nil
	case syntax.DplIn:
		if isDigits(target) || target == "-" {
			return nil
		}
	case syntax.DplOut:
		// >&word names a file when word is not a descriptor.
		if isDigits(target) || target == "-" || isSafeSink(target) {
			return nil
		}
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut:
		if isSafeSink(target) {
			return nil
		}
	}
	return fmt.Errorf("redirection %s%s", r.Op, target)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// nodeName names a syntax node for an error message.
func nodeName(n syntax.Node) string {
	switch n.(type) {
	case *syntax.IfClause:
		return "if"
	case *syntax.WhileClause:
		return "while/until loop"
	case *syntax.ForClause:
		return "for loop"
	case *syntax.CaseClause:
		return "case"
	case *syntax.FuncDecl:
		return "function declaration"
	case *syntax.ArithmCmd, *syntax.ArithmExp:
		return "arithmetic"
	case *syntax.TestClause:
		return "[[ ]] test"
	case *syntax.DeclClause:
		return "declaration"
	case *syntax.LetClause:
		return "let"
	case *syntax.CoprocClause:
		return "coproc"
	case *syntax.ParamExp:
		return "parameter expansion"
	case *syntax.CmdSubst:
		return "command substitution"
	case *syntax.ProcSubst:
		return "process substitution"
	case *syntax.ExtGlob:
		return "extended glob"
	case *syntax.BraceExp:
		return "brace expansion"
	}
	return fmt.Sprintf("%T", n)
}
