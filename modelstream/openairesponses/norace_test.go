//go:build !race

package openairesponses

// raceEnabled is set under the race detector; see race_test.go.
const raceEnabled = false
