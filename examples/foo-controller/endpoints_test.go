package main

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/informer"
)

// healthz is what GET /healthz answers with liveness(healthy, watches, stuckAfter).
func healthz(t *testing.T, healthy func() error, watches func(time.Duration) error, stuckAfter time.Duration) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	probesMux(func() bool { return true }, liveness(healthy, watches, stuckAfter)).
		ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	body, err := io.ReadAll(rec.Result().Body)
	require.NoError(t, err)
	return rec.Code, string(body)
}

func TestHealthzFailsWhenAWatchIsStuckUnlessTheCheckIsOff(t *testing.T) {
	ok := func() error { return nil }
	var asked []time.Duration
	stuck := func(after time.Duration) error {
		asked = append(asked, after)
		return errors.New("watch stuck (foos.samplecontroller.k8s.io): its watch is open but has delivered nothing")
	}

	code, body := healthz(t, ok, stuck, informer.DefaultWatchStuckAfter)
	assert.Equal(t, http.StatusInternalServerError, code)
	assert.Contains(t, body, "unhealthy: watch stuck (foos.samplecontroller.k8s.io)")
	assert.Equal(t, []time.Duration{informer.DefaultWatchStuckAfter}, asked, "with the flag's threshold")

	for _, off := range []time.Duration{0, -time.Second} {
		code, body = healthz(t, ok, stuck, off)
		assert.Equal(t, http.StatusOK, code, "-watch-stuck-after=%v disables the check", off)
		assert.Equal(t, "ok\n", body)
	}
	assert.Len(t, asked, 1, "a disabled check is never asked")

	lease := func() error { return errors.New("the leader has not renewed its Lease") }
	_, body = healthz(t, lease, stuck, time.Minute)
	assert.Contains(t, body, "the leader has not renewed its Lease", "both failures are reported")
	assert.Contains(t, body, "watch stuck")

	code, _ = healthz(t, ok, func(time.Duration) error { return nil }, time.Minute)
	assert.Equal(t, http.StatusOK, code)
}
