package bashsafe

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// IsDestructive reports whether command may destroy data: it runs rm, rmdir,
// unlink, dd, shred, truncate, wipefs, mkswap, fdisk, sfdisk, parted or a
// mkfs variant (directly, under a wrapper such as sudo, xargs or env, or
// from find -exec), find -delete, git reset --hard, git clean (without
// -n/--dry-run), git push --force, git branch -D or git stash drop/clear.
//
// It is a signal for permission prompts and logs, not a guarantee: a
// truncating redirection (> file) or an interpreter (python -c ...) can
// destroy data without being flagged. It errs towards true: a command that
// does not parse is judged by its words.
func IsDestructive(command string) (destructive bool) {
	defer func() {
		if r := recover(); r != nil {
			destructive = true
		}
	}()
	f, err := parse(command)
	if err != nil {
		return slices.ContainsFunc(strings.FieldsFunc(command, isWordSeparator), isDestructiveName)
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok && !destructive {
			destructive = isDestructiveCall(wordValues(call.Args))
		}
		return !destructive
	})
	return destructive
}

func isWordSeparator(r rune) bool {
	return strings.ContainsRune(" \t\n;&|()`$<>{}\"'", r)
}

// wordValues returns the literal value of each word, or its raw literal
// parts when it is not literal (enough to recognise a name in it).
func wordValues(words []*syntax.Word) []string {
	out := make([]string, len(words))
	for i, w := range words {
		if s, err := literal(w); err == nil {
			out[i] = s
		} else {
			out[i] = w.Lit()
		}
	}
	return out
}

func isDestructiveName(word string) bool {
	switch name := path.Base(word); name {
	case "rm", "rmdir", "unlink", "dd", "shred", "truncate", "wipefs",
		"mkswap", "fdisk", "sfdisk", "parted":
		return true
	default:
		return name == "mkfs" || strings.HasPrefix(name, "mkfs.")
	}
}

func isDestructiveCall(args []string) bool {
	if len(args) == 0 {
		return false
	}
	name, rest := path.Base(args[0]), args[1:]
	if isDestructiveName(name) {
		return true
	}
	switch name {
	case "sudo", "doas", "env", "nice", "ionice", "nohup", "timeout", "time",
		"command", "exec", "builtin", "xargs", "stdbuf", "chroot", "watch":
		// The wrapped command is somewhere in the arguments; any argument
		// naming a destructive command counts.
		return slices.ContainsFunc(rest, isDestructiveName)
	case "find":
		for i, a := range rest {
			switch a {
			case "-delete":
				return true
			case "-exec", "-execdir", "-ok", "-okdir":
				if i+1 < len(rest) && isDestructiveName(rest[i+1]) {
					return true
				}
			}
		}
	case "git":
		return isDestructiveGit(rest)
	}
	return false
}

func isDestructiveGit(args []string) bool {
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		switch args[i] {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace":
			i++ // the option's value
		}
	}
	if i >= len(args) {
		return false
	}
	sub, rest := args[i], args[i+1:]
	has := func(opts ...string) bool {
		return slices.ContainsFunc(rest, func(a string) bool { return slices.Contains(opts, a) })
	}
	switch sub {
	case "reset":
		return has("--hard")
	case "clean":
		return !has("-n", "--dry-run")
	case "push":
		return has("-f", "--force") || slices.ContainsFunc(rest, func(a string) bool {
			return strings.HasPrefix(a, "--force") || strings.HasPrefix(a, "+")
		})
	case "branch":
		return has("-D") || (has("-d", "--delete") && has("-f", "--force"))
	case "stash":
		return len(rest) > 0 && (rest[0] == "drop" || rest[0] == "clear")
	}
	return false
}
