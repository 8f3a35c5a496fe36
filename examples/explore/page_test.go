package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPage: what every build's page serves. The live explorer's buttons and pipeline
// control are page_live_test.go's.
func TestPage(t *testing.T) {
	t.Run("two runs have different tokens", func(t *testing.T) {
		assert.NotEqual(t, startTestServer(t, true, nil).token, startTestServer(t, true, nil).token)
	})
	t.Run("the page follows a key from the informer the server names for its row", func(t *testing.T) {
		ts := startTestServer(t, true, nil)
		_, script := do(t, mustGet(t, ts.URL+"/static/app.js"))
		assert.Contains(t, script, "/journey?source=${encodeURIComponent(followingFrom)}&key=", "the journey fetch sends the source")
		assert.Contains(t, script, "a.dataset.from = from", "a follow button keeps its row's from (wireEvent.From)")
		_, page := do(t, mustGet(t, ts.URL+"/"))
		assert.Contains(t, page, `id="journey-of"`, "the page says what it follows: an informer's object or a workqueue key")
	})
	t.Run("the script and the style are served", func(t *testing.T) {
		ts := startTestServer(t, true, nil)
		for _, p := range []string{"/static/app.js", "/static/style.css"} {
			code, body := do(t, mustGet(t, ts.URL+p))
			assert.Equal(t, 200, code, p)
			assert.NotEmpty(t, body, p)
		}
	})
}
