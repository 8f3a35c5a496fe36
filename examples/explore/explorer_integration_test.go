//go:build !replayonly

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/examples/internal/cluster"
	"github.com/kubeinternals/informers/trace"
)

// startForTest runs the explorer on c for one test, on a free loopback port, with
// foo-controller on pipeline p.
func startForTest(t *testing.T, c *cluster.Cluster, p controller.Pipeline) *explorer {
	t.Helper()
	ln, err := listenLoopback("127.0.0.1:0")
	require.NoError(t, err)
	x, err := startExplorer(t.Context(), c, ln, slog.New(slog.NewTextHandler(io.Discard, nil)), p)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, x.Stop(), "the explorer stops cleanly") })
	return x
}

// act posts an action as the page does, requires it to succeed, and returns its
// answer's fields.
func (x *explorer) act(t *testing.T, action, body string) map[string]string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, x.URL+"api/"+action, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", strings.TrimSuffix(x.URL, "/"))
	req.Header.Set(tokenHeader, x.token())
	code, resp := do(t, req)
	require.Equal(t, http.StatusOK, code, "%s %s: %s", action, body, resp)
	t.Logf("%s %s → %s", action, body, resp)
	var answer map[string]string
	require.NoError(t, json.Unmarshal([]byte(resp), &answer), resp)
	return answer
}

// token reads the page's token the way the page's script does.
func (x *explorer) token() string {
	resp, err := http.Get(x.URL)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	_, rest, _ := bytes.Cut(b, []byte(`name="explore-token" content="`))
	tok, _, _ := bytes.Cut(rest, []byte(`"`))
	return string(tok)
}

// informer is the snapshot's box of resource.
func (s snapshot) informer(resource string) informerBox {
	for _, i := range s.Informers {
		if i.Resource == resource {
			return i
		}
	}
	return informerBox{}
}

func (s snapshot) handler(name string) handlerBox {
	for _, h := range s.Handlers {
		if h.Name == name {
			return h
		}
	}
	return handlerBox{}
}

