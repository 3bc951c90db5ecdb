package bashsafe

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// checkGit allows the read-only git subcommands with the options that keep
// them so.
//
// Global options are allowed from a short list; -c, --config-env and
// --exec-path (which can make git run any program) are refused with every
// other one, as are -C, --git-dir and --work-tree, which point git at a
// repository whose configuration the command chose — the same risk as cd.
func checkGit(args []string) error {
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		switch args[i] {
		case "--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs",
			"--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs",
			"--no-replace-objects", "--no-lazy-fetch", "--no-advice", "--version":
		default:
			return fmt.Errorf("git global option %s", args[i])
		}
	}
	if i == len(args) {
		return nil // git alone prints its usage
	}
	sub, rest := args[i], args[i+1:]
	// --output writes the diff to a file and --ext-diff runs the configured
	// external diff program; both are diff options every subcommand that
	// shows a diff accepts.
	if err := refuseLong("git "+sub, rest, "--output", "--ext-diff"); err != nil {
		return err
	}
	switch sub {
	case "status", "diff", "log", "show", "blame", "ls-files", "rev-parse",
		"rev-list", "describe", "cat-file", "for-each-ref", "merge-base",
		"shortlog":
		return nil
	case "grep":
		// -O/--open-files-in-pager runs a program on the matches.
		if err := refuseShort("git grep", rest, "O", "efABCm"); err != nil {
			return err
		}
		return refuseLong("git grep", rest, "--open-files-in-pager")
	case "reflog":
		return checkGitReflog(rest)
	case "remote":
		return checkGitRemote(rest)
	case "stash":
		return gitFirstOperandIn("stash", rest, "list", "show")
	case "worktree":
		return gitFirstOperandIn("worktree", rest, "list")
	case "config":
		return checkGitConfig(rest)
	case "branch":
		return checkGitBranchOrTag("branch", rest, "dDmMcCfut",
			"--delete", "--move", "--copy", "--force", "--set-upstream-to",
			"--set-upstream", "--unset-upstream", "--edit-description",
			"--track", "--no-track", "--create-reflog", "--recurse-submodules")
	case "tag":
		return checkGitBranchOrTag("tag", rest, "asuSfdmFe",
			"--annotate", "--sign", "--local-user", "--force", "--delete",
			"--message", "--file", "--edit", "--create-reflog", "--trailer",
			"--cleanup")
	}
	return fmt.Errorf("git %s is not read-only", sub)
}

// gitFirstOperandIn requires the first argument to be one of the allowed
// sub-subcommands.
func gitFirstOperandIn(sub string, rest []string, allowed ...string) error {
	if len(rest) > 0 && slices.Contains(allowed, rest[0]) {
		return nil
	}
	return fmt.Errorf("git %s %s is not read-only", sub, strings.Join(rest, " "))
}

// checkGitReflog allows showing and listing, refusing expire, delete, drop
// and write.
func checkGitReflog(rest []string) error {
	for _, a := range rest {
		if strings.HasPrefix(a, "-") {
			continue
		}
		switch a {
		case "expire", "delete", "drop", "write":
			return fmt.Errorf("git reflog %s", a)
		}
		return nil // the first operand is show, list, exists or a ref
	}
	return nil
}

// checkGitRemote allows `git remote`, `git remote -v` and `git remote show`.
func checkGitRemote(rest []string) error {
	for i, a := range rest {
		switch a {
		case "-v", "--verbose":
		case "show":
			return nil
		default:
			return fmt.Errorf("git remote %s", strings.Join(rest[i:], " "))
		}
	}
	return nil
}

// checkGitConfig allows only the query actions --get, --get-all, --list and -l.
func checkGitConfig(rest []string) error {
	query := false
	for _, a := range rest {
		switch {
		case a == "-l", a == "--list", a == "--get", a == "--get-all":
			query = true
		case a == "-e", abbreviates(a, "--edit"), abbreviates(a, "--add"),
			abbreviates(a, "--unset"), abbreviates(a, "--unset-all"),
			abbreviates(a, "--replace-all"), abbreviates(a, "--rename-section"),
			abbreviates(a, "--remove-section"):
			return fmt.Errorf("git config %s", a)
		}
	}
	if !query {
		return errors.New("git config without --get, --get-all or --list")
	}
	return nil
}

// checkGitBranchOrTag allows listing only: none of the options that create,
// delete, move or configure refs, and no name operand unless the command is
// in list mode (where operands are patterns). Options whose values are
// separate arguments are skipped so that the value is not taken for a name.
func checkGitBranchOrTag(sub string, rest []string, refusedShort string, refusedLong ...string) error {
	listing, operands := false, 0
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			operands += len(rest) - i - 1
			break
		}
		if _, ok := longName(a); ok {
			for _, o := range refusedLong {
				if abbreviates(a, o) {
					return fmt.Errorf("git %s %s", sub, a)
				}
			}
			for _, o := range []string{"--contains", "--no-contains", "--merged", "--no-merged", "--points-at"} {
				if abbreviates(a, o) {
					listing = true // these put git in list mode
				}
			}
			for _, o := range []string{"--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format"} {
				if abbreviates(a, o) && !hasValue(a) {
					i++
					break
				}
			}
			if abbreviates(a, "--list") {
				listing = true
			}
			continue
		}
		if isShortCluster(a) {
			for _, c := range a[1:] {
				if strings.ContainsRune(refusedShort, c) {
					return fmt.Errorf("git %s -%c", sub, c)
				}
				if c == 'l' {
					listing = true
				}
			}
			continue
		}
		operands++
	}
	if operands > 0 && !listing {
		return fmt.Errorf("git %s with a name operand", sub)
	}
	return nil
}
