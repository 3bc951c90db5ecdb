package bashsafe_test

import (
	"fmt"

	"github.com/toolwire/toolwire/tool/builtin/bashsafe"
)

// Commands classified without running them. Check says why a command is not
// read-only; anything the classifier does not fully understand counts as
// not read-only, so a wrong answer can only cost parallelism.
func ExampleCheck() {
	for _, cmd := range []string{
		"git log --oneline | head -5",
		"ls -la > listing.txt",
		"cat $(find . -name go.mod)",
		"rm -rf build",
	} {
		fmt.Printf("%q read-only=%v destructive=%v: %v\n", cmd, bashsafe.IsReadOnly(cmd), bashsafe.IsDestructive(cmd), bashsafe.Check(cmd))
	}
	// Output:
	// "git log --oneline | head -5" read-only=true destructive=false: <nil>
	// "ls -la > listing.txt" read-only=false destructive=false: not read-only: redirection >listing.txt
	// "cat $(find . -name go.mod)" read-only=false destructive=false: not read-only: command substitution
	// "rm -rf build" read-only=false destructive=true: not read-only: command "rm" is not on the read-only list
}
