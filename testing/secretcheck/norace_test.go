//go:build !race

package secretcheck_test

const raceEnabled = false
