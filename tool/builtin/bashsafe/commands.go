package bashsafe

import (
	"errors"
	"fmt"
	"strings"
)

// checkCommand applies the rule of the read-only command name to its
// arguments (already free of expansions); a name without a rule is not
// read-only.
//
// The list is the one in docs/tools.md (Bash), "[" included, which is test
// under another name. Commands with no option that writes, runs a program or
// changes the system need no rule beyond being listed.
func checkCommand(name string, args []string) error {
	switch name {
	case "ls", "cat", "head", "tail", "wc", "stat", "strings", "hexdump", "od",
		"nl", "id", "uname", "free", "df", "du", "locale", "groups", "nproc",
		"basename", "dirname", "realpath", "readlink", "cd", "cut", "paste",
		"tr", "column", "tac", "rev", "fold", "expand", "unexpand", "fmt",
		"comm", "cmp", "numfmt", "diff", "true", "false", "sleep", "which",
		"type", "expr", "test", "[", "getconf", "seq", "tsort", "pr", "cal",
		"uptime", "pwd", "whoami", "echo", "ps", "grep":
		return nil
	case "file":
		return checkFile(args)
	case "date":
		return checkDate(args)
	case "hostname":
		return checkHostname(args)
	case "tree":
		return checkTree(args)
	case "sort":
		return checkSort(args)
	case "uniq":
		return checkUniq(args)
	case "rg":
		return refuseLong(name, args, "--pre")
	case "jq":
		return checkJq(args)
	case "find":
		return checkFind(args)
	case "sed":
		return checkSed(args)
	case "xargs":
		return checkXargs(args)
	case "git":
		return checkGit(args)
	}
	return fmt.Errorf("command %q is not on the read-only list", name)
}

// isShortCluster reports whether arg is a cluster of single-letter options
// such as -rn (and not "-", "--" or a long option).
func isShortCluster(arg string) bool {
	return len(arg) > 1 && arg[0] == '-' && arg[1] != '-'
}

// longName returns the option name of a long option ("--output" for
// "--output=x") and whether arg is one.
func longName(arg string) (string, bool) {
	if len(arg) <= 2 || !strings.HasPrefix(arg, "--") {
		return "", false
	}
	name, _, _ := strings.Cut(arg, "=")
	return name, true
}

// hasValue reports whether a long option carries its value after '='.
func hasValue(arg string) bool { return strings.Contains(arg, "=") }

// abbreviates reports whether arg is the long option opt or an abbreviation
// of it: GNU getopt_long and git accept any unambiguous prefix, so --out is
// --output.
func abbreviates(arg, opt string) bool {
	name, ok := longName(arg)
	return ok && strings.HasPrefix(opt, name)
}

// refuseLong fails when an argument is, or abbreviates, one of the long options.
func refuseLong(cmd string, args []string, opts ...string) error {
	for _, a := range args {
		for _, o := range opts {
			if abbreviates(a, o) {
				return fmt.Errorf("%s %s", cmd, a)
			}
		}
	}
	return nil
}

// refuseShort fails when a short-option cluster holds one of the letters in
// refused before any of the letters in takesValue (whose value is the rest
// of the cluster). Values given as separate arguments are checked like
// options: a value that looks like a refused option is refused, which can
// only err towards "not read-only".
func refuseShort(cmd string, args []string, refused, takesValue string) error {
	for _, a := range args {
		if !isShortCluster(a) {
			continue
		}
		for _, c := range a[1:] {
			if strings.ContainsRune(refused, c) {
				return fmt.Errorf("%s -%c", cmd, c)
			}
			if strings.ContainsRune(takesValue, c) {
				break
			}
		}
	}
	return nil
}

// checkFile refuses -C/--compile, which writes a compiled magic file.
func checkFile(args []string) error {
	if err := refuseShort("file", args, "C", "eFfmP"); err != nil {
		return err
	}
	return refuseLong("file", args, "--compile")
}

// checkSort refuses -o/--output (writes a file) and --compress-program
// (runs a program).
func checkSort(args []string) error {
	if err := refuseShort("sort", args, "o", "ktST"); err != nil {
		return err
	}
	return refuseLong("sort", args, "--output", "--compress-program")
}

