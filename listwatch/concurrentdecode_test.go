package listwatch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/kubeinternals/informers/reflector"
)

// watchListBody is a stream a watch-list could carry, with everything the decoders
// treat differently: n ConfigMaps of very different sizes (so that concurrent decoders
// finish out of order), an undecodable object and an object of the wrong kind (each
// skipped with a log line), a BOOKMARK, and, for JSON, broken framing at the end (an
// ERROR event after everything before it).
func watchListBody(t *testing.T, protobuf bool, n int) []byte {
	w := newWire(t, protobuf)
	var body bytes.Buffer
	for i := range n {
		cm := configMap(fmt.Sprintf("cm-%04d", i), fmt.Sprint(i+1))
		cm.Data["payload"] = strings.Repeat("x", (i*7919)%20000)
		body.Write(w.event(watch.Added, cm))
		switch i {
		case n / 3:
			body.Write(w.frame(watch.Added, w.corruptObject("corrupt")))
		case n / 2:
			body.Write(w.event(watch.Added, secret("wrong-kind", "0")))
		}
	}
	body.Write(w.event(watch.Bookmark, &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{ResourceVersion: fmt.Sprint(n + 1), Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}},
	}))
	if !protobuf {
		body.WriteString(`{"type":"ADDED","object":]` + "\n") // a syntax error
	}
	return body.Bytes()
}

// decodeAll runs body through a streamWatch with the given decoders and returns what
// the consumer saw, one line per event, and what was logged.
func decodeAll(t *testing.T, protobuf bool, body []byte, decoders int) (events []string, logged string) {
	scheme, err := NewScheme(corev1.AddToScheme)
	require.NoError(t, err)
	c, err := newTypedCodec[*corev1.ConfigMap](scheme, corev1.SchemeGroupVersion, protobuf)
	require.NoError(t, err)
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	_, cancel := context.WithCancel(context.Background())
	w := startStreamWatch(io.NopCloser(bytes.NewReader(body)), cancel, c, logger, decoders)
	defer w.Stop()
	for ev := range w.ResultChan() {
		events = append(events, describeEvent(ev))
	}
	return events, log.String()
}

// firstDifference describes where got first differs from want, "" if nowhere.
func firstDifference(want, got []string) string {
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			return fmt.Sprintf("event %d: want %q, got %q", i, want[i], got[i])
		}
	}
	if len(want) != len(got) {
		return fmt.Sprintf("want %d events, got %d", len(want), len(got))
	}
	return ""
}

func describeEvent(ev reflector.Event[*corev1.ConfigMap]) string {
	if ev.Type == watch.Error {
		return fmt.Sprintf("ERROR %d %s", ev.Status.Code, ev.Status.Message)
	}
	return fmt.Sprintf("%s %s@%s payload=%d", ev.Type, ev.Object.Name, ev.Object.ResourceVersion, len(ev.Object.Data["payload"]))
}

func TestConcurrentDecodingDeliversWhatTheSequentialPathDeliversInStreamOrder(t *testing.T) {
	for _, protobuf := range []bool{false, true} {
		t.Run(fmt.Sprintf("protobuf=%v", protobuf), func(t *testing.T) {
			const n = 600
			body := watchListBody(t, protobuf, n)
			want, wantLog := decodeAll(t, protobuf, body, 1)
			// What the sequential path delivers, checked once: every good object in
			// order, the two bad ones skipped and logged, the bookmark, then the
			// ERROR for the broken end (JSON only).
			wantLen := n + 1
			if !protobuf {
				wantLen++
				assert.Contains(t, want[len(want)-1], "ERROR 500")
			}
			require.Equal(t, wantLen, len(want), "events: %s … %s", want[0], want[len(want)-1])
			assert.Equal(t, fmt.Sprintf("BOOKMARK @%d payload=0", n+1), want[n])
			assert.Equal(t, 2, strings.Count(wantLog, "skipping watch event"), wantLog)
			for _, decoders := range []int{2, 3, 8} {
				got, gotLog := decodeAll(t, protobuf, body, decoders)
				assert.Empty(t, firstDifference(want, got), "%d decoders: the events or their order differ", decoders)
				assert.Equal(t, wantLog, gotLog, "%d decoders: the log differs", decoders)
			}
		})
	}
}

