//go:build !race

package wmd

const raceEnabled = false
