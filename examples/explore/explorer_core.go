package main

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"
)

// ringSize is how many trace events the hub keeps for new streams and journeys.
const ringSize = 20000

// explorer is the running explorer: the controller traced into the hub (or, in
// replay, a player feeding it), and the server of the page.
type explorer struct {
	URL    string
	hub    *hub
	srv    *http.Server
	done   chan struct{} // closed to end the event streams
	served chan error    // Serve's result
	// cancel and players, in replay: the player's context and its goroutine.
	cancel  context.CancelFunc
	players sync.WaitGroup
	// cut, in replay, says where the recording was cut short; "" if it is whole.
	cut string
	// liveExplorer is the controller's runner (explorer.go); empty in the replay-only
	// build.
	liveExplorer
}

// Stop ends the event streams, shuts the server down (waiting up to 10s for actions
// in progress), then stops the controller — ending a pipeline switch in progress — or
// the player.
func (x *explorer) Stop() error {
	close(x.done)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errShut := x.srv.Shutdown(ctx)
	if err := <-x.served; !errors.Is(err, http.ErrServerClosed) {
		errShut = errors.Join(errShut, err)
	}
	if x.cancel != nil {
		x.cancel()
		x.players.Wait()
	}
	return errors.Join(errShut, x.stopLive())
}
