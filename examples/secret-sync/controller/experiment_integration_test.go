package controller_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeinternals/informers/examples/internal/kube"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
	"github.com/kubeinternals/informers/listwatch"
)

// TestWhenDoesAnUpdateChangeResourceVersion is the README's experiment: which PUTs of a
// Secret change its resourceVersion and produce a watch MODIFIED event, and what a
// resync looks like to a handler. It logs a table of the observed resourceVersions.
func TestWhenDoesAnUpdateChangeResourceVersion(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	core, _, err := kube.NewRESTClient(env.Config, corev1.SchemeGroupVersion, nil, corev1.AddToScheme)
	require.NoError(t, err)
	const ns = "experiment"
	require.NoError(t, core.Post().Resource("namespaces").Body(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}).Do(ctx).Error())

	secret := func() *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: ns, Labels: map[string]string{"app": "x"}},
			Type:       corev1.SecretTypeOpaque,
			Data:       map[string][]byte{"password": []byte("hunter2")},
		}
	}
	put := func(s *corev1.Secret) string {
		out := &corev1.Secret{}
		require.NoError(t, core.Put().Namespace(ns).Resource("secrets").Name(s.Name).Param("fieldManager", "experiment").Body(s).Do(ctx).Into(out))
		return out.ResourceVersion
	}
	created := &corev1.Secret{}
	require.NoError(t, core.Post().Namespace(ns).Resource("secrets").Param("fieldManager", "experiment").Body(secret()).Do(ctx).Into(created))
	rv0 := created.ResourceVersion

	// A raw watch from the creation's resourceVersion: every later change to the Secret
	// arrives here, in order.
	w, err := core.Get().Namespace(ns).Resource("secrets").
		Param("watch", "true").Param("resourceVersion", rv0).Watch(ctx)
	require.NoError(t, err)
	defer w.Stop()

	rvIdentical := put(secret()) // same content, no resourceVersion: unconditional
	withRV := secret()
	withRV.ResourceVersion = rv0
	rvIdenticalWithRV := put(withRV) // same content, conditional on rv0
	annotated := secret()
	annotated.Annotations = map[string]string{"touched": "yes"}
	rvAnnotation := put(annotated) // metadata only
	changed := annotated.DeepCopy()
	changed.Data["password"] = []byte("correct horse")
	rvData := put(changed) // data

	// The watch must show exactly the two real changes. Had an identical PUT produced
	// an event, it would arrive first (a watch is ordered), carrying its RV.
	var seen []string
	for len(seen) < 2 {
		select {
		case ev := <-w.ResultChan():
			s, ok := ev.Object.(*corev1.Secret)
			require.True(t, ok, "unexpected %s %T", ev.Type, ev.Object)
			seen = append(seen, fmt.Sprintf("%s %s", ev.Type, s.ResourceVersion))
		case <-ctx.Done():
			t.Fatalf("watch ended early; seen %v", seen)
		}
	}

	t.Logf("\n| step | resourceVersion | watch event |\n|---|---|---|\n"+
		"| POST (create) | %s | (watch starts here) |\n"+
		"| PUT identical content, no resourceVersion | %s | %s |\n"+
		"| PUT identical content, resourceVersion %s | %s | %s |\n"+
		"| PUT adding an annotation | %s | %s |\n"+
		"| PUT changing data | %s | %s |",
		rv0, rvIdentical, eventFor(seen, rvIdentical, rv0), rv0, rvIdenticalWithRV, eventFor(seen, rvIdenticalWithRV, rv0),
		rvAnnotation, eventFor(seen, rvAnnotation, rv0), rvData, eventFor(seen, rvData, rv0))

	t.Run("a PUT with identical content keeps the resourceVersion, with or without one in the body", func(t *testing.T) {
		assert.Equal(t, rv0, rvIdentical)
		assert.Equal(t, rv0, rvIdenticalWithRV)
	})
	t.Run("a PUT that changes only metadata (an annotation) gets a new resourceVersion", func(t *testing.T) {
		assert.NotEqual(t, rv0, rvAnnotation)
	})
	t.Run("a PUT that changes data gets a new resourceVersion", func(t *testing.T) {
		assert.NotEqual(t, rvAnnotation, rvData)
	})
	t.Run("the watch sees MODIFIED for the two real changes only, none for the identical PUTs", func(t *testing.T) {
		assert.Equal(t, []string{"MODIFIED " + rvAnnotation, "MODIFIED " + rvData}, seen)
	})

	t.Run("a resync is an Update with old and new at the same resourceVersion, and no request to the server", func(t *testing.T) {
		scheme, err := listwatch.NewScheme(corev1.AddToScheme)
		require.NoError(t, err)
		f := informer.NewFactory(env.Config, informer.FactoryOptions{Scheme: scheme, ResyncPeriod: time.Second})
		inf, err := informer.For[*corev1.Secret](f, informer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("secrets"), Namespace: ns})
		require.NoError(t, err)
		var mu sync.Mutex
		var updates [][2]string
		_, err = inf.AddEventHandler(informer.HandlerFuncs[*corev1.Secret]{UpdateFunc: func(o, n *corev1.Secret) {
			mu.Lock()
			defer mu.Unlock()
			updates = append(updates, [2]string{o.ResourceVersion, n.ResourceVersion})
		}})
		require.NoError(t, err)
		rctx, rcancel := context.WithCancel(ctx)
		defer f.Shutdown()
		defer rcancel()
		f.Start(rctx)
		require.NoError(t, f.WaitForCacheSync(ctx))
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			mu.Lock()
			defer mu.Unlock()
			assert.GreaterOrEqual(ct, len(updates), 2, "two resync ticks")
		}, 30*time.Second, 50*time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		for _, u := range updates {
			assert.Equal(t, [2]string{rvData, rvData}, u, "a resync re-delivers the cached object: same RV on both sides")
		}
		// Nothing changed on the server during the resyncs: the raw watch stays quiet.
		select {
		case ev := <-w.ResultChan():
			t.Errorf("the server sent %s during resyncs", ev.Type)
		default:
		}
		t.Logf("resync updates seen by the handler (old RV, new RV): %v", updates)
	})
}

// eventFor names the watch event seen for a PUT that returned rv.
func eventFor(seen []string, rv, createdRV string) string {
	if rv == createdRV {
		return "none (RV unchanged)"
	}
	for _, s := range seen {
		if s == string(watch.Modified)+" "+rv {
			return s
		}
	}
	return "none"
}
