package builtin

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// benignExit reports whether exit code 1 of command is an answer rather than
// a failure: grep and rg found no match, diff, cmp, git diff found
// differences, find could not visit everything it was asked to. The command
// that decides is the last one of the top-level list or pipeline, whose
// status is the shell's (without pipefail); the judgement is the last
// command's, so `grep x f && echo found` failing with 1 is still an error —
// echo did not run, and the chain was cut short.
func benignExit(command string, code int) bool {
	if code != 1 {
		return false
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil || len(f.Stmts) == 0 {
		return false
	}
	args := lastCall(f.Stmts[len(f.Stmts)-1])
	if len(args) == 0 {
		return false
	}
	switch path.Base(args[0]) {
	case "grep", "egrep", "fgrep", "rg", "find", "diff", "cmp":
		return true
	case "git":
		switch gitSubcommand(args[1:]) {
		case "grep", "diff":
			return true
		}
	}
	return false
}

// lastCall returns the literal words of the command whose status is the
// statement's, or nil when that is not a plain command.
func lastCall(s *syntax.Stmt) []string {
	for s != nil && !s.Negated {
		switch cmd := s.Cmd.(type) {
		case *syntax.BinaryCmd:
			s = cmd.Y
		case *syntax.Subshell:
			s = lastStmt(cmd.Stmts)
		case *syntax.Block:
			s = lastStmt(cmd.Stmts)
		case *syntax.TimeClause:
			s = cmd.Stmt
		case *syntax.CallExpr:
			args := make([]string, len(cmd.Args))
			for i, w := range cmd.Args {
				args[i] = w.Lit()
			}
			return args
		default:
			return nil
		}
	}
	return nil
}

func lastStmt(stmts []*syntax.Stmt) *syntax.Stmt {
	if len(stmts) == 0 {
		return nil
	}
	return stmts[len(stmts)-1]
}

// gitSubcommand skips git's global options, with the values of those that
// take one, and returns the subcommand.
func gitSubcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" || a == "--namespace":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return ""
}
