package sandbox_test

import (
	"context"
	"fmt"
	"os"

	"github.com/toolwire/toolwire/tool/builtin/sandbox"
)

// A program that runs commands calls sandbox.Main first in main (here the
// test binary's TestMain does); then each command runs under an init of
// its own that leaves nothing behind, with its environment cut to what the
// policy allows.
func Example() {
	dir, _ := os.MkdirTemp("", "sandbox-example-")
	defer os.RemoveAll(dir)
	os.Setenv("EXAMPLE_SECRET", "not for commands")
	cmd, err := sandbox.Policy{}.Command(context.Background(), "bash",
		`sleep 300 & echo "secret=[$EXAMPLE_SECRET]"`, dir, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := cmd.Output() // returns at once: the init kills the background sleep
	fmt.Printf("under init: %v, %s", cmd.UnderInit, out)
	fmt.Println("error:", err)
	// Output:
	// under init: true, secret=[]
	// error: <nil>
}
