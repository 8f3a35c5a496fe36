package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kubeinternals/informers/trace"
)

// Replay: the explorer serves a recording (docs/recordings/README.md) instead of a
// live controller. A player feeds the recording's events to the hub, paced by their
// recorded times, and the page draws them exactly as it draws a live pipeline's: the
// same boxes, timeline, journeys and plots. Nothing else differs, which is the point
// of recording the trace's own events.

// replayTarget is what a player feeds: the hub.
type replayTarget interface {
	// Record takes the next event.
	Record(trace.Event)
	// reset forgets every event, for a replay that starts over (a seek backwards).
	reset()
}

// Replay speeds.
const (
	minSpeed = 0.1
	maxSpeed = 100.0
	// maxGap is the longest a player waits between two events, at any speed.
	//
	// Why: recordings have quiet stretches (a scenario waiting 20s for a watch
	// timeout, a backoff of a second); replayed at their length, they look like a
	// page that stopped. The status says when a gap was shortened.
	maxGap = 1500 * time.Millisecond
)

// player replays events into a target. Its methods are safe for concurrent use: the
// page's requests call them while run feeds the target.
type player struct {
	header trace.RecordingHeader
	events []trace.Event
	target replayTarget
	wake   chan struct{} // buffered 1: a control changed

	mu sync.Mutex
	// pos is how many events the target has received: the next is events[pos].
	// Guarded by mu, like the fields below.
	pos     int
	playing bool
	speed   float64
	// shortened is the last quiet stretch the player did not wait out, for the status.
	shortened time.Duration
	// cut says where the recording was cut short ("" if it is whole). Set before run;
	// never changed.
	cut string
}

func newPlayer(h trace.RecordingHeader, events []trace.Event, target replayTarget) *player {
	return &player{header: h, events: events, target: target, speed: 1, wake: make(chan struct{}, 1)}
}

// replayState is the player as the page shows it.
type replayState struct {
	File    string `json:"file"`
	Program string `json:"program,omitempty"`
	Run     string `json:"run,omitempty"`
	Title   string `json:"title,omitempty"`
	// Pos is how many events were played, of Total.
	Pos     int     `json:"pos"`
	Total   int     `json:"total"`
	Playing bool    `json:"playing"`
	Speed   float64 `json:"speed"`
	// At is the recorded time of the last event played, and Duration the recording's
	// length, both in milliseconds since its start.
	At       float64 `json:"at"`
	Duration float64 `json:"duration"`
	// Shortened says that the player skipped part of a quiet stretch, and how much.
	Shortened string `json:"shortened,omitempty"`
	// Cut says where the recording was cut short: its events end there.
	Cut string `json:"cut,omitempty"`
}

// state is the player's state now.
func (p *player) state(file string) replayState {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := replayState{File: file, Program: p.header.Program, Run: p.header.Run, Title: p.header.Title,
		Pos: p.pos, Total: len(p.events), Playing: p.playing, Speed: p.speed, Duration: p.offset(len(p.events)), Cut: p.cut}
	s.At = p.offset(p.pos)
	if p.shortened > 0 {
		s.Shortened = fmt.Sprintf("a quiet %s was shortened to %s", p.shortened.Round(time.Millisecond), maxGap)
	}
	return s
}

// offset is the recorded time of the n-th event (the last played when n = pos) in
// milliseconds since the recording's start; 0 before the first.
func (p *player) offset(n int) float64 {
	if n == 0 || len(p.events) == 0 {
		return 0
	}
	return float64(p.events[n-1].Time.Sub(p.header.Start)) / float64(time.Millisecond)
}

// now is the replay's clock: the recorded time of the last event played. The hub's
// snapshot reads it instead of the wall clock, so that a retry's backoff is counted
// down in recorded time.
func (p *player) now() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pos == 0 {
		return p.header.Start
	}
	return p.events[p.pos-1].Time
}

// play starts or resumes the replay; at the end it starts over.
func (p *player) play() {
	p.mu.Lock()
	if p.pos == len(p.events) {
		p.seekLocked(0)
	}
	p.playing = true
	p.mu.Unlock()
	p.poke()
}

// pause stops the replay where it is.
func (p *player) pause() {
	p.mu.Lock()
	p.playing = false
	p.mu.Unlock()
	p.poke()
}

// step pauses and plays the next event, if any.
func (p *player) step() {
	p.mu.Lock()
	p.playing = false
	if p.pos < len(p.events) {
		p.target.Record(p.events[p.pos])
		p.pos++
	}
	p.mu.Unlock()
	p.poke()
}

// setSpeed sets how many recorded seconds pass per second of replay.
func (p *player) setSpeed(speed float64) error {
	if speed < minSpeed || speed > maxSpeed {
		return fmt.Errorf("speed %g: from %g to %g times the recorded pace", speed, minSpeed, maxSpeed)
	}
	p.mu.Lock()
	p.speed = speed
	p.mu.Unlock()
	p.poke()
	return nil
}

// seek moves the replay to just after n events have been played, keeping it playing
// or paused: forwards it feeds the events between at once, backwards it starts over
// from an empty target.
func (p *player) seek(n int) error {
	if n < 0 || n > len(p.events) {
		return fmt.Errorf("position %d: the recording has %d events", n, len(p.events))
	}
	p.mu.Lock()
	p.seekLocked(n)
	p.mu.Unlock()
	p.poke()
	return nil
}

func (p *player) seekLocked(n int) {
	if n < p.pos {
		p.target.reset()
		p.pos = 0
	}
	for ; p.pos < n; p.pos++ {
		p.target.Record(p.events[p.pos])
	}
	p.shortened = 0
}

// poke wakes run: a control changed what it should wait for.
func (p *player) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// run feeds the events while playing, each after the recorded time since the one
// before it, divided by the speed (at most maxGap), until ctx ends. It stops playing
// after the last event.
//
// Invariant: only run and the controls move pos, always under mu, and an event is
// recorded under mu: the target receives the events in order, each once per pass.
func (p *player) run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		p.mu.Lock()
		wait := time.Duration(-1)
		if p.playing && p.pos < len(p.events) {
			wait = 0
			if p.pos > 0 {
				gap := time.Duration(float64(p.events[p.pos].Time.Sub(p.events[p.pos-1].Time)) / p.speed)
				wait = max(min(gap, maxGap), 0)
				if gap > maxGap {
					p.shortened = time.Duration(float64(gap) * p.speed)
				}
			}
		} else if p.pos == len(p.events) {
			p.playing = false
		}
		p.mu.Unlock()

		if wait < 0 {
			// Paused, or at the end: wait for a control.
			select {
			case <-ctx.Done():
				return
			case <-p.wake:
				continue
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
			// A control changed the position, the speed or the state: compute again.
			// (Since Go 1.23 a stopped timer's channel holds no stale value.)
			timer.Stop()
			continue
		case <-timer.C:
		}
		p.mu.Lock()
		if p.playing && p.pos < len(p.events) {
			p.target.Record(p.events[p.pos])
			p.pos++
		}
		p.mu.Unlock()
	}
}
