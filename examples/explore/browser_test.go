package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/internal/testrig/browser"
)

// What the browser tests of both builds share: the live explorer's
// (browser_integration_test.go) and the replay's (replay_browser_test.go).

var updateScreenshot = flag.Bool("update-screenshot", false, "write the browser tests' screenshots to docs/images (explorer.png, explorer-classic.png, replay.png)")

// screenshot saves the page as name: in the test's temporary directory, or in
// docs/images with -update-screenshot.
func screenshot(ctx context.Context, t *testing.T, b *browser.Session, name string) {
	png, err := b.Screenshot(ctx)
	require.NoError(t, err)
	shot := filepath.Join(t.TempDir(), name)
	if *updateScreenshot {
		shot = filepath.Join("../../docs/images", name)
	}
	require.NoError(t, os.WriteFile(shot, png, 0o644))
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))
}
