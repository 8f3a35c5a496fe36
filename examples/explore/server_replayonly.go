//go:build replayonly

package main

import "net/http"

// liveParts is empty in the replay-only build: a replay acts on no cluster.
type liveParts struct{}

func (s *server) liveRoutes(*http.ServeMux) {}

func (s *server) livePage(*pageData) {}

func (s *server) lastActionText() string { return "" }
