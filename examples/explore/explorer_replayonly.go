//go:build replayonly

package main

// liveExplorer is empty in the replay-only build: no controller runs.
type liveExplorer struct{}

func (*liveExplorer) stopLive() error { return nil }
