//go:build race

package wmd

// raceEnabled: sync.Pool drops items at random under the race detector.
const raceEnabled = true
