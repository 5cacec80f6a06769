//go:build race

package rt_test

// raceDetector is set when the tests run under the race detector, whose
// own memory grows and levels off as the process runs: resident-memory
// bounds allow for it.
const raceDetector = true
