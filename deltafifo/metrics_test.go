package deltafifo

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// lockCheckingGauge records every length it is set to, and whether the queue's lock
// was held at that moment.
type lockCheckingGauge struct {
	mu       *sync.Mutex // the queue's
	values   []float64
	unlocked int // Sets made without the queue's lock
}

func (g *lockCheckingGauge) Set(v float64) {
	if g.mu.TryLock() {
		g.unlocked++
		g.mu.Unlock()
	}
	g.values = append(g.values, v)
}

// Both queues set QueuedItems to their length after every write and every pop, with
// their lock held, so the values land in the order of the changes.
func TestTheQueuedItemsGaugeIsSetUnderTheQueuesLock(t *testing.T) {
	for _, c := range []struct {
		name string
		new  func(g *lockCheckingGauge) Queue[*corev1.ConfigMap]
		want []float64
	}{
		{"DeltaFIFO counts keys", func(g *lockCheckingGauge) Queue[*corev1.ConfigMap] {
			f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{QueuedItems: g})
			g.mu = &f.mu
			return f
		}, []float64{1, 2, 1, 0}}, // a, b (a's update joins a's deltas), two pops
		{"RealFIFO counts deltas", func(g *lockCheckingGauge) Queue[*corev1.ConfigMap] {
			f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{QueuedItems: g})
			g.mu = &f.mu
			return f
		}, []float64{1, 2, 3, 2, 1, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := &lockCheckingGauge{}
			q := c.new(g)
			require.NoError(t, q.Add(cm("ns", "a", "1")))
			require.NoError(t, q.Add(cm("ns", "b", "1")))
			require.NoError(t, q.Update(cm("ns", "a", "2")))
			popAll(t, q)
			assert.Equal(t, c.want, g.values)
			assert.Zero(t, g.unlocked, "every Set with the queue's lock held")
		})
	}
}