// await polls the explorer's state until cond holds, failing after a minute with
// what and the last state.
func (x *explorer) await(t *testing.T, what string, cond func(snapshot) bool) snapshot {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		s := x.state(t)
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			b, _ := json.MarshalIndent(s, "", "  ")
			t.Fatalf("waited a minute for %s; last state:\n%s", what, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// awaitWithin polls the state until cond holds (true) or within has passed (false,
// with the last state).
func (x *explorer) awaitWithin(within time.Duration, cond func(snapshot) bool) (snapshot, bool) {
	deadline := time.Now().Add(within)
	for {
		s, err := x.stateOrErr()
		if err == nil && cond(s) {
			return s, true
		}
		if time.Now().After(deadline) {
			return s, false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// compactedRevision reads the revision from compact-etcd's answer ("… compacted etcd
// up to revision N").
func compactedRevision(t *testing.T, did string) int64 {
	t.Helper()
	m := regexp.MustCompile(`compacted etcd up to revision (\d+)`).FindStringSubmatch(did)
	require.Len(t, m, 2, "compact-etcd's answer names the revision: %q", did)
	rev, err := strconv.ParseInt(m[1], 10, 64)
	require.NoError(t, err)
	return rev
}

// awaitJourney waits until the journey of the Foo key has passed boxes, in that
// order, and returns its events.
func (x *explorer) awaitJourney(t *testing.T, key string, boxes ...string) []numbered {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		events, got := x.hub.journey("foos", key)
		if len(got) >= len(boxes) && fmt.Sprint(got[:len(boxes)]) == fmt.Sprint(boxes) {
			return events
		}
		if time.Now().After(deadline) {
			t.Fatalf("journey of %s: want boxes %v first, got %v", key, boxes, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// awaitJourneyThat waits until the journey of the Foo key satisfies cond.
func (x *explorer) awaitJourneyThat(t *testing.T, key, what string, cond func([]numbered) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		events, _ := x.hub.journey("foos", key)
		if cond(events) {
			return
		}
		if time.Now().After(deadline) {
			var lines []string
			for _, e := range events {
				lines = append(lines, fmt.Sprintf("%s %s: %s", e.Stage, e.Source, e.Event))
			}
			t.Fatalf("waited a minute for %s; the journey of %s:\n%s", what, key, strings.Join(lines, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func watching(s snapshot) bool {
	return s.informer("foos").Reflector.Phase == "WATCH" && s.informer("deployments").Reflector.Phase == "WATCH"
}

// fooJourney is the boxes a new Foo's journey passes, in order.
var fooJourney = []string{"reflector:foos", "queue:foos", "indexer:foos", "handler:enqueueFoo", "workqueue", "workers"}

// queueStages is the set of queue stages among events.
func queueStages(events []numbered) map[trace.Stage]bool {
	out := map[trace.Stage]bool{}
	for _, e := range events {
		if e.Stage == trace.RealFIFO || e.Stage == trace.DeltaFIFO {
			out[e.Stage] = true
		}
	}
	return out
}

// switchTo switches foo-controller to pipeline p over HTTP, as the page does, and
// checks what the page then shows: the new pipeline, boxes that start from zero (one
// full-state fetch each, of the kind p uses), queues of p's kind, and the switch
// marked in the journey stream.
func (x *explorer) switchTo(t *testing.T, p controller.Pipeline) {
	t.Helper()
	before := x.state(t)
	answer := x.act(t, switchPipeline, `{"pipeline":"`+string(p)+`"}`)
	assert.Equal(t, string(p), answer["pipeline"])
	if before.Pipeline.Name == string(p) {
		return
	}
	// Why wait for WATCH: the switch answers when the caches are filled; a watch-list
	// is watching by then, a LIST's watch request starts just after.
	s := x.await(t, "both reflectors watching on the "+string(p)+" pipeline", watching)
	assert.Equal(t, string(p), s.Pipeline.Name)
	assert.Equal(t, before.Pipeline.Run+1, s.Pipeline.Run)
	assert.Equal(t, labelOf(p, 0).Text, s.Pipeline.Text)
	filledBy := map[controller.Pipeline][]string{controller.DefaultPipeline: {"watch-list"}, controller.ClassicPipeline: {"LIST", "paged LIST"}}[p]
	for _, r := range []string{"foos", "deployments"} {
		box := s.informer(r)
		assert.Equal(t, pipelineInfos[p].Queue, trace.Stage(box.Queue.Kind), "%s: the queue box is the new pipeline's", r)
		assert.Contains(t, filledBy, box.Reflector.FilledBy, "%s: filled as the %s pipeline fills its caches", r, p)
		assert.Equal(t, 1, box.Reflector.Lists, "%s: the counts started from zero: one fetch of the state", r)
		assert.Equal(t, 1, box.Queue.Replaces, "%s: one Replace, the new informer's first", r)
	}
	events, _ := x.hub.since(0, ringSize)
	var marks []numbered
	for _, e := range events {
		if e.Kind == pipelineStarted {
			marks = append(marks, e)
		}
	}
	require.NotEmpty(t, marks)
	assert.Equal(t, string(p), marks[len(marks)-1].Type, "the journey stream marks the switch")
}

// TestIntegrationExplorer runs the explorer on the embedded cluster and presses every
// button, asserting what each one's Expect promises. The browser test goes first, on
// the same cluster (see browser_integration_test.go).
func TestIntegrationExplorer(t *testing.T) {
	c := cluster.ForTest(t, cluster.Options{APIServerFlags: exploreAPIServerFlags})
	x := startForTest(t, c, controller.DefaultPipeline)
	s := x.await(t, "both informers watching", watching)
	// The explorer starts on client-go 1.37's pipeline: each cache filled by a
	// watch-list, whose stream goes on as the watch, into a RealFIFO.
	assert.Equal(t, "default", s.Pipeline.Name)
	for _, r := range []string{"foos", "deployments"} {
		assert.Equal(t, "watch-list", s.informer(r).Reflector.FilledBy, r)
		assert.Equal(t, "realfifo", s.informer(r).Queue.Kind, r)
		assert.Equal(t, 1, s.informer(r).Queue.Replaces, "%s: the watch-list's Replace, at its end bookmark", r)
		assert.Equal(t, 1, s.informer(r).Reflector.Bookmarks, "%s: the initial-events-end bookmark", r)
	}

	// browserRan: the browser subtest ran to its end (it skips without Chromium, unless
	// KUBEINTERNALS_REQUIRE_BROWSER=1), so the Foo it created exists.
	// Why a flag set at the end: a skip ends the subtest with runtime.Goexit, and
	// t.Run reports a skipped subtest as passed.
	browserRan := false
	t.Run("in a real browser: create a Foo, follow its journey, switch to classic, repeat the create, cut the watch", func(t *testing.T) {
		testInBrowser(t, x)
		browserRan = true
	})
	// Why: the browser test leaves the explorer on the classic pipeline; what follows
	// runs on the default one, as a reader's first visit does.
	x.switchTo(t, controller.DefaultPipeline)

	const foo = namespace + "/demo"
	// reconciles counts the Foo's reconciles since an event number: those that
	// succeeded, and those the fail-reconcile button failed. Other failures (a 409 on
	// the status update when the Foo changed meanwhile) are retried and not counted.
	reconciles := func(since uint64) (ok, injected int) {
		events, _ := x.hub.since(since, ringSize)
		for _, e := range events {
			if e.Kind != trace.Reconciled || e.Key != foo {
				continue
			}
			switch {
			case e.Reason == "":
				ok++
			case strings.Contains(e.Reason, errInjected.Error()):
				injected++
			}
		}
		return ok, injected
	}
	replicasOf := func() int32 {
		d, ok, _ := x.controller().Deployments().Indexer().GetByKey(namespace + "/demo")
		if !ok || d.Spec.Replicas == nil {
			return -1
		}
		return *d.Spec.Replicas
	}

	t.Run("create-foo: the Foo passes every box in order, through the RealFIFO, and the worker creates its Deployment", func(t *testing.T) {
		x.act(t, "create-foo", `{"name":"demo","replicas":1}`)
		events := x.awaitJourney(t, foo, fooJourney...)
		assert.Equal(t, map[trace.Stage]bool{trace.RealFIFO: true}, queueStages(events))
		x.await(t, "the Deployment in the cache", func(snapshot) bool { return replicasOf() == 1 })
		// The Deployment is named like the Foo: same key, another informer.
		events, boxes := x.hub.journey("foos", foo)
		assert.NotContains(t, boxes, "reflector:deployments", "the Deployment's events stay out of the Foo's journey")
		for _, e := range events {
			if e.Source == "deployments" || e.Informer == "deployments" {
				assert.Equal(t, trace.Mapped, e.Kind, "only the Deployment's mapping into the Foo's key: %s", e.Event)
			}
		}
	})
	t.Run("switch-pipeline, then repeat-last: the same create, through the DeltaFIFO, and back", func(t *testing.T) {
		x.switchTo(t, controller.ClassicPipeline)
		// The Foo that exists was listed by the new controller: its journey goes on
		// past the mark, through the DeltaFIFO's Replace, to the new cache.
		x.awaitJourneyThat(t, foo, "the Foo's journey to show the switch, then the DeltaFIFO and the new cache", func(events []numbered) bool {
			for i, e := range events {
				if e.Kind == pipelineStarted && e.Type == "classic" {
					after := events[i+1:]
					applied := slices.ContainsFunc(after, func(e numbered) bool { return e.Kind == trace.Applied })
					return applied && fmt.Sprint(queueStages(after)) == fmt.Sprint(map[trace.Stage]bool{trace.DeltaFIFO: true})
				}
			}
			return false
		})

		answer := x.act(t, repeatLast, `{}`)
		assert.Equal(t, "create-foo", answer["action"])
		assert.Equal(t, "demo-classic", answer["name"], "demo exists: the repeated create takes a fresh name")
		assert.Contains(t, answer["did"], "on the classic pipeline")
		events := x.awaitJourney(t, namespace+"/demo-classic", fooJourney...)
		assert.Equal(t, map[trace.Stage]bool{trace.DeltaFIFO: true}, queueStages(events), "the same create, through the DeltaFIFO")

		x.switchTo(t, controller.DefaultPipeline)
		answer = x.act(t, repeatLast, `{}`)
		assert.Equal(t, "demo-default", answer["name"])
		events = x.awaitJourney(t, namespace+"/demo-default", fooJourney...)
		assert.Equal(t, map[trace.Stage]bool{trace.RealFIFO: true}, queueStages(events), "and through the RealFIFO again")
	})
	t.Run("touch-foo: an update that changes nothing the controller reads still reaches a worker", func(t *testing.T) {
		mark := x.hub.newest()
		x.act(t, "touch-foo", `{"name":"demo"}`)
		x.await(t, "a reconcile after the touch", func(snapshot) bool { ok, _ := reconciles(mark); return ok > 0 })
	})
	t.Run("scale-foo: the worker scales the Deployment", func(t *testing.T) {
		x.act(t, "scale-foo", `{"name":"demo","replicas":3}`)
		x.await(t, "the Deployment at 3 replicas", func(snapshot) bool { return replicasOf() == 3 })
	})
	t.Run("edit-deployment: the controller undoes a hand edit of its Deployment", func(t *testing.T) {
		mark := x.hub.newest()
		x.act(t, "edit-deployment", `{"name":"demo","replicas":7}`)
		x.await(t, "handleDeployment to map the edit to the Foo, and the Deployment back at 3", func(snapshot) bool {
			events, _ := x.hub.since(mark, ringSize)
			mapped := false
			for _, e := range events {
				mapped = mapped || (e.Kind == trace.Mapped && e.Detail == foo)
			}
			return mapped && replicasOf() == 3
		})
	})
	t.Run("fail-reconcile: three failures, rate limited, then a success and Forget", func(t *testing.T) {
		before := x.state(t).Workqueue
		mark := x.hub.newest()
		x.act(t, "fail-reconcile", `{"name":"demo","times":3}`)
		// Why the counters are in the condition: the page's workqueue counts are read
		// apart from the trace, and may trail it by a moment under load.
		s := x.await(t, "three failed reconciles and then a good one, counted by the page", func(now snapshot) bool {
			ok, injected := reconciles(mark)
			return injected == 3 && ok >= 1 &&
				now.Workqueue.RateLimited-before.RateLimited >= 3 && now.Workqueue.Forgets > before.Forgets
		})
		assert.GreaterOrEqual(t, s.Workqueue.RateLimited-before.RateLimited, 3, "each failure was rate limited")
		assert.Greater(t, s.Workqueue.Forgets, before.Forgets, "the success called Forget")
		events, _ := x.hub.since(mark, ringSize)
		var delays []time.Duration
		for _, e := range events {
			if e.Kind == trace.RateLimited && e.Key == foo {
				delays = append(delays, e.Duration)
			}
		}
		require.GreaterOrEqual(t, len(delays), 3)
		assert.Less(t, delays[0], delays[1], "the backoff grows")
		assert.Less(t, delays[1], delays[2], "the backoff grows")
	})
	t.Run("slow-handler: the slowed handler's backlog grows, the other keeps up", func(t *testing.T) {
		x.act(t, "slow-handler", `{"handler":"enqueueFoo","delayMs":400}`)
		for range 4 {
			x.act(t, "touch-foo", `{"name":"demo"}`)
		}
		s := x.await(t, "enqueueFoo's backlog to drain", func(s snapshot) bool {
			return s.handler("enqueueFoo").Backlog == 0 && !s.handler("enqueueFoo").InCall
		})
		assert.GreaterOrEqual(t, s.handler("enqueueFoo").HighWater, 2, "notifications waited behind the slow calls")
		assert.Zero(t, s.handler("handleDeployment").Backlog)
		x.act(t, "slow-handler", `{"handler":"enqueueFoo","delayMs":0}`)
	})
	t.Run("cut-watch: both reflectors watch again from their resourceVersion, without a LIST", func(t *testing.T) {
		before := x.state(t)
		x.act(t, "cut-watch", `{}`)
		s := x.await(t, "both reflectors watching again", func(s snapshot) bool {
			return watching(s) && s.informer("foos").Reflector.Watches > before.informer("foos").Reflector.Watches &&
				s.informer("deployments").Reflector.Watches > before.informer("deployments").Reflector.Watches
		})
		for _, r := range []string{"foos", "deployments"} {
			assert.Equal(t, before.informer(r).Reflector.Lists, s.informer(r).Reflector.Lists, "%s: no relist", r)
			assert.NotEmpty(t, s.informer(r).Reflector.LastWatchEnd, r)
		}
	})
	t.Run("compact-etcd, then cut-watch: the next watch gets 410 Gone and both reflectors relist", func(t *testing.T) {
		before := x.state(t)
		relisted := func(s snapshot) bool {
			return watching(s) && s.informer("foos").Reflector.Relists > before.informer("foos").Reflector.Relists &&
				s.informer("deployments").Reflector.Relists > before.informer("deployments").Reflector.Relists
		}
		// Why attempts: kube-controller-manager and foo-controller write Deployments
		// when they please. One written between the compaction and the cut moves that
		// reflector past the compacted revision, and its re-watch is rightly served —
		// no 410 is due. Then the experiment is repeated; a reflector that stays at or
		// below the compacted revision and does not relist fails it at once.
		var s snapshot
		for attempt := 1; ; attempt++ {
			// Why wait: the watches began when the last subtest cut them. A watch cut less
			// than a second after it began, with no event, is a "very short watch", which
			// the reflector treats as a failure and relists for — that would hide the 410.
			time.Sleep(time.Until(x.lastWatchStart().Add(1100 * time.Millisecond)))
			compacted := compactedRevision(t, x.act(t, "compact-etcd", `{}`)["did"])
			x.act(t, "cut-watch", `{}`)
			var ok bool
			if s, ok = x.awaitWithin(20*time.Second, relisted); ok {
				break
			}
			for _, r := range []string{"foos", "deployments"} {
				box := s.informer(r).Reflector
				if box.Relists > before.informer(r).Reflector.Relists {
					continue
				}
				rv, err := strconv.ParseInt(box.RV, 10, 64)
				require.NoError(t, err, "%s: resourceVersion %q", r, box.RV)
				require.Greater(t, rv, compacted, "%s did not relist although its resourceVersion is not past the compaction", r)
				t.Logf("attempt %d: %s saw resourceVersion %d, written after the compaction at %d: no 410 is due", attempt, r, rv, compacted)
			}
			require.Less(t, attempt, 3, "three compactions in a row raced with a write")
		}
		for _, r := range []string{"foos", "deployments"} {
			assert.Contains(t, s.informer(r).Reflector.LastRelist, "compacted", r)
			assert.Greater(t, s.informer(r).Reflector.Lists, before.informer(r).Reflector.Lists, r)
		}
	})
	t.Run("delete-foo: the Foo leaves the cache", func(t *testing.T) {
		x.act(t, "delete-foo", `{"name":"demo"}`)
		x.await(t, "the Foo gone from the cache", func(snapshot) bool {
			_, ok, _ := x.controller().Foos().Indexer().GetByKey(foo)
			return !ok
		})
	})
	t.Run("restart-apiserver: the reflectors back off, then watch again; the cache keeps its objects", func(t *testing.T) {
		before := x.state(t)
		x.act(t, "restart-apiserver", `{}`)
		s := x.await(t, "both reflectors watching again", func(s snapshot) bool {
			return watching(s) && s.informer("foos").Reflector.Watches > before.informer("foos").Reflector.Watches &&
				s.informer("deployments").Reflector.Watches > before.informer("deployments").Reflector.Watches
		})
		assert.NotEmpty(t, s.informer("foos").Reflector.LastWatchEnd)
		if browserRan {
			for _, name := range []string{browserFoo, browserFoo + "-classic"} {
				_, ok, _ := x.controller().Foos().Indexer().GetByKey(namespace + "/" + name)
				assert.True(t, ok, "the cache kept the Foo %s the browser created", name)
			}
		}
	})
}

// lastWatchStart is when the most recent watch began.
func (x *explorer) lastWatchStart() time.Time {
	events, _ := x.hub.since(0, ringSize)
	var last time.Time
	for _, e := range events {
		if e.Kind == trace.WatchStarted {
			last = e.Time
		}
	}
	return last
}