// checkTree refuses -o (writes a file) and -R (re-runs tree with -o in every
// directory). tree reads -o as a short option only.
func checkTree(args []string) error {
	return refuseShort("tree", args, "oR", "")
}

// checkHostname refuses everything that sets the host name: an operand,
// -F/--file and -b/--boot.
func checkHostname(args []string) error {
	for _, a := range args {
		if a == "-" || !strings.HasPrefix(a, "-") {
			return fmt.Errorf("hostname with operand %q", a)
		}
	}
	if err := refuseShort("hostname", args, "Fb", ""); err != nil {
		return err
	}
	return refuseLong("hostname", args, "--file", "--boot")
}

// checkDate refuses -s/--set and an operand that is not a +FORMAT, both of
// which set the clock.
func checkDate(args []string) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case abbreviates(a, "--set"):
			return fmt.Errorf("date %s", a)
		case abbreviates(a, "--date"), abbreviates(a, "--file"), abbreviates(a, "--reference"):
			if !hasValue(a) {
				i++
			}
		case isShortCluster(a):
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 's':
					return errors.New("date -s")
				case 'd', 'f', 'r':
					if j == len(a)-1 {
						i++ // the value is the next argument
					}
					j = len(a)
				case 'I':
					j = len(a) // an optional value, attached
				}
			}
		case strings.HasPrefix(a, "--"):
		case !strings.HasPrefix(a, "+"):
			return fmt.Errorf("date with operand %q", a)
		}
	}
	return nil
}

// checkUniq allows at most one file operand: a second one is the output file.
func checkUniq(args []string) error {
	operands := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands += len(args) - i - 1
			i = len(args)
		case abbreviates(a, "--skip-fields"), abbreviates(a, "--skip-chars"), abbreviates(a, "--check-chars"):
			if !hasValue(a) {
				i++
			}
		case strings.HasPrefix(a, "--"):
		case isShortCluster(a):
			for j := 1; j < len(a); j++ {
				if strings.IndexByte("fsw", a[j]) >= 0 {
					if j == len(a)-1 {
						i++
					}
					break
				}
			}
		default:
			operands++
		}
	}
	if operands > 1 {
		return errors.New("uniq with an output file operand")
	}
	return nil
}

// checkJq refuses the options that take the program or data from files.
func checkJq(args []string) error {
	if err := refuseShort("jq", args, "f", ""); err != nil {
		return err
	}
	return refuseLong("jq", args, "--from-file", "--slurpfile", "--rawfile")
}

// checkFind refuses the actions that delete, run programs or write files.
func checkFind(args []string) error {
	for _, a := range args {
		switch a {
		case "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fls":
			return fmt.Errorf("find %s", a)
		}
		if strings.HasPrefix(a, "-fprint") {
			return fmt.Errorf("find %s", a)
		}
	}
	return nil
}

// checkXargs allows xargs only in front of a command that cannot write,
// whatever arguments it is given: echo, printf, wc, grep, head or tail.
func checkXargs(args []string) error {
	i := 0
loop:
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			i++
			break loop
		case strings.HasPrefix(a, "--"):
			for _, o := range []string{"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"} {
				if abbreviates(a, o) && !hasValue(a) {
					i++
					break
				}
			}
		case isShortCluster(a):
			for j := 1; j < len(a); j++ {
				c := a[j]
				switch {
				case strings.IndexByte("0oprtx", c) >= 0:
				case strings.IndexByte("adEILnPs", c) >= 0:
					if j == len(a)-1 {
						i++
					}
					j = len(a)
				case strings.IndexByte("eil", c) >= 0:
					j = len(a) // an optional value, attached
				default:
					return fmt.Errorf("xargs -%c", c)
				}
			}
		default:
			break loop // xargs stops reading options at its command
		}
	}
	if i >= len(args) {
		return nil // xargs runs echo
	}
	name, err := commandName(args[i])
	if err != nil {
		return err
	}
	switch name {
	case "echo", "printf", "wc", "grep", "head", "tail":
		return nil
	}
	return fmt.Errorf("xargs runs %q", name)
}
