//go:build !replayonly

package main

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/trace"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestActionsDoWhatTheySay(t *testing.T) {
	cases := []struct {
		action, body, call string
	}{
		{"create-foo", `{"name":"demo","replicas":2}`, "CreateFoo demo 2"},
		{"touch-foo", `{"name":"demo"}`, "TouchFoo demo"},
		{"scale-foo", `{"name":"demo","replicas":0}`, "ScaleFoo demo 0"},
		{"delete-foo", `{"name":"demo"}`, "DeleteFoo demo"},
		{"edit-deployment", `{"name":"demo","replicas":5}`, "ScaleDeployment demo 5"},
		{"fail-reconcile", `{"name":"demo","times":3}`, "FailReconciles demo 3"},
		{"slow-handler", `{"handler":"enqueueFoo","delayMs":500}`, "SlowHandler enqueueFoo 500ms"},
		{"slow-handler", `{"handler":"handleDeployment","delayMs":0}`, "SlowHandler handleDeployment 0s"},
		{"cut-watch", `{}`, "CutWatch"},
		{"compact-etcd", `{}`, "CompactEtcd"},
		{"restart-apiserver", `{}`, "RestartAPIServer"},
	}
	ts := startTestServer(t, true, nil)
	tested := map[string]bool{}
	for _, c := range cases {
		t.Run(c.action+" "+c.body+" calls "+c.call, func(t *testing.T) {
			before := len(ts.world.Calls())
			code, body := ts.post(t, c.action, c.body)
			require.Equal(t, http.StatusOK, code, body)
			assert.Contains(t, body, `"did"`)
			assert.Contains(t, body, `"expect"`)
			assert.Equal(t, []string{c.call}, ts.world.Calls()[before:])
		})
		tested[c.action] = true
	}
	for _, a := range actions() {
		assert.True(t, tested[a.Name], "action %s has a case here", a.Name)
	}
}

func TestBadInputIsAClear4xxAndActsOnNothing(t *testing.T) {
	cases := []struct {
		name, action, body string
		code               int
		says               string
	}{
		{"a missing name", "create-foo", `{"replicas":1}`, 400, "name"},
		{"a name that is no DNS label", "touch-foo", `{"name":"Bad_Name"}`, 400, "lowercase DNS label"},
		{"a name too long", "delete-foo", `{"name":"` + strings.Repeat("a", 41) + `"}`, 400, "at most 40"},
		{"missing replicas", "scale-foo", `{"name":"demo"}`, 400, "replicas must be given"},
		{"negative replicas", "edit-deployment", `{"name":"demo","replicas":-1}`, 400, "from 0 to 10"},
		{"too many replicas", "create-foo", `{"name":"demo","replicas":11}`, 400, "from 0 to 10"},
		{"replicas of the wrong type", "create-foo", `{"name":"demo","replicas":"two"}`, 400, "cannot unmarshal"},
		{"zero failures", "fail-reconcile", `{"name":"demo","times":0}`, 400, "times must be from 1 to 10"},
		{"an unknown handler", "slow-handler", `{"handler":"nope","delayMs":1}`, 400, `handler "nope"`},
		{"a delay too long", "slow-handler", `{"handler":"enqueueFoo","delayMs":6000}`, 400, "delayMs"},
		{"a missing delay", "slow-handler", `{"handler":"enqueueFoo"}`, 400, "delayMs must be given"},
		// Why these three: delayMs × 1ms overflows time.Duration (int64 nanoseconds)
		// past 9223372036854 ms, and the product wraps.
		{"a delay whose nanoseconds wrap negative", "slow-handler", `{"handler":"enqueueFoo","delayMs":9223372036855}`, 400, "delayMs must be given, from 0 to 5000"},
		{"a delay whose nanoseconds wrap to a small positive duration", "slow-handler", `{"handler":"enqueueFoo","delayMs":18446744073710}`, 400, "delayMs must be given, from 0 to 5000"},
		{"the largest int as a delay", "slow-handler", `{"handler":"enqueueFoo","delayMs":9223372036854775807}`, 400, "delayMs must be given, from 0 to 5000"},
		{"a delay past the largest int", "slow-handler", `{"handler":"enqueueFoo","delayMs":9223372036854775808}`, 400, "delayMs"},
		{"an unknown field", "create-foo", `{"name":"demo","replicas":1,"image":"x"}`, 400, "unknown field"},
		{"a body that is not JSON", "create-foo", `name=demo`, 400, "JSON"},
		{"two JSON objects", "touch-foo", `{"name":"a"}{"name":"b"}`, 400, "nothing after it"},
		{"an empty body", "cut-watch", ``, 400, "JSON"},
		{"a body over 4 KiB", "touch-foo", `{"name":"` + strings.Repeat("a", 5000) + `"}`, 400, "too large"},
		{"an unknown action", "format-disk", `{}`, 404, `no action "format-disk"`},
	}
	ts := startTestServer(t, true, nil)
	for _, c := range cases {
		t.Run(c.name+" is refused", func(t *testing.T) {
			code, body := ts.post(t, c.action, c.body)
			assert.Equal(t, c.code, code, body)
			assert.Contains(t, message(t, body), c.says)
		})
	}
	assert.Empty(t, ts.world.Calls(), "no refused request reached the cluster")
}

