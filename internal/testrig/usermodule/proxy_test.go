package usermodule

import (
	"archive/zip"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteProxyLaysOutAModuleAsGoDownloadsIt(t *testing.T) {
	root := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":               "module github.com/Example/lib\n\ngo 1.26.0\n",
		"lib.go":               "package lib\n",
		"sub/sub.go":           "package sub\n",
		"nested/go.mod":        "module github.com/Example/lib/nested\n",
		"nested/n.go":          "package nested\n",
		".git/HEAD":            "ref: refs/heads/main\n",
		"docs/guide.md":        "# guide\n",
		"vendor/modules.txt":   "",
		"sub/testdata/in.json": "{}",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	proxy := t.TempDir()
	module, err := WriteProxy(proxy, root, "v0.1.0")
	require.NoError(t, err)
	assert.Equal(t, "github.com/Example/lib", module)

	dir := filepath.Join(proxy, "github.com", "!example", "lib", "@v")
	list, err := os.ReadFile(filepath.Join(dir, "list"))
	require.NoError(t, err)
	assert.Equal(t, "v0.1.0\n", string(list))
	mod, err := os.ReadFile(filepath.Join(dir, "v0.1.0.mod"))
	require.NoError(t, err)
	assert.Contains(t, string(mod), "module github.com/Example/lib")

	zr, err := zip.OpenReader(filepath.Join(dir, "v0.1.0.zip"))
	require.NoError(t, err)
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	assert.Equal(t, []string{
		"github.com/Example/lib@v0.1.0/docs/guide.md",
		"github.com/Example/lib@v0.1.0/go.mod",
		"github.com/Example/lib@v0.1.0/lib.go",
		"github.com/Example/lib@v0.1.0/sub/sub.go",
		"github.com/Example/lib@v0.1.0/sub/testdata/in.json",
	}, names, "no .git, no vendor, no nested module")
}
