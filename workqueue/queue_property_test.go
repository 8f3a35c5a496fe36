package workqueue

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQueueUnderConcurrency runs many producers and consumers over a small key space
// and checks the queue's three promises:
//   - never processed concurrently: a consumer that gets a key another consumer is
//     still processing fails the test;
//   - nothing lost: after the drain, every key was processed after its last Add;
//   - a re-added item is processed again: keys are re-added while they are processing
//     (the key space is small), and those Adds must lead to another round.
//
// Each key has a version that a producer bumps just before Add. A consumer reads it
// right after Get; the promise "an Add while processing causes another round" means
// the last version read for each key equals its final version.
func TestQueueUnderConcurrency(t *testing.T) {
	tests := []struct {
		producers, consumers, keys, addsPerProducer int
	}{
		{producers: 1, consumers: 1, keys: 5, addsPerProducer: 5000},
		{producers: 4, consumers: 4, keys: 8, addsPerProducer: 3000},
		{producers: 8, consumers: 2, keys: 100, addsPerProducer: 2000},
		{producers: 2, consumers: 8, keys: 3, addsPerProducer: 3000},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%d producers and %d consumers over %d keys lose nothing and never overlap",
			tt.producers, tt.consumers, tt.keys)
		t.Run(name, func(t *testing.T) {
			q := NewQueue[int](Options{})
			versions := make([]atomic.Int64, tt.keys) // bumped before each Add
			inFlight := make([]atomic.Bool, tt.keys)  // set between Get and Done
			var mu sync.Mutex
			lastSeen := make([]int64, tt.keys) // guarded by mu: version read at the latest Get
			var overlaps, rounds atomic.Int64

			var consumers sync.WaitGroup
			for range tt.consumers {
				consumers.Go(func() {
					for {
						k, shutdown := q.Get()
						if shutdown {
							return
						}
						if !inFlight[k].CompareAndSwap(false, true) {
							overlaps.Add(1)
						}
						v := versions[k].Load()
						mu.Lock()
						lastSeen[k] = max(lastSeen[k], v)
						mu.Unlock()
						rounds.Add(1)
						runtime.Gosched() // "work": give producers a chance to re-add k
						inFlight[k].Store(false)
						q.Done(k)
					}
				})
			}
			var producers sync.WaitGroup
			for p := range tt.producers {
				producers.Go(func() {
					for i := range tt.addsPerProducer {
						k := (i*7 + p) % tt.keys
						versions[k].Add(1)
						q.Add(k)
					}
				})
			}
			producers.Wait()
			q.ShutDown() // queued and re-added items still drain
			consumers.Wait()

			require.Zero(t, overlaps.Load(), "a key was processed by two consumers at once")
			for k := range tt.keys {
				assert.Equal(t, versions[k].Load(), lastSeen[k], "key %d: its last Add was never processed", k)
			}
			total := int64(tt.producers * tt.addsPerProducer)
			assert.LessOrEqual(t, rounds.Load(), total, "more rounds than Adds: something was processed twice")
			assert.Empty(t, q.dirty)
			assert.Empty(t, q.processing)
		})
	}
}
