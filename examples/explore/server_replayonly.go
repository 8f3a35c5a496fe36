//go:build replayonly

package main

import "net/http"

// liveParts is empty in the replay-only build: a replay acts on no cluster.
//
//lint:ignore U1000 embedded in server so that both builds share one struct; empty here
type liveParts struct{}

func (s *server) liveRoutes(*http.ServeMux) {}

func (s *server) livePage(*pageData) {}

func (s *server) lastActionText() string { return "" }
