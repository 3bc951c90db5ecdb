//go:build !race

package openaichat

// raceEnabled is set under the race detector; see race_test.go.
const raceEnabled = false
