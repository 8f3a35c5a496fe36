//go:build !replayonly

package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubeinternals/informers/examples/foo-controller/controller"
)

// answerOf is an action's {"did": …, …} answer.
func answerOf(t *testing.T, body string) map[string]string {
	t.Helper()
	var a map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &a), body)
	return a
}

// state is GET /state, decoded.
func (ts *testServer) state(t *testing.T) snapshot {
	t.Helper()
	code, body := do(t, mustGet(t, ts.URL+"/state"))
	require.Equal(t, http.StatusOK, code, body)
	var s snapshot
	require.NoError(t, json.Unmarshal([]byte(body), &s))
	return s
}

func TestSwitchPipeline(t *testing.T) {
	ts := startTestServer(t, true, nil)
	require.NoError(t, ts.runner.begin(controller.DefaultPipeline))
	assert.Equal(t, "default", ts.state(t).Pipeline.Name)

	t.Run("a switch restarts the controller on the pipeline named, and the page's state follows", func(t *testing.T) {
		code, body := ts.post(t, switchPipeline, `{"pipeline":"classic"}`)
		require.Equal(t, http.StatusOK, code, body)
		a := answerOf(t, body)
		assert.Equal(t, "stopped foo-controller on the default pipeline and started it on the classic one: DeltaFIFO fed by a paged LIST (the classic one most write-ups describe); its caches are filled", a["did"])
		assert.Contains(t, a["expect"], "the queue boxes say deltafifo and the reflector boxes say their caches were filled by a LIST")
		assert.Equal(t, "classic", a["pipeline"])
		assert.Equal(t, []string{"start default", "end default", "start classic"}, ts.runs.Log())
		s := ts.state(t)
		assert.Equal(t, pipelineLabel{Name: "classic", Text: labelOf(controller.ClassicPipeline, 0).Text, Queue: "deltafifo", Run: 2}, s.Pipeline)
		assert.Equal(t, "deltafifo", s.Informers[0].Queue.Kind)
	})
	t.Run("a switch to the pipeline that runs says so and changes nothing", func(t *testing.T) {
		code, body := ts.post(t, switchPipeline, `{"pipeline":"classic"}`)
		require.Equal(t, http.StatusOK, code, body)
		assert.Equal(t, "foo-controller already runs the classic pipeline: DeltaFIFO fed by a paged LIST (the classic one most write-ups describe)", answerOf(t, body)["did"])
		assert.Len(t, ts.runs.Log(), 3)
	})
	t.Run("bad input is a clear 400 and switches nothing", func(t *testing.T) {
		for _, c := range []struct{ body, says string }{
			{`{"pipeline":"fast"}`, `switch-pipeline: pipeline "fast" must be "default" (RealFIFO fed by a watch-list) or "classic" (DeltaFIFO fed by a paged LIST)`},
			{`{}`, `pipeline "" must be`},
			{`{"pipeline":"default","now":true}`, "unknown field"},
			{`{"pipeline":"default"}{}`, "nothing after it"},
			{``, "JSON"},
		} {
			code, body := ts.post(t, switchPipeline, c.body)
			assert.Equal(t, http.StatusBadRequest, code, c.body)
			assert.Contains(t, message(t, body), c.says, c.body)
		}
		assert.Len(t, ts.runs.Log(), 3)
	})
	t.Run("a switch while the explorer stops is refused with 503", func(t *testing.T) {
		require.NoError(t, ts.runner.stop())
		code, body := ts.post(t, switchPipeline, `{"pipeline":"default"}`)
		assert.Equal(t, http.StatusServiceUnavailable, code, body)
		assert.Contains(t, message(t, body), "shutting down")
	})
}

