package deltafifo

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// TestQueuesConvergeToTheCluster is a model-based test. A naive map plays the
// cluster; random steps create, update and delete objects in it, break and restore
// the watch (events are lost while it is down, as on a real disconnect), relist,
// resync and pop. A consumer applies what it pops to its own store, the way an
// informer does. Whatever the sequence, after a final relist and drain the
// consumer's store must equal the cluster, and each object's resource version as
// seen by the consumer must never go backwards.
func TestQueuesConvergeToTheCluster(t *testing.T) {
	for _, kind := range []string{"DeltaFIFO", "RealFIFO"} {
		t.Run(kind+": the consumer's store converges to the cluster whatever the event sequence", func(t *testing.T) {
			for seed := range uint64(300) {
				runModel(t, kind, seed)
				if t.Failed() {
					t.Logf("failing seed: %d", seed)
					return
				}
			}
		})
	}
}

type model struct {
	t        *testing.T
	rng      *rand.Rand
	cluster  map[string]*corev1.ConfigMap // the truth
	rv       int                          // the cluster's resource version counter
	watchUp  bool
	consumer *known         // the consumer's store; the DeltaFIFO's KnownObjects
	lastRV   map[string]int // per key, the newest version the consumer applied
	q        Queue[*corev1.ConfigMap]
	real     *RealFIFO[*corev1.ConfigMap]
	log      []string
}

func runModel(t *testing.T, kind string, seed uint64) {
	m := &model{
		t:        t,
		rng:      rand.New(rand.NewPCG(seed, 83810)),
		cluster:  map[string]*corev1.ConfigMap{},
		consumer: newKnown(),
		lastRV:   map[string]int{},
		watchUp:  true,
	}
	if kind == "DeltaFIFO" {
		m.q = NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{KnownObjects: m.consumer})
	} else {
		m.real = NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{EmitBookmark: true})
		m.real.batchSize = 3 // small, so batches often end on duplicates
		m.q = m.real
	}
	m.relist() // an informer starts with a LIST
	for range 200 {
		m.step()
	}
	m.relist()
	m.drain()
	require.Equal(t, m.clusterRVs(), m.consumerRVs(), "seed %d: store differs from cluster after:\n%v", seed, m.log)
	require.True(t, m.q.HasSynced(), "seed %d", seed)
}

func (m *model) step() {
	name := "o" + strconv.Itoa(m.rng.IntN(6)) // few names, so keys are reused after deletes
	key := "ns/" + name
	switch op := m.rng.IntN(10); op {
	case 0, 1, 2: // create or update
		m.rv++
		obj := cm("ns", name, strconv.Itoa(m.rv))
		_, exists := m.cluster[key]
		m.cluster[key] = obj
		if exists {
			m.event("update "+key, func() error { return m.q.Update(obj) })
		} else {
			m.event("add "+key, func() error { return m.q.Add(obj) })
		}
	case 3: // delete
		if _, exists := m.cluster[key]; !exists {
			return
		}
		m.rv++
		delete(m.cluster, key)
		obj := cm("ns", name, strconv.Itoa(m.rv))
		m.event("delete "+key, func() error { return m.q.Delete(obj) })
	case 4:
		m.log = append(m.log, "watch down")
		m.watchUp = false
	case 5:
		m.relist()
	case 6:
		m.log = append(m.log, "resync")
		require.NoError(m.t, m.q.Resync())
	case 7:
		m.event("bookmark", func() error { return m.q.Bookmark(strconv.Itoa(m.rv)) })
	default: // pop a few
		for range 1 + m.rng.IntN(3) {
			if queueLen(m.q) == 0 {
				return
			}
			m.pop()
		}
	}
}

// event delivers a watch event, unless the watch is down.
func (m *model) event(what string, deliver func() error) {
	if !m.watchUp {
		m.log = append(m.log, "lost "+what)
		return
	}
	m.log = append(m.log, what)
	require.NoError(m.t, deliver())
}

func (m *model) relist() {
	m.log = append(m.log, "relist")
	list := slices.Collect(maps.Values(m.cluster))
	m.rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	require.NoError(m.t, m.q.Replace(list, strconv.Itoa(m.rv)))
	m.watchUp = true
}

func (m *model) drain() {
	for queueLen(m.q) > 0 {
		m.pop()
	}
}

// pop pops once (with PopBatch half of the time on a RealFIFO) and applies it.
func (m *model) pop() {
	if m.real != nil && m.rng.IntN(2) == 0 {
		require.NoError(m.t, m.real.PopBatch(m.t.Context(), func(b []Delta[*corev1.ConfigMap], _ bool) error {
			m.apply(b)
			return nil
		}))
		return
	}
	require.NoError(m.t, m.q.Pop(m.t.Context(), func(d Deltas[*corev1.ConfigMap], _ bool) error {
		m.apply(d)
		return nil
	}))
}

// apply is the consumer: what an informer's processDeltas does to its store.
func (m *model) apply(ds []Delta[*corev1.ConfigMap]) {
	for _, d := range ds {
		switch d.Type {
		case Added, Updated, Replaced, Sync:
			m.store(d.Object)
		case Deleted:
			if d.Tombstone != nil {
				assert.Equal(m.t, key(d.Object), d.Tombstone.Key)
				assert.Same(m.t, d.Object, d.Tombstone.Obj)
			}
			m.checkOrder(d.Object)
			delete(m.consumer.objs, key(d.Object))
		case ReplacedAll:
			listed := map[string]bool{}
			for _, o := range d.Info.Objects {
				listed[key(o)] = true
				m.store(o)
			}
			for k := range m.consumer.objs {
				if !listed[k] {
					delete(m.consumer.objs, k)
				}
			}
		case SyncAll, Bookmark:
		default:
			m.t.Fatalf("unexpected delta type %v", d.Type)
		}
	}
}

func (m *model) store(o *corev1.ConfigMap) {
	m.checkOrder(o)
	m.consumer.objs[key(o)] = o
}

// checkOrder asserts the consumer never sees an object go back in time.
func (m *model) checkOrder(o *corev1.ConfigMap) {
	rv, err := strconv.Atoi(o.ResourceVersion)
	require.NoError(m.t, err)
	k := key(o)
	if rv < m.lastRV[k] {
		m.t.Errorf("%s went back from version %d to %d after:\n%v", k, m.lastRV[k], rv, m.log)
	}
	m.lastRV[k] = rv
}

func (m *model) clusterRVs() map[string]string  { return rvs(m.cluster) }
func (m *model) consumerRVs() map[string]string { return rvs(m.consumer.objs) }
func rvs(objs map[string]*corev1.ConfigMap) map[string]string {
	out := map[string]string{}
	for k, o := range objs {
		out[k] = o.ResourceVersion
	}
	return out
}
