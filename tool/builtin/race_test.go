//go:build race

package builtin

// raceEnabled is set under the race detector, whose shadow memory grows
// with every byte the process touches: TestBashBigOutputMemory's bound is
// for this process's own buffers, which only the plain run measures.
const raceEnabled = true
