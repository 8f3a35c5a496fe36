package testenv_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

// rawAnswer is one HTTP answer as the server sent it: no client-side retry.
type rawAnswer struct {
	status     int
	retryAfter string
	body       []byte
	took       time.Duration
}

// rawGet sends one GET to cfg's server and reads the whole answer. Why not a
// rest.Request: client-go's rest client retries a 5xx that carries Retry-After (up to
// 10 times), which would hide the server's answer behind 40 s of retries.
func rawGet(t *testing.T, ctx context.Context, cfg *rest.Config, path string) rawAnswer {
	t.Helper()
	client, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+path, nil)
	require.NoError(t, err)
	start := time.Now()
	resp, err := client.Do(req)
	require.NoError(t, err, "GET %s", path)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return rawAnswer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: body, took: time.Since(start)}
}

// timeoutStatus requires a 504 and decodes its Status.
func (a rawAnswer) timeoutStatus(t *testing.T) metav1.Status {
	t.Helper()
	var s metav1.Status
	require.NoError(t, json.Unmarshal(a.body, &s), "%s", a.body)
	require.Equal(t, http.StatusGatewayTimeout, a.status, "%s", a.body)
	return s
}

// names are the ConfigMap names of a list answer, sorted, and its resourceVersion.
func (a rawAnswer) names(t *testing.T) ([]string, string) {
	t.Helper()
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	var l corev1.ConfigMapList
	require.NoError(t, json.Unmarshal(a.body, &l))
	var out []string
	for _, cm := range l.Items {
		out = append(out, cm.Name)
	}
	slices.Sort(out)
	return out, l.ResourceVersion
}

// rv parses a resourceVersion, which these tests may compare: they read etcd's
// revisions, one server's, not a client's opaque strings.
func rv(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err)
	return n
}

