package testenv

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"
)

// RequireEnv is the environment variable that turns a missing control plane from a
// skip into a failure. CI sets it so that integration tests cannot skip silently.
const RequireEnv = "KUBEINTERNALS_REQUIRE_CONTROLPLANE"

// Start starts a fresh control plane for this test and registers Stop with t.Cleanup,
// which also runs when the test fails or panics. Without built binaries it skips the
// test naming the command that builds them, or fails it when KUBEINTERNALS_REQUIRE_CONTROLPLANE=1.
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	e, err := Launch(ctx, opts)
	if errors.Is(err, ErrNoBinaries) {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("%v (%s=1 makes this a failure)", err, RequireEnv)
		}
		t.Skipf("skipping: %v — build it with %q", err, BuildCommand)
	}
	if err != nil {
		t.Fatalf("starting the control plane: %v", err)
	}
	t.Cleanup(e.Stop)
	t.Logf("control plane (profile %d) ready in %s at %s", opts.Profile, time.Since(start).Round(time.Millisecond), e.Config.Host)
	return e
}