func TestRepeatLast(t *testing.T) {
	ts := startTestServer(t, true, nil)
	require.NoError(t, ts.runner.begin(controller.DefaultPipeline))
	repeat := func(t *testing.T) (int, string) {
		t.Helper()
		return ts.post(t, repeatLast, `{}`)
	}
	mustAct := func(t *testing.T, action, body string) {
		t.Helper()
		code, resp := ts.post(t, action, body)
		require.Equal(t, http.StatusOK, code, resp)
	}

	t.Run("before any action there is nothing to repeat", func(t *testing.T) {
		code, body := repeat(t)
		assert.Equal(t, http.StatusConflict, code)
		assert.Contains(t, message(t, body), "nothing to repeat yet")
		assert.Empty(t, ts.state(t).LastAction)
	})
	mustAct(t, "create-foo", `{"name":"demo","replicas":2}`)
	t.Run("the page names the last action that succeeded; a refused one does not replace it", func(t *testing.T) {
		assert.Equal(t, "Create Foo (name demo, replicas 2)", ts.state(t).LastAction)
		code, _ := ts.post(t, "create-foo", `{"name":"Bad_Name","replicas":2}`)
		require.Equal(t, http.StatusBadRequest, code)
		code, _ = ts.post(t, "touch-foo", `{"name":"demo"}`, func(r *http.Request) { r.Header.Del(tokenHeader) })
		require.Equal(t, http.StatusForbidden, code)
		assert.Equal(t, "Create Foo (name demo, replicas 2)", ts.state(t).LastAction)
	})
	t.Run("after a switch, the repeated create runs on the new pipeline, under a fresh name since the Foo exists", func(t *testing.T) {
		code, body := ts.post(t, switchPipeline, `{"pipeline":"classic"}`)
		require.Equal(t, http.StatusOK, code, body)
		before := len(ts.world.Calls())
		code, body = repeat(t)
		require.Equal(t, http.StatusOK, code, body)
		a := answerOf(t, body)
		assert.Equal(t, "repeated on the classic pipeline (DeltaFIFO fed by a paged LIST): created Foo explore/demo-classic with 2 replicas — a fresh name, since demo already exists", a["did"])
		assert.Equal(t, "create-foo", a["action"])
		assert.Equal(t, "demo-classic", a["name"])
		assert.Equal(t, "classic", a["pipeline"])
		assert.Equal(t, actions()[0].Expect, a["expect"])
		assert.Equal(t, []string{"CreateFoo demo 2", "CreateFoo demo-classic 2"}, ts.world.Calls()[before:])
		assert.Equal(t, "Create Foo (name demo, replicas 2)", ts.state(t).LastAction, "the action to repeat is still the one pressed")

		code, body = repeat(t)
		require.Equal(t, http.StatusOK, code, body)
		assert.Equal(t, "demo-classic-2", answerOf(t, body)["name"])
		assert.Contains(t, answerOf(t, body)["did"], "since demo, demo-classic already exist")
	})
	t.Run("other actions repeat with the same inputs", func(t *testing.T) {
		mustAct(t, "scale-foo", `{"name":"demo","replicas":4}`)
		before := len(ts.world.Calls())
		code, body := repeat(t)
		require.Equal(t, http.StatusOK, code, body)
		assert.Equal(t, "demo", answerOf(t, body)["name"])
		assert.Equal(t, []string{"ScaleFoo demo 4"}, ts.world.Calls()[before:])

		mustAct(t, "slow-handler", `{"handler":"enqueueFoo","delayMs":500}`)
		assert.Equal(t, "Slow a handler (handler enqueueFoo, delayMs 500)", ts.state(t).LastAction)
		mustAct(t, "cut-watch", `{}`)
		assert.Equal(t, "Cut the watch", ts.state(t).LastAction)
		code, body = repeat(t)
		require.Equal(t, http.StatusOK, code, body)
		assert.Equal(t, "repeated on the classic pipeline (DeltaFIFO fed by a paged LIST): cut 2 connection(s) between the informers and the apiserver", answerOf(t, body)["did"])
	})
	t.Run("a repeat the cluster refuses says what was repeated, where, and why it failed", func(t *testing.T) {
		mustAct(t, "delete-foo", `{"name":"demo"}`)
		code, body := repeat(t)
		assert.Equal(t, http.StatusNotFound, code, body)
		assert.Equal(t, `repeat-last: delete-foo on the classic pipeline (DeltaFIFO fed by a paged LIST): foos.samplecontroller.k8s.io "demo" not found`, message(t, body))
	})
	t.Run("a repeated create out of fresh names is a 409 that says so", func(t *testing.T) {
		mustAct(t, "create-foo", `{"name":"busy","replicas":1}`)
		for _, name := range freshNames("busy", "classic") {
			_ = ts.world.CreateFoo(t.Context(), name, 1)
		}
		code, body := repeat(t)
		assert.Equal(t, http.StatusConflict, code, body)
		assert.Contains(t, message(t, body), "the Foos busy, busy-classic, busy-classic-2")
		assert.Contains(t, message(t, body), "busy-classic-9 all exist already: delete one, or create a Foo with another name")
	})
	t.Run("repeat takes no input", func(t *testing.T) {
		code, body := ts.post(t, repeatLast, `{"name":"other"}`)
		assert.Equal(t, http.StatusBadRequest, code)
		assert.Contains(t, message(t, body), "unknown field")
	})
}

func TestFreshNamesAreValidDistinctNames(t *testing.T) {
	assert.Equal(t, []string{"demo", "demo-classic", "demo-classic-2", "demo-classic-3", "demo-classic-4", "demo-classic-5",
		"demo-classic-6", "demo-classic-7", "demo-classic-8", "demo-classic-9"}, freshNames("demo", "classic"))
	create := actions()[0]
	require.Equal(t, "create-foo", create.Name)
	two := int32(2)
	for _, name := range []string{"a", strings.Repeat("a", maxName), strings.Repeat("a", 30) + "-" + strings.Repeat("b", 9), strings.Repeat("x", 29) + "--" + strings.Repeat("y", 9)} {
		for _, p := range controller.Pipelines {
			seen := map[string]bool{}
			for _, fresh := range freshNames(name, string(p)) {
				assert.Empty(t, validation.IsDNS1123Label(fresh), fresh)
				assert.NoError(t, create.validate(args{Name: fresh, Replicas: &two}), "create-foo takes %q", fresh)
				assert.False(t, seen[fresh], "%q comes once", fresh)
				seen[fresh] = true
			}
		}
	}
}