// TestIntegrationALaggingAPIServer pins what kube-apiserver v1.37 answers while its
// connection to etcd is frozen, so that its watch cache lags what another apiserver
// on the same etcd has written. Each subtest is one request to the lagging B, in
// order; the first apiserver, A, takes the writes.
func TestIntegrationALaggingAPIServer(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	// Why --request-timeout=10s: a request that waits for etcd gets the server's
	// timeout answer after this (60 s by default) instead of keeping the test waiting.
	b, err := env.StartSecondAPIServer(ctx, "--request-timeout=10s")
	require.NoError(t, err)
	a := restClient(t, env.Config, corev1.SchemeGroupVersion)
	bc := restClient(t, b.Config, corev1.SchemeGroupVersion)
	const list = "/api/v1/namespaces/default/configmaps"

	create := func(name string) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
		require.NoError(t, a.Post().Namespace("default").Resource("configmaps").Body(cm).Do(ctx).Into(cm))
		return cm
	}
	old := create("old")
	eventually(t, ctx, "B's cache has old", func() bool {
		names, _ := rawGet(t, ctx, b.Config, list+"?resourceVersion=0").names(t)
		return slices.Contains(names, "old")
	})

	b.EtcdLink.Freeze()
	newer := create("new")
	require.NoError(t, a.Delete().Namespace("default").Resource("configmaps").Name("old").Do(ctx).Error())
	var onA corev1.ConfigMapList
	require.NoError(t, a.Get().Namespace("default").Resource("configmaps").Do(ctx).Into(&onA))
	x := onA.ResourceVersion // what a client of A has seen: new created, old deleted
	t.Logf("B frozen at or after old (rv %s); A at rv %s (new at %s)", old.ResourceVersion, x, newer.ResourceVersion)

	t.Run(`a LIST at resourceVersion "0" is answered at once from the stale cache: old still there, new missing`, func(t *testing.T) {
		ans := rawGet(t, ctx, b.Config, list+"?resourceVersion=0")
		names, listRV := ans.names(t)
		assert.Equal(t, []string{"old"}, names)
		assert.Less(t, rv(t, listRV), rv(t, x), "the list's resourceVersion is older than what A's client has seen")
		assert.Less(t, ans.took, time.Second, "served from memory")
	})

	for _, query := range []string{"resourceVersion=" + x + "&resourceVersionMatch=NotOlderThan", "resourceVersion=" + x} {
		t.Run("a LIST at a newer resourceVersion ("+query+") waits 3 s for the cache, then gets 504 ResourceVersionTooLarge with Retry-After: 1", func(t *testing.T) {
			ans := rawGet(t, ctx, b.Config, list+"?"+query)
			s := ans.timeoutStatus(t)
			assert.True(t, apierrors.HasStatusCause(apierrors.FromObject(&s), metav1.CauseTypeResourceVersionTooLarge), "%s", ans.body)
			assert.Equal(t, metav1.StatusReasonTimeout, s.Reason)
			assert.Contains(t, s.Message, "Too large resource version: "+x)
			assert.Equal(t, "1", ans.retryAfter)
			assert.InDelta(t, 3*time.Second, ans.took, float64(time.Second), "the watch cache's wait for freshness (blockTimeout)")
		})
	}

	t.Run(`a consistent LIST (resourceVersion "") needs etcd's revision: no answer until the request timeout, then a 504 or a reset stream`, func(t *testing.T) {
		client, err := rest.HTTPClientFor(b.Config)
		require.NoError(t, err)
		defer client.CloseIdleConnections()
		start := time.Now()
		resp, err := client.Get(b.Config.Host + list)
		took := time.Since(start)
		assert.GreaterOrEqual(t, took, 10*time.Second, "--request-timeout=10s")
		if err != nil {
			// Pitfall: the timeout filter's 504 races the handler's own error at the
			// same deadline; when the handler has written first, the filter aborts
			// the HTTP/2 stream instead (with the default 60 s we saw the 504).
			assert.Contains(t, err.Error(), "INTERNAL_ERROR")
			t.Logf("after %s: %v", took.Round(time.Millisecond), err)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		ans := rawAnswer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: body, took: took}
		s := ans.timeoutStatus(t)
		assert.Contains(t, s.Message, "request did not complete within the allotted timeout")
		assert.Empty(t, ans.retryAfter)
		t.Logf("after %s: %s", took.Round(time.Millisecond), body)
	})

	t.Run("a watch-list (sendInitialEvents) from a newer resourceVersion is accepted, then ends with an ERROR 504 ResourceVersionTooLarge after 3 s", func(t *testing.T) {
		start := time.Now()
		w, err := bc.Get().Namespace("default").Resource("configmaps").VersionedParams(&metav1.ListOptions{
			Watch: true, ResourceVersion: x, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
			SendInitialEvents: new(true), AllowWatchBookmarks: true,
		}, metav1.ParameterCodec).Watch(ctx)
		require.NoError(t, err)
		defer w.Stop()
		ev := <-w.ResultChan()
		require.Equal(t, watch.Error, ev.Type)
		err = apierrors.FromObject(ev.Object)
		assert.True(t, apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge), "%v", err)
		assert.InDelta(t, 3*time.Second, time.Since(start), float64(time.Second))
	})

	// Opened here, read after the thaw below.
	plain, err := bc.Get().Namespace("default").Resource("configmaps").VersionedParams(&metav1.ListOptions{
		Watch: true, ResourceVersion: x, AllowWatchBookmarks: true,
	}, metav1.ParameterCodec).Watch(ctx)
	require.NoError(t, err)
	defer plain.Stop()
	t.Run("a plain WATCH from a newer resourceVersion is accepted at once and stays silent", func(t *testing.T) {
		select {
		case ev := <-plain.ResultChan():
			t.Fatalf("a frozen apiserver sent %s", ev.Type)
		case <-time.After(3 * time.Second):
		}
	})

	// Opened here too: it cannot even start while B cannot ask etcd for its revision.
	listAtNewest := make(chan error, 1)
	go func() { // Owner: this test; it ends with the request (ctx bounds it).
		w, err := bc.Get().Namespace("default").Resource("configmaps").VersionedParams(&metav1.ListOptions{
			Watch: true, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, SendInitialEvents: new(true), AllowWatchBookmarks: true,
		}, metav1.ParameterCodec).Watch(ctx)
		if err == nil {
			w.Stop()
		}
		listAtNewest <- err
	}()
	t.Run(`a watch-list at resourceVersion "" gets no answer at all while frozen (not even headers)`, func(t *testing.T) {
		select {
		case err := <-listAtNewest:
			t.Fatalf("answered while frozen: %v", err)
		case <-time.After(3 * time.Second):
		}
	})

	thawed := time.Now()
	b.EtcdLink.Thaw()
	t.Run("after the thaw the cache catches up within seconds, old gone and new there", func(t *testing.T) {
		eventually(t, ctx, "B's cache reaches A's resourceVersion", func() bool {
			_, listRV := rawGet(t, ctx, b.Config, list+"?resourceVersion=0").names(t)
			return rv(t, listRV) >= rv(t, x)
		})
		names, _ := rawGet(t, ctx, b.Config, list+"?resourceVersion=0").names(t)
		assert.Equal(t, []string{"new"}, names)
		t.Logf("caught up %s after the thaw", time.Since(thawed).Round(time.Millisecond))
	})
	t.Run(`the watch-list at "" that was waiting is answered`, func(t *testing.T) {
		select {
		case err := <-listAtNewest:
			assert.NoError(t, err)
		case <-ctx.Done():
			t.Fatal("the watch-list never got an answer")
		}
	})
	t.Run("the silent WATCH goes on with the events after its resourceVersion, and none before", func(t *testing.T) {
		later := create("later")
		select {
		case ev := <-plain.ResultChan():
			require.Equal(t, watch.Added, ev.Type)
			assert.Equal(t, later.Name, ev.Object.(*corev1.ConfigMap).Name, "not new (created before its resourceVersion), not old's deletion (at it)")
		case <-time.After(30 * time.Second):
			t.Fatal("no event after the thaw")
		}
	})
}

func TestIntegrationASecondAPIServerStopsWithItsEnvOrAlone(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	env := testenv.Start(t, testenv.Options{})
	first, err := env.StartSecondAPIServer(ctx)
	require.NoError(t, err)
	second, err := env.StartSecondAPIServer(ctx)
	require.NoError(t, err)
	assert.Equal(t, "kube-apiserver-2", first.Name())
	assert.Equal(t, "kube-apiserver-3", second.Name())
	pid := func(name string) int {
		for _, p := range env.Processes() {
			if p.Name == name {
				return p.PID
			}
		}
		return 0
	}
	firstPID, secondPID := pid("kube-apiserver-2"), pid("kube-apiserver-3")
	require.NotZero(t, firstPID)
	require.NotZero(t, secondPID)

	first.EtcdLink.Freeze() // Stop must not hang on an apiserver that cannot reach etcd
	first.Stop()
	first.Stop() // idempotent
	assert.False(t, processAlive(firstPID), "Stop stopped it")
	assert.Zero(t, pid("kube-apiserver-2"), "Processes no longer lists it")

	env.Stop()
	assert.False(t, processAlive(secondPID), "Env.Stop stopped the second apiserver still running")
}
