//go:build race

package openaichat

// raceEnabled is set under the race detector, which slows the parser about
// tenfold; TestFixturesRechunked then samples the byte boundaries of large
// fixtures instead of trying each one (the plain test run tries them all).
const raceEnabled = true
