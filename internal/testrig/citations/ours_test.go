package citations

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEverySymbolAndFileOfOursAPageNamesExists: a page that names `informer.Options`,
// `Reflector.watchList` or `deltas.go` names something the tree (or, for a name a page
// gives client-go's, client-go) has, so a rename without its pages fails here.
func TestEverySymbolAndFileOfOursAPageNamesExists(t *testing.T) {
	dirs, version := pinned(t)
	repo, err := ReadRepo("../../..")
	require.NoError(t, err)
	upstreamFiles := map[string]bool{}
	for _, mod := range []string{"k8s.io/client-go", "k8s.io/apimachinery"} {
		require.NoError(t, filepath.WalkDir(dirs[mod], func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") {
				upstreamFiles[d.Name()] = true
			}
			return err
		}))
	}
	stale, checked, err := repo.OwnStale("../../..", &Source{Dirs: dirs}, upstreamFiles)
	require.NoError(t, err)
	require.Greater(t, checked, 500, "the scan found the pages' symbols and files")
	t.Logf("%d code spans name a symbol or Go file; checked against this tree and client-go %s", checked, version)
	assert.Empty(t, stale, "pages naming what the tree does not have")
}
