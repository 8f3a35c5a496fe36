package browser

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"
)

// RequireEnv is the environment variable that turns a missing browser from a skip
// into a failure. CI sets it so that browser tests cannot skip silently.
const RequireEnv = "KUBEINTERNALS_REQUIRE_BROWSER"

// ForTest launches a headless chromium for this test (Launch with the default Options,
// bounded by 2 minutes) and registers Close with t.Cleanup, which also runs when the
// test fails or panics; a Close that leaves a process or directory behind fails the
// test. Without chromium and chromedriver it skips the test naming the install
// command, or fails it when KUBEINTERNALS_REQUIRE_BROWSER=1.
func ForTest(t testing.TB) *Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	s, err := Launch(ctx, Options{})
	if errors.Is(err, ErrNoBrowser) {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("%v (%s=1 makes this a failure)", err, RequireEnv)
		}
		t.Skipf("skipping: %v", err) // the error names InstallCommand
	}
	if err != nil {
		t.Fatalf("starting the browser: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("closing the browser: %v", err)
		}
	})
	t.Logf("chromium %s ready in %s", s.Version, time.Since(start).Round(time.Millisecond))
	return s
}
