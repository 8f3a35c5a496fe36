package main

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/trace"
)

// fakeTarget records what a player feeds it, with the (fake) time it arrived.
type fakeTarget struct {
	mu     sync.Mutex
	got    []string
	at     []time.Duration
	resets int
	start  time.Time
}

func (f *fakeTarget) Record(e trace.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, e.Key)
	f.at = append(f.at, time.Since(f.start))
}

func (f *fakeTarget) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resets++
	f.got, f.at = nil, nil
}

func (f *fakeTarget) keys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.got...)
}

// recording is four events at 0, 100ms, 300ms and 10.3s (a quiet 10s).
func recording() (trace.RecordingHeader, []trace.Event) {
	h := trace.RecordingHeader{Start: t0, Program: "lab", Run: "test"}
	var events []trace.Event
	for i, ms := range []int{0, 100, 300, 10300} {
		events = append(events, at(ms, trace.Event{Stage: trace.Workqueue, Kind: trace.Added, Key: string(rune('a' + i))}))
	}
	return h, events
}

func TestAPlayerPacesEventsByTheirRecordedTimesAndShortensQuietStretches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, events := recording()
		target := &fakeTarget{start: time.Now()}
		p := newPlayer(h, events, target)
		go p.run(t.Context())
		synctest.Wait()
		assert.Empty(t, target.keys(), "a player starts paused")

		p.play()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		assert.Equal(t, []string{"a", "b", "c", "d"}, target.keys())
		assert.Equal(t, []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond, 300*time.Millisecond + maxGap}, target.at,
			"each event after its recorded gap; the quiet 10s waited only maxGap")
		s := p.state("f.jsonl.gz")
		assert.False(t, s.Playing, "it stops after the last event")
		assert.Equal(t, 4, s.Pos)
		assert.Equal(t, 10300.0, s.At)
		assert.Equal(t, "a quiet 10s was shortened to 1.5s", s.Shortened)
		assert.True(t, p.now().Equal(events[3].Time), "the replay's clock is the last event's recorded time")
	})
}

func TestAPlayerAtDoubleSpeedWaitsHalfTheGaps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, events := recording()
		target := &fakeTarget{start: time.Now()}
		p := newPlayer(h, events[:3], target)
		require.NoError(t, p.setSpeed(2))
		go p.run(t.Context())
		p.play()
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, []time.Duration{0, 50 * time.Millisecond, 150 * time.Millisecond}, target.at)
		assert.Error(t, p.setSpeed(0))
		assert.Error(t, p.setSpeed(1000))
	})
}

func TestPauseStepAndSeek(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, events := recording()
		target := &fakeTarget{start: time.Now()}
		p := newPlayer(h, events, target)
		go p.run(t.Context())

		p.play()
		time.Sleep(150 * time.Millisecond)
		p.pause()
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, []string{"a", "b"}, target.keys(), "paused after b: nothing more, however long")

		p.step()
		synctest.Wait()
		assert.Equal(t, []string{"a", "b", "c"}, target.keys(), "a step plays exactly the next event")
		assert.False(t, p.state("").Playing)

		require.NoError(t, p.seek(1))
		assert.Equal(t, []string{"a"}, target.keys(), "a seek backwards starts over from an empty target")
		assert.Equal(t, 1, target.resets)
		require.NoError(t, p.seek(4))
		assert.Equal(t, []string{"a", "b", "c", "d"}, target.keys(), "a seek forwards plays the events between at once")
		assert.Equal(t, 1, target.resets)
		assert.Error(t, p.seek(5))
		assert.Error(t, p.seek(-1))

		p.step()
		assert.Equal(t, 4, p.state("").Pos, "a step at the end does nothing")
		p.play()
		synctest.Wait()
		assert.Equal(t, 2, target.resets, "play at the end starts over")
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, []string{"a", "b", "c"}, target.keys())
	})
}

// TestAReplayFeedsTheHubWhileThePageReadsIt plays a recording into a real hub while
// snapshots are read, as the page's stream does: the hub's clock is the player's, so
// the two take each other's locks; neither may wait on the other.
func TestAReplayFeedsTheHubWhileThePageReadsIt(t *testing.T) {
	h, events := recording()
	for range 8 {
		events = append(events, events...)
	}
	hb := testHub(100)
	p := newPlayer(h, events, &replayFeed{hub: hb, caches: &replayCaches{keys: map[string]map[string]bool{}}})
	hb.clock = p.now
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range len(events) {
			p.step()
		}
		require.NoError(t, p.seek(1))
	}()
	deadline := time.After(20 * time.Second)
	for {
		hb.snapshot()
		select {
		case <-done:
			assert.Equal(t, uint64(1), hb.snapshot().Events)
			return
		case <-deadline:
			t.Fatal("the player and the snapshot waited on each other")
		default:
		}
	}
}
