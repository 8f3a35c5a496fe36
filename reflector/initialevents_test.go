package reflector

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeinternals/informers/internal/objects"
)

// Namespaces and names chosen so that a namespace is a prefix of another and '/'
// sorts between their next characters: the keys' order is not (namespace, name)'s.
var keyAlphabet = []string{"", "a", "a-b", "a0", "ab", "b"}

func TestCompareKeysIsTheOrderOfTheKeyStrings(t *testing.T) {
	for _, an := range keyAlphabet {
		for _, bn := range keyAlphabet {
			for _, names := range [][2]string{{"x", "y"}, {"y", "x"}, {"x", "x"}, {"a", "a-b"}, {"", "x"}} {
				a, b := objectName{an, names[0]}, objectName{bn, names[1]}
				want := strings.Compare(objects.Key(a.namespace, a.name), objects.Key(b.namespace, b.name))
				assert.Equal(t, want, compareKeys(a, b), "%q vs %q", objects.Key(a.namespace, a.name), objects.Key(b.namespace, b.name))
			}
		}
	}
}

func FuzzCompareKeys(f *testing.F) {
	f.Add("a", "x", "a-b", "y")
	f.Add("", "a/x", "a", "x")
	f.Add("ns", "n", "ns", "n")
	f.Fuzz(func(t *testing.T, ans, an, bns, bn string) {
		want := strings.Compare(objects.Key(ans, an), objects.Key(bns, bn))
		if got := compareKeys(objectName{ans, an}, objectName{bns, bn}); got != want {
			t.Fatalf("compareKeys(%q, %q) = %d, want %d", objects.Key(ans, an), objects.Key(bns, bn), got, want)
		}
	})
}

// keyedBuffer is the buffer initialEvents must behave like: client-go's, a map by
// key, plus the order in which keys first appeared.
type keyedBuffer struct {
	order []string
	last  map[string]*corev1.ConfigMap // nil value: deleted
}

func (k *keyedBuffer) put(key string, cm *corev1.ConfigMap) {
	if _, seen := k.last[key]; !seen {
		k.order = append(k.order, key)
	}
	k.last[key] = cm
}

func (k *keyedBuffer) list() []*corev1.ConfigMap {
	var out []*corev1.ConfigMap
	for _, key := range k.order {
		if cm := k.last[key]; cm != nil {
			out = append(out, cm)
		}
	}
	return out
}

func TestInitialEventsListWhatAKeyedBufferWould(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for run := range 2000 {
		b := newInitialEvents[*corev1.ConfigMap]()
		want := &keyedBuffer{last: map[string]*corev1.ConfigMap{}}
		var events []string
		for i := range rng.IntN(12) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				Namespace: keyAlphabet[rng.IntN(len(keyAlphabet))], Name: keyAlphabet[1+rng.IntN(len(keyAlphabet)-1)],
				ResourceVersion: fmt.Sprint(i),
			}}
			key := objects.Key(cm.Namespace, cm.Name)
			switch rng.IntN(6) {
			case 0:
				events = append(events, "DELETED "+key)
				require.NoError(t, b.Delete(cm))
				if _, seen := want.last[key]; seen {
					want.last[key] = nil
				}
			case 1:
				events = append(events, "MODIFIED "+key)
				require.NoError(t, b.Update(cm))
				want.put(key, cm)
			default:
				events = append(events, "ADDED "+key)
				require.NoError(t, b.Add(cm))
				want.put(key, cm)
			}
		}
		got := b.list()
		if len(got) == 0 {
			got = nil // an empty list may be either
		}
		require.Equal(t, want.list(), got, "run %d: %s", run, strings.Join(events, ", "))
	}
}

// The apiserver's stream — ADDEDs in increasing key order — is buffered without a
// map; anything else builds one, and the result is the same either way.
func TestASortedStreamIsBufferedWithoutAMap(t *testing.T) {
	var keys []objectName
	for _, ns := range keyAlphabet {
		for _, name := range keyAlphabet[1:] {
			keys = append(keys, objectName{ns, name})
		}
	}
	slices.SortFunc(keys, compareKeys)
	objects := func(order []objectName) []*corev1.ConfigMap {
		var out []*corev1.ConfigMap
		for _, n := range order {
			out = append(out, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: n.namespace, Name: n.name}})
		}
		return out
	}

	sorted := newInitialEvents[*corev1.ConfigMap]()
	for _, cm := range objects(keys) {
		require.NoError(t, sorted.Add(cm))
	}
	assert.Nil(t, sorted.byName, "a sorted stream needs no map")
	assert.Equal(t, objects(keys), sorted.list())

	swapped := slices.Clone(keys)
	swapped[3], swapped[4] = swapped[4], swapped[3]
	unsorted := newInitialEvents[*corev1.ConfigMap]()
	for _, cm := range objects(swapped) {
		require.NoError(t, unsorted.Add(cm))
	}
	assert.NotNil(t, unsorted.byName, "out of order: the buffer must look keys up")
	assert.Equal(t, objects(swapped), unsorted.list())
}