func TestOnlyThePageItselfCanAct(t *testing.T) {
	ts := startTestServer(t, true, nil)
	cases := []struct {
		name   string
		change func(*http.Request)
		code   int
		says   string
	}{
		{"without the token", func(r *http.Request) { r.Header.Del(tokenHeader) }, 403, tokenHeader},
		{"with a wrong token", func(r *http.Request) { r.Header.Set(tokenHeader, "0000") }, 403, tokenHeader},
		{"from another origin", func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }, 403, "cross-origin"},
		{"without an Origin", func(r *http.Request) { r.Header.Del("Origin") }, 403, "cross-origin"},
		{"from a page of another site", func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }, 403, "Sec-Fetch-Site"},
		{"from another port of localhost (the same site)", func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "same-site") }, 403, "Sec-Fetch-Site"},
		{"that no page made (Sec-Fetch-Site: none)", func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "none") }, 403, "Sec-Fetch-Site"},
		{"as a form post", func(r *http.Request) { r.Header.Set("Content-Type", "application/x-www-form-urlencoded") }, 415, "JSON"},
		{"to a rebound host name", func(r *http.Request) { r.Host = "evil.example:80" }, 403, "unexpected Host"},
		{"as a GET", func(r *http.Request) { r.Method = http.MethodGet }, 405, "POST"},
	}
	// Why the pipeline control too: a switch restarts the controller, a repeat acts on
	// the cluster; they pass the same checks as every button.
	endpoints := []struct{ action, body string }{{"cut-watch", `{}`}, {switchPipeline, `{"pipeline":"classic"}`}, {repeatLast, `{}`}}
	for _, e := range endpoints {
		for _, c := range cases {
			t.Run(e.action+" "+c.name+" is refused", func(t *testing.T) {
				code, body := ts.post(t, e.action, e.body, c.change)
				assert.Equal(t, c.code, code, body)
				assert.Contains(t, message(t, body), c.says)
			})
		}
	}
	assert.Empty(t, ts.world.Calls())
	assert.Empty(t, ts.runs.Log(), "no refused switch started a controller")

	t.Run("the page and the stream refuse a rebound host name too", func(t *testing.T) {
		for _, path := range []string{"/", "/events", "/state", "/journey?key=a/b"} {
			req, err := http.NewRequest(http.MethodGet, ts.URL+path, nil)
			require.NoError(t, err)
			req.Host = "attacker.example:8077"
			code, body := do(t, req)
			assert.Equal(t, http.StatusForbidden, code, path)
			assert.Contains(t, message(t, body), "unexpected Host")
		}
	})
	t.Run("a client that sends no fetch metadata (curl, the integration test) acts with Origin and the token", func(t *testing.T) {
		code, body := ts.post(t, "cut-watch", `{}`, func(r *http.Request) { r.Header.Del("Sec-Fetch-Site") })
		assert.Equal(t, http.StatusOK, code, body)
	})
	t.Run("localhost is this server too", func(t *testing.T) {
		code, body := ts.post(t, "cut-watch", `{}`, func(r *http.Request) {
			r.Host = strings.Replace(r.Host, "127.0.0.1", "localhost", 1)
			r.Header.Set("Origin", "http://"+r.Host)
		})
		assert.Equal(t, http.StatusOK, code, body)
	})
}