// TestStopEndsEveryGoroutineOfAConcurrentWatch: a consumer that
// stops reading and calls Stop, while the server is still sending and while it is
// silent. synctest fails the test if any goroutine of the watch is left (it waits for
// every goroutine of the bubble).
func TestStopEndsEveryGoroutineOfAConcurrentWatch(t *testing.T) {
	w := newWire(t, true)
	scheme, err := NewScheme(corev1.AddToScheme)
	require.NoError(t, err)
	c, err := newTypedCodec[*corev1.ConfigMap](scheme, corev1.SchemeGroupVersion, true)
	require.NoError(t, err)
	for _, serverKeepsSending := range []bool{true, false} {
		t.Run(fmt.Sprintf("serverKeepsSending=%v", serverKeepsSending), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				body, server := io.Pipe()
				// Goroutine owned by this test: the server; it ends when the body is
				// closed (a write fails) or, when silent, after its first 5 events.
				go func() {
					for i := 0; serverKeepsSending || i < 5; i++ {
						if _, err := server.Write(w.event(watch.Added, configMap(fmt.Sprint(i), fmt.Sprint(i+1)))); err != nil {
							return
						}
					}
					<-t.Context().Done()
				}()
				ctx, cancel := context.WithCancel(t.Context())
				// cancel stands for the request's cancellation, which closes the body.
				context.AfterFunc(ctx, func() { body.CloseWithError(context.Canceled) })
				sw := startStreamWatch(body, cancel, c, slog.New(slog.DiscardHandler), 4)
				ev := <-sw.ResultChan()
				assert.Equal(t, "0", ev.Object.Name)
				synctest.Wait() // every goroutine blocked: the ring is full, or the server silent
				sw.Stop()
				_, open := <-sw.ResultChan()
				assert.False(t, open, "the result channel is closed after Stop")
				server.CloseWithError(io.EOF)
			})
		})
	}
}

func TestOnlyAWatchListIsDecodedConcurrently(t *testing.T) {
	scheme, err := NewScheme(corev1.AddToScheme)
	require.NoError(t, err)
	for _, tc := range []struct {
		concurrency int
		opts        metav1.ListOptions
		want        int
	}{
		{0, metav1.ListOptions{}, 1},
		{0, metav1.ListOptions{SendInitialEvents: ptr.To(false)}, 1},
		{0, metav1.ListOptions{SendInitialEvents: ptr.To(true)}, min(runtime.GOMAXPROCS(0), 4)},
		{4, metav1.ListOptions{ResourceVersion: "7"}, 1},
		{4, metav1.ListOptions{SendInitialEvents: ptr.To(true)}, 4},
		{1, metav1.ListOptions{SendInitialEvents: ptr.To(true)}, 1},
	} {
		lw, err := New[*corev1.ConfigMap](newTestClient(t, "http://unused", corev1.SchemeGroupVersion), Options{Resource: "configmaps", Scheme: scheme, DecodeConcurrency: tc.concurrency})
		require.NoError(t, err)
		assert.Equal(t, tc.want, lw.decoders(tc.opts), "DecodeConcurrency %d, %+v", tc.concurrency, tc.opts)
	}
	_, err = New[*corev1.ConfigMap](newTestClient(t, "http://unused", corev1.SchemeGroupVersion), Options{Resource: "configmaps", Scheme: scheme, DecodeConcurrency: -1})
	assert.ErrorIs(t, err, ErrInvalidOptions)
}

// TestAConsumerStillReadingAfterStopGetsOnlyDecodedEvents: Stop while the consumer
// keeps reading. Decoders skip the slots they get after Stop; none of those may reach
// the consumer as an empty event.
func TestAConsumerStillReadingAfterStopGetsOnlyDecodedEvents(t *testing.T) {
	w := newWire(t, true)
	scheme, err := NewScheme(corev1.AddToScheme)
	require.NoError(t, err)
	c, err := newTypedCodec[*corev1.ConfigMap](scheme, corev1.SchemeGroupVersion, true)
	require.NoError(t, err)
	var body bytes.Buffer
	for i := range 64 {
		body.Write(w.event(watch.Added, configMap(fmt.Sprint(i), fmt.Sprint(i+1))))
	}
	for range 200 {
		synctest.Test(t, func(t *testing.T) {
			_, cancel := context.WithCancel(t.Context())
			sw := startStreamWatch(io.NopCloser(bytes.NewReader(body.Bytes())), cancel, c, slog.New(slog.DiscardHandler), 4)
			<-sw.ResultChan()
			go sw.Stop()
			for ev := range sw.ResultChan() {
				require.Equal(t, watch.Added, ev.Type, "an event after Stop")
				require.NotNil(t, ev.Object)
			}
		})
	}
}
