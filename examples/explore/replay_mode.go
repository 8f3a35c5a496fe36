package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kubeinternals/informers/trace"
)

// replaySource is what a replaying server serves: the player and the file it read.
type replaySource struct {
	player *player
	file   string
}

// actionsOff says why a replay's page has no actions.
const actionsOff = "this page replays a recording: no cluster is behind it (make explore runs a live one)"

// startReplay serves the recording in file on ln: the same page as a live explorer,
// fed by a player instead of a controller. No cluster starts. Stop undoes it.
func startReplay(ctx context.Context, file string, ln net.Listener, log *slog.Logger) (x *explorer, err error) {
	h, events, err := trace.OpenRecording(file)
	// Why a cut is no error here: a recording cut short by a crash is the record of
	// that crash, and every event before the cut is whole. The page, the log and the
	// terminal say where it was cut.
	cut := cutNote(err, len(events))
	if cut != "" {
		log.Warn("the recording is cut short: replaying the events before the cut", "file", file, "events", len(events), "err", err)
		err = nil
	}
	if err != nil {
		ln.Close()
		return nil, err
	}
	if len(events) == 0 {
		ln.Close()
		return nil, fmt.Errorf("%s: the recording has no events to replay", file)
	}
	caches := &replayCaches{keys: map[string]map[string]bool{}}
	hb := newHub(layoutOf(h.Pipeline), ringSize, caches.sizes)
	hb.label = replayLabel(h)
	target := &replayFeed{hub: hb, caches: caches}
	p := newPlayer(h, events, target)
	p.cut = cut
	hb.clock = p.now
	ctx, cancel := context.WithCancel(ctx)
	x = &explorer{done: make(chan struct{}), served: make(chan error, 1), URL: "http://" + ln.Addr().String() + "/", hub: hb, cancel: cancel, cut: cut}
	s, err := newServer(hb, ln.Addr().String(), x.done)
	if err != nil {
		cancel()
		ln.Close()
		return nil, err
	}
	s.replay = &replaySource{player: p, file: file}
	x.srv = &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second}
	x.players.Add(1)
	// Goroutine owned by the explorer: the player; Stop cancels it and waits.
	go func() {
		defer x.players.Done()
		p.run(ctx)
	}()
	// Goroutine owned by the explorer: the HTTP server; Stop shuts it down and waits.
	go func() { x.served <- x.srv.Serve(ln) }()
	log.Info("replaying", "file", file, "program", h.Program, "run", h.Run, "events", len(events))
	return x, nil
}

// cutNote says where a recording was cut short, if err is that cut and events were
// read before it; "" otherwise (a whole recording, a bad one, or a cut before the
// first event, which leaves nothing to replay).
func cutNote(err error, events int) string {
	var re *trace.RecordingError
	if events == 0 || !errors.Is(err, trace.ErrRecordingCut) || !errors.As(err, &re) {
		return ""
	}
	why := strings.TrimPrefix(re.Err.Error(), trace.ErrRecordingCut.Error()+": ")
	return fmt.Sprintf("recording cut at line %d: %s. The %d events before the cut are replayed.", re.Line, why, events)
}

// layoutOf is the boxes a recorded pipeline needs.
func layoutOf(p trace.Pipeline) layout {
	l := layout{HandlerOf: map[string]string{}, Workers: max(p.Workers, 1)}
	for _, inf := range p.Informers {
		l.Informers = append(l.Informers, inf.Source)
	}
	for _, h := range p.Handlers {
		l.Handlers = append(l.Handlers, h.Name)
		l.HandlerOf[h.Name] = h.Informer
	}
	return l
}

// replayLabel names what a replay shows, where a live page names its pipeline.
func replayLabel(h trace.RecordingHeader) pipelineLabel {
	what := strings.TrimSpace(h.Program + " " + h.Run)
	var queues []string
	for _, inf := range h.Pipeline.Informers {
		if inf.Queue != "" && !slices.Contains(queues, string(inf.Queue)) {
			queues = append(queues, string(inf.Queue))
		}
	}
	l := pipelineLabel{Name: "replay", Text: "replay of " + what}
	if len(queues) == 1 {
		l.Queue = queues[0]
	}
	return l
}

// replayFeed feeds the hub and keeps the caches' sizes that a live explorer reads
// from the caches themselves.
type replayFeed struct {
	hub    *hub
	caches *replayCaches
}

func (t *replayFeed) Record(e trace.Event) {
	t.caches.apply(e)
	t.hub.Record(e)
}

func (t *replayFeed) reset() {
	t.caches.reset()
	t.hub.reset()
}

// replayCaches is each informer's cache as the replayed Applied events built it: the
// keys it holds.
type replayCaches struct {
	mu   sync.Mutex
	keys map[string]map[string]bool // informer → keys; guarded by mu
}

func (c *replayCaches) apply(e trace.Event) {
	if e.Stage != trace.Informer || e.Kind != trace.Applied {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := c.keys[e.Source]
	if keys == nil {
		keys = map[string]bool{}
		c.keys[e.Source] = keys
	}
	if e.Type == "delete" {
		delete(keys, e.Key)
	} else {
		keys[e.Key] = true
	}
}

func (c *replayCaches) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.keys)
}

// sizes is the hub's caches function: objects per informer (a recording has no index
// values).
func (c *replayCaches) sizes() map[string]cacheSize {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]cacheSize{}
	for inf, keys := range c.keys {
		out[inf] = cacheSize{Objects: len(keys)}
	}
	return out
}

// serveReplay is POST /api/replay {"op": "play" | "pause" | "step" | "seek" |
// "speed", "value": n}: the player's controls.
func (s *server) serveReplay(w http.ResponseWriter, r *http.Request) {
	if !s.checkAction(w, r) {
		return
	}
	if s.replay == nil {
		httpError(w, http.StatusConflict, "replay: this explorer runs live, not from a recording")
		return
	}
	var in struct {
		Op    string  `json:"op"`
		Value float64 `json:"value"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	p := s.replay.player
	var err error
	switch in.Op {
	case "play":
		p.play()
	case "pause":
		p.pause()
	case "step":
		p.step()
	case "seek":
		err = p.seek(int(in.Value))
	case "speed":
		err = p.setSpeed(in.Value)
	default:
		err = errors.New(`op must be "play", "pause", "step", "seek" or "speed"`)
	}
	if err != nil {
		httpError(w, http.StatusBadRequest, "replay: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, p.state(s.replay.file))
}

// runReplay serves the recording in file until ctx ends.
func runReplay(ctx context.Context, log *slog.Logger, addr, file string) error {
	ln, err := listenLoopback(addr)
	if err != nil {
		return err
	}
	x, err := startReplay(ctx, file, ln, log)
	if err != nil {
		return err
	}
	fmt.Printf("\nexplorer ready: open %s\nreplaying %s: press play on the page (Ctrl-C stops it)\n", x.URL, file)
	if x.cut != "" {
		fmt.Printf("%s\n", x.cut)
	}
	fmt.Println()
	<-ctx.Done()
	return x.Stop()
}

// listenLoopback listens on addr, which must be a loopback address or "localhost".
//
// Why refuse other addresses: the page's buttons can restart the apiserver; they are
// for the person at this machine.
func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("-addr %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("-addr %q: the explorer listens on loopback only (127.0.0.1, ::1 or localhost)", addr)
	}
	if host == "localhost" {
		addr = net.JoinHostPort("127.0.0.1", addr[len(host)+1:])
	}
	return net.Listen("tcp", addr)
}
