//go:build race

package secretcheck_test

// raceEnabled makes the CLI under test share the race-instrumented build
// cache of the test binary, so building it costs a link, not a compile.
const raceEnabled = true
