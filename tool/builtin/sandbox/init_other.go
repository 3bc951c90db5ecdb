//go:build !linux

package sandbox

// Main records that the program can contain commands; outside Linux there
// is no init: commands get the environment, limits and process group only.
func Main() {}

func landlockABI() int { return 0 }