func TestFaultsNeedTheLocalControlPlane(t *testing.T) {
	ts := startTestServer(t, false, nil)
	for _, a := range actions() {
		if !a.Fault {
			continue
		}
		code, body := ts.post(t, a.Name, `{}`)
		assert.Equal(t, http.StatusConflict, code, a.Name)
		assert.Contains(t, message(t, body), "needs the local control plane", a.Name)
	}
	assert.Empty(t, ts.world.Calls())
	code, _ := ts.post(t, "touch-foo", `{"name":"demo"}`)
	assert.Equal(t, http.StatusOK, code, "the other buttons work on any cluster")
}

func TestClusterErrorsKeepTheirMeaning(t *testing.T) {
	gr := schema.GroupResource{Group: "samplecontroller.k8s.io", Resource: "foos"}
	cases := []struct {
		err  error
		code int
	}{
		{apierrors.NewNotFound(gr, "demo"), http.StatusNotFound},
		{apierrors.NewAlreadyExists(gr, "demo"), http.StatusConflict},
		{apierrors.NewInvalid(schema.GroupKind{Group: gr.Group, Kind: "Foo"}, "demo", nil), http.StatusUnprocessableEntity},
		{errors.New("connection refused"), http.StatusBadGateway},
	}
	ts := startTestServer(t, true, nil)
	for _, c := range cases {
		ts.world.err = c.err
		code, body := ts.post(t, "touch-foo", `{"name":"demo"}`)
		assert.Equal(t, c.code, code, body)
		assert.Contains(t, message(t, body), "touch-foo: ")
	}
}

// FuzzActionBody: whatever the body, every action — the pipeline control's included —
// answers 200 or a 4xx, never a 5xx, and never panics.
func FuzzActionBody(f *testing.F) {
	var all []string
	for _, a := range actions() {
		all = append(all, a.Name)
	}
	all = append(all, switchPipeline, repeatLast)
	for i := range all {
		for _, seed := range []string{`{"name":"demo","replicas":2}`, `{}`, `{"name":null}`, `[1,2]`, `{"delayMs":-9999999999999}`, "\x00", `{"pipeline":"classic"}`} {
			f.Add(uint8(i), seed)
		}
	}
	ts := startTestServer(f, true, nil)
	f.Fuzz(func(t *testing.T, which uint8, body string) {
		action := all[int(which)%len(all)]
		code, resp := ts.post(t, action, body)
		if code != 200 && (code < 400 || code >= 500) {
			t.Fatalf("%s %q: %d %s", action, body, code, resp)
		}
	})
}

func TestAnActionIsMarkedInTheTraceBeforeItRuns(t *testing.T) {
	ts := startTestServer(t, true, nil)
	code, body := ts.post(t, "create-foo", `{"name":"demo","replicas":2}`)
	require.Equal(t, http.StatusOK, code, body)
	code, body = ts.post(t, "cut-watch", `{}`)
	require.Equal(t, http.StatusOK, code, body)
	events, _ := ts.hub.since(0, 100)
	var marks []string
	for _, e := range events {
		if e.Kind == trace.Action {
			marks = append(marks, e.Type+": "+e.Detail)
		}
	}
	assert.Equal(t, []string{"change: Create Foo (name demo, replicas 2)", "fault: Cut the watch"}, marks)
	plotted, _ := ts.hub.plotsSince(0)
	require.Len(t, plotted.Marks, 2, "the plots mark both")
	assert.Equal(t, "fault", plotted.Marks[1].Kind)
}
