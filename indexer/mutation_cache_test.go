package indexer

import (
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeinternals/informers/internal/testrig/testlog"
)

// version returns a ConfigMap ns/name with this UID and resourceVersion, labelled
// app=a unless labels say otherwise.
func version(name string, uid types.UID, rv string, labels ...string) *corev1.ConfigMap {
	if len(labels) == 0 {
		labels = []string{"app", "a"}
	}
	c := cm("ns", name, labels...)
	c.UID, c.ResourceVersion = uid, rv
	return c
}

func newMutationCache(t *testing.T, includeAdds bool) (Indexer[*corev1.ConfigMap], *MutationCache[*corev1.ConfigMap]) {
	t.Helper()
	store := newCMIndexer()
	mc, err := NewMutationCache(store, MutationCacheOptions{TTL: time.Minute, IncludeAdds: includeAdds, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return store, mc
}

// rvOf reads key through mc: its resourceVersion, or "missing".
func rvOf(t *testing.T, mc *MutationCache[*corev1.ConfigMap], key string) string {
	t.Helper()
	obj, exists, err := mc.GetByKey(key)
	require.NoError(t, err)
	if !exists {
		return "missing"
	}
	return obj.ResourceVersion
}

func TestAReadReturnsTheNewerOfTheInformersCopyAndTheWrite(t *testing.T) {
	store, mc := newMutationCache(t, false)
	require.NoError(t, store.Add(version("cm", "u1", "1")))
	mc.Mutation(version("cm", "u1", "3"))
	assert.Equal(t, "3", rvOf(t, mc, "ns/cm"), "the write is newer than the informer's copy")

	require.NoError(t, store.Update(version("cm", "u1", "4")))
	assert.Equal(t, "4", rvOf(t, mc, "ns/cm"), "the informer caught up and passed it")
	require.NoError(t, store.Update(version("cm", "u1", "1")))
	assert.Equal(t, "1", rvOf(t, mc, "ns/cm"), "the write was forgotten once the informer's copy was as new")
}

func TestWithoutIncludeAddsAWriteTheInformerHasNotSeenIsMissing(t *testing.T) {
	_, mc := newMutationCache(t, false)
	mc.Mutation(version("cm", "u1", "2"))
	assert.Equal(t, "missing", rvOf(t, mc, "ns/cm"), "not seen yet cannot be told from deleted since")
	objs, err := mc.ByIndex("app", "a")
	require.NoError(t, err)
	assert.Empty(t, objs)
}

// TestOnAddOrUpdateForgetsAWriteTheInformerHasCaughtUpWith mirrors client-go 1.37's
// TestMutationCacheOnAddOrUpdate: the informer reports a copy at least as new as the
// write, so the write is forgotten; an older copy leaves it.
func TestOnAddOrUpdateForgetsAWriteTheInformerHasCaughtUpWith(t *testing.T) {
	for _, tc := range []struct {
		reported string // the resourceVersion OnAddOrUpdate reports
		want     string // what a read returns afterwards, the informer's copy being at 1
	}{
		{reported: "2", want: "1"}, // as new as the write: forgotten
		{reported: "3", want: "1"}, // newer: forgotten
		{reported: "1", want: "2"}, // older: kept
	} {
		t.Run("reported rv "+tc.reported, func(t *testing.T) {
			store, mc := newMutationCache(t, false)
			mc.Mutation(version("cm", "u1", "2"))
			mc.OnAddOrUpdate(version("cm", "u1", tc.reported))
			// The informer's copy is older than the write, so a read shows whether
			// the write is still remembered.
			require.NoError(t, store.Add(version("cm", "u1", "1")))
			assert.Equal(t, tc.want, rvOf(t, mc, "ns/cm"))
		})
	}
}

// TestOnDeleteForgetsTheWriteOfTheDeletedObject mirrors client-go 1.37's
// TestMutationCacheOnDelete: a deletion forgets a write of the same object (same UID,
// even reported with an older, stale resourceVersion) or a write older than the
// deletion; a newer write of another UID is a recreation and stays.
func TestOnDeleteForgetsTheWriteOfTheDeletedObject(t *testing.T) {
	for _, tc := range []struct {
		name       string
		uid        types.UID
		rv         string
		wantExists bool
	}{
		{"same UID, stale resourceVersion (a tombstone's last known state)", "u1", "1", false},
		{"another UID, newer resourceVersion", "u2", "4", false},
		{"another UID, older resourceVersion: a recreation not seen yet", "u0", "1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, mc := newMutationCache(t, true)
			require.NoError(t, store.Add(version("cm", "u1", "2")))
			mc.Mutation(version("cm", "u1", "3"))
			deleted := version("cm", tc.uid, tc.rv)
			require.NoError(t, store.Delete(deleted))
			mc.OnDelete(deleted)
			_, exists, err := mc.GetByKey("ns/cm")
			require.NoError(t, err)
			assert.Equal(t, tc.wantExists, exists)
		})
	}
}

// TestAWriteAnsweredAfterTheDeletionWasSeenIsStale mirrors client-go 1.37's
// TestMutationCacheUpdateConcurrentDelete: the update's answer arrives after the
// informer reported the object updated and then deleted; the deletion it remembers
// shows the answer to be stale.
func TestAWriteAnsweredAfterTheDeletionWasSeenIsStale(t *testing.T) {
	store, mc := newMutationCache(t, true)
	require.NoError(t, store.Add(version("cm", "u1", "1")))
	updated := version("cm", "u1", "2")
	require.NoError(t, store.Update(updated))
	require.NoError(t, store.Delete(updated))
	mc.OnAddOrUpdate(updated)
	mc.OnDelete(updated)

	mc.Mutation(updated)
	assert.Equal(t, "missing", rvOf(t, mc, "ns/cm"))
	objs, err := mc.ByIndex("app", "a")
	require.NoError(t, err)
	assert.Empty(t, objs)
	assert.Equal(t, []string{"ns/cm"}, mc.written.keys(), "only the deletion is remembered")

	mc.Mutation(version("cm", "u1", "5"))
	assert.Equal(t, "missing", rvOf(t, mc, "ns/cm"), "a later version of the deleted object is stale too (same UID)")
}

// TestAWriteAnsweredAfterARecreationWasSeenIsStale mirrors client-go 1.37's
// TestMutationCacheUpdateConcurrentRecreate: the object was deleted and recreated (new
// UID, newer resourceVersion) before the update's answer arrived.
func TestAWriteAnsweredAfterARecreationWasSeenIsStale(t *testing.T) {
	store, mc := newMutationCache(t, true)
	require.NoError(t, store.Add(version("cm", "u1", "1")))
	updated := version("cm", "u1", "2")
	require.NoError(t, store.Update(updated))
	require.NoError(t, store.Delete(updated))
	recreated := version("cm", "u2", "3")
	require.NoError(t, store.Add(recreated))
	mc.OnAddOrUpdate(updated)
	mc.OnDelete(updated)
	mc.OnAddOrUpdate(recreated)

	mc.Mutation(updated)
	got, exists, err := mc.GetByKey("ns/cm")
	require.NoError(t, err)
	require.True(t, exists)
	assert.Same(t, recreated, got)
	assert.Empty(t, mc.written.keys(), "the read found the informer's copy newer and forgot the write")
}

// TestOnDeleteClearsACreateSoTheControllerCanCreateAgain mirrors client-go 1.37's
// TestMutationCacheOnDeleteClearsStaleMutation: a created object the informer never
// had is visible through ByIndex, until the informer reports its deletion.
func TestOnDeleteClearsACreateSoTheControllerCanCreateAgain(t *testing.T) {
	_, mc := newMutationCache(t, true)
	mc.Mutation(version("cm", "u1", "2"))
	objs, err := mc.ByIndex("app", "a")
	require.NoError(t, err)
	assert.Equal(t, []string{"ns/cm"}, names(objs), "the create is visible before the informer has it")

	mc.OnDelete(version("cm", "u1", "1"))
	objs, err = mc.ByIndex("app", "a")
	require.NoError(t, err)
	assert.Empty(t, objs)
}

// TestGetByKeyKeepsReturningACreateTheInformerHasNotSeen is where we differ from
// client-go 1.37, whose GetByKey returns such an object once and then forgets it.
func TestGetByKeyKeepsReturningACreateTheInformerHasNotSeen(t *testing.T) {
	_, mc := newMutationCache(t, true)
	mc.Mutation(version("cm", "u1", "2"))
	for i := range 3 {
		assert.Equal(t, "2", rvOf(t, mc, "ns/cm"), "read %d", i+1)
	}
}

func TestByIndexAddsWritesThatMovedToTheValueAndSkipsOthers(t *testing.T) {
	store, mc := newMutationCache(t, true)
	require.NoError(t, store.Add(version("moved", "u1", "1", "app", "b")))
	require.NoError(t, store.Add(version("kept", "u2", "1")))
	mc.Mutation(version("moved", "u1", "2")) // relabelled b → a by this client
	mc.Mutation(version("kept", "u2", "2"))  // newer copy of an object already under a
	mc.Mutation(version("other", "u3", "2", "app", "c"))
	objs, err := mc.ByIndex("app", "a")
	require.NoError(t, err)
	assert.Equal(t, []string{"ns/kept", "ns/moved"}, sorted(names(objs)))
	for _, o := range objs {
		assert.Equal(t, "2", o.ResourceVersion, "%s is the written copy", o.Name)
	}
	_, err = mc.ByIndex("no-such-index", "a")
	assert.Error(t, err)
}

func TestAWriteIsForgottenAfterItsTTLOrWhenTheLRUIsFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newCMIndexer()
		mc, err := NewMutationCache(store, MutationCacheOptions{TTL: time.Minute, IncludeAdds: true, MaxCacheSize: 2})
		require.NoError(t, err)
		mc.Mutation(version("a", "ua", "1"))
		time.Sleep(30 * time.Second)
		mc.Mutation(version("b", "ub", "1"))
		time.Sleep(30*time.Second + time.Nanosecond)
		assert.Equal(t, "missing", rvOf(t, mc, "ns/a"), "a minute and a nanosecond after it was written")
		assert.Equal(t, "1", rvOf(t, mc, "ns/b"))

		mc.Mutation(version("a", "ua", "1"))
		mc.Mutation(version("c", "uc", "1")) // the third entry evicts the least recently used: b
		assert.Equal(t, "missing", rvOf(t, mc, "ns/b"))
		assert.Equal(t, "1", rvOf(t, mc, "ns/a"))
		assert.Equal(t, "1", rvOf(t, mc, "ns/c"))
	})
}

