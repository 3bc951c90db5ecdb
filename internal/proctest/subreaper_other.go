//go:build unix && !linux

package proctest

// Subreaper does nothing outside Linux; orphans go to init, which reaps them.
func Subreaper() error { return nil }
