//go:build race

package gen

// raceSlowdown is how much slower the race detector makes the timed tests.
const raceSlowdown = 10