func TestTheZeroOptionsKeep100WritesFor5Minutes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mc, err := NewMutationCache(newCMIndexer(), MutationCacheOptions{IncludeAdds: true})
		require.NoError(t, err)
		for i := range 101 {
			mc.Mutation(version(string(rune('a'+i/26))+string(rune('a'+i%26)), "u", "1"))
		}
		assert.Len(t, mc.written.keys(), 100)
		assert.Equal(t, "missing", rvOf(t, mc, "ns/aa"), "the first of 101 was evicted")
		time.Sleep(5 * time.Minute)
		assert.Equal(t, "1", rvOf(t, mc, "ns/ab"), "still there after exactly 5 minutes")
		time.Sleep(time.Nanosecond)
		assert.Equal(t, "missing", rvOf(t, mc, "ns/ac"))
	})
}

func TestAResourceVersionThatIsNotAnIntegerIsLoggedNotRemembered(t *testing.T) {
	store := newCMIndexer()
	rec := &testlog.Recorder{}
	mc, err := NewMutationCache(store, MutationCacheOptions{IncludeAdds: true, Logger: slog.New(rec)})
	require.NoError(t, err)
	mc.Mutation(version("cm", "u1", "abc"))
	assert.Equal(t, "missing", rvOf(t, mc, "ns/cm"))
	assert.Len(t, rec.Lines(`resourceVersion "abc" is not an integer`), 1, "%v", rec.Lines(""))

	mc.Mutation(nil)
	assert.Len(t, rec.Lines("the object has no key"), 1, "a nil object is reported, not a panic")

	require.NoError(t, store.Add(version("odd", "u2", "x1")))
	mc.Mutation(version("odd", "u2", "5"))
	assert.Equal(t, "x1", rvOf(t, mc, "ns/odd"), "the informer's copy wins when the two cannot be compared")
	assert.Len(t, rec.Lines("not an integer"), 2)
}

