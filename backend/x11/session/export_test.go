package session

// SweepStale is sweepStale, for the external tests.
var SweepStale = sweepStale
