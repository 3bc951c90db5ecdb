//go:build race

package pipeline_test

// raceEnabled is set under the race detector, which slows the pipeline
// several times: TestHousekeepingLevelsOff then runs fewer turns.
const raceEnabled = true