// TestByIndexKeepsTheLRUsOrder: ByIndex with IncludeAdds reads every written entry, the
// ones the informer's index served included, as client-go 1.37's mutationCache.ByIndex
// does. Skipping the served ones would leave them least recently used, and the next
// Mutation would evict the caller's own write of an object it just read.
func TestByIndexKeepsTheLRUsOrder(t *testing.T) {
	store := newCMIndexer()
	mc, err := NewMutationCache(store, MutationCacheOptions{TTL: time.Minute, IncludeAdds: true, MaxCacheSize: 2, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	require.NoError(t, store.Add(version("served", "u1", "1", "app", "a")))
	mc.Mutation(version("served", "u1", "5", "app", "a")) // newer than the informer's copy
	mc.Mutation(version("other", "u2", "3", "app", "b"))  // a create under another value

	objs, err := mc.ByIndex("app", "a")
	require.NoError(t, err)
	require.Len(t, objs, 1)
	assert.Equal(t, "5", objs[0].ResourceVersion, "the written copy is served")

	mc.Mutation(version("third", "u3", "1", "app", "c")) // evicts the least recently used
	assert.Equal(t, "5", rvOf(t, mc, "ns/served"), "the entry ByIndex served was read last, so it is kept")
	assert.Equal(t, "missing", rvOf(t, mc, "ns/other"), "the entry read before it is the one evicted")
}

func TestNewMutationCacheRefusesANegativeSize(t *testing.T) {
	_, err := NewMutationCache(newCMIndexer(), MutationCacheOptions{MaxCacheSize: -1})
	require.ErrorIs(t, err, ErrInvalidOptions)
	assert.ErrorContains(t, err, "MaxCacheSize -1")
	_, err = NewMutationCache(newCMIndexer(), MutationCacheOptions{TTL: -time.Second})
	require.ErrorIs(t, err, ErrInvalidOptions)
	assert.ErrorContains(t, err, "TTL -1s")
}
