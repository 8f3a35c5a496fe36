package citations

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pinned returns the module cache's directories of the modules citations may name, at
// the versions this repository's go.mod selects (downloading them if needed), and
// client-go's version.
func pinned(t *testing.T) (dirs map[string]string, clientGo string) {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", "k8s.io/client-go", "k8s.io/apimachinery", "k8s.io/utils")
	cmd.Dir = "../../.."
	out, err := cmd.Output()
	require.NoError(t, err, "go mod download: %s", out)
	dirs = map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var m struct{ Path, Version, Dir, Error string }
		require.NoError(t, dec.Decode(&m))
		require.Empty(t, m.Error, "go mod download %s", m.Path)
		dirs[m.Path] = m.Dir
		if m.Path == "k8s.io/client-go" {
			clientGo = m.Version
		}
	}
	require.Len(t, dirs, 3)
	return dirs, clientGo
}

// TestEveryClientGoCitationNamesASymbolOfThePinnedRelease reads every
// "// client-go: file Symbol" line in the repository and checks the file and symbol in
// the client-go (and apimachinery, utils) that go.mod pins. After a bump it lists every
// stale citation at once.
func TestEveryClientGoCitationNamesASymbolOfThePinnedRelease(t *testing.T) {
	dirs, version := pinned(t)
	all, err := Scan("../../..")
	require.NoError(t, err)
	require.Greater(t, len(all), 300, "the scan found the repository's citations")
	stale, refs := (&Source{Dirs: dirs}).Stale(all)
	t.Logf("%d citations, %d references, checked against k8s.io/client-go %s", len(all), refs, version)
	assert.Empty(t, stale, "citations that do not match client-go %s (fix the file or symbol, or say what replaced it)", version)
}

// TestEveryClientGoFileAPageCitesExistsInThePinnedRelease does the same for the
// Markdown pages: every code span that names a client-go file, with or without symbols
// (`tools/cache/reflector.go Reflector.list`), is checked.
func TestEveryClientGoFileAPageCitesExistsInThePinnedRelease(t *testing.T) {
	dirs, version := pinned(t)
	all, err := ScanDocs("../../..")
	require.NoError(t, err)
	require.Greater(t, len(all), 200, "the scan found the pages' citations")
	stale, _ := (&Source{Dirs: dirs}).Stale(all)
	t.Logf("%d code spans cite client-go files, checked against k8s.io/client-go %s", len(all), version)
	assert.Empty(t, stale, "pages citing what client-go %s does not have", version)
}

func TestParseDocReadsOnlyClientGoPaths(t *testing.T) {
	for _, tc := range []struct {
		span string
		want []string // file symbol; nil when the span is no citation
	}{
		{"tools/cache/reflector.go Reflector.list", []string{"tools/cache/reflector.go Reflector.list"}},
		{"tools/cache/controller.go", []string{"tools/cache/controller.go "}},
		{"apimachinery/pkg/util/runtime/runtime.go logPanic (the same 64 KiB)", []string{"pkg/util/runtime/runtime.go logPanic"}},
		{"k8s.io/utils/buffer RingGrowing (used by tools/cache/shared_informer.go processorListener)", []string{"buffer RingGrowing"}},
		{"tools/cache/", nil},
		{"informer/listener.go", nil},
		{"k8s.io/client-go/rest", nil},
		{"go test ./...", nil},
	} {
		t.Run(tc.span, func(t *testing.T) {
			refs, ok, err := ParseDoc(tc.span)
			require.NoError(t, err)
			assert.Equal(t, tc.want != nil, ok)
			var got []string
			for _, r := range refs {
				got = append(got, r.File+" "+r.Symbol)
			}
			assert.Equal(t, tc.want, got)
		})
	}
	dirs, _ := pinned(t)
	refs, _, err := ParseDoc("tools/cache/fifo_metrics.go")
	require.NoError(t, err)
	assert.ErrorContains(t, (&Source{Dirs: dirs}).Check(refs[0]), "does not exist", "a file client-go no longer has fails")
}

func TestACitationOfASymbolThatDoesNotExistFails(t *testing.T) {
	dirs, version := pinned(t)
	src := &Source{Dirs: dirs}
	for _, tc := range []struct{ text, want string }{
		{"tools/cache/store.go NoSuchFunc", "declares no NoSuchFunc"},
		{"tools/cache/store.go cache.NoSuchMethod", "declares no cache.NoSuchMethod"},
		{"tools/cache/no_such_file.go Store", "no_such_file.go does not exist"},
		{"k8s.io/utils/no/such/pkg Thing", "no package no/such/pkg"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			refs, err := Parse(tc.text)
			require.NoError(t, err)
			require.Len(t, refs, 1)
			err = src.Check(refs[0])
			require.Error(t, err, "client-go %s", version)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	t.Run("the citations that do exist pass", func(t *testing.T) {
		for _, text := range []string{
			"tools/cache/store.go cache.Add",
			"tools/cache/store.go Store",
			"tools/cache/store.go KeyFunc",
			"tools/cache/reflector.go Reflector.watchList",
			"tools/cache/controller.go ResourceEventHandlerFuncs.AddFunc",
			"apimachinery/pkg/util/wait/backoff.go Backoff",
			"k8s.io/utils/buffer RingGrowing",
		} {
			refs, err := Parse(text)
			require.NoError(t, err, text)
			for _, r := range refs {
				assert.NoError(t, src.Check(r), text)
			}
		}
	})
}

func TestParseReadsFilesSymbolsAndStopsAtProse(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string // file symbol
	}{
		{"tools/cache/store.go cache.Add", []string{"k8s.io/client-go tools/cache/store.go cache.Add"}},
		{"tools/cache/listers.go ListAllByNamespace, ListAll", []string{
			"k8s.io/client-go tools/cache/listers.go ListAllByNamespace", "k8s.io/client-go tools/cache/listers.go ListAll"}},
		{"tools/cache/store.go cache.Replace, tools/cache/thread_safe_store.go threadSafeMap.Replace", []string{
			"k8s.io/client-go tools/cache/store.go cache.Replace", "k8s.io/client-go tools/cache/thread_safe_store.go threadSafeMap.Replace"}},
		{"tools/leaderelection/leaderelection.go LeaderElector.Check, healthzadaptor.go HealthzAdaptor", []string{
			"k8s.io/client-go tools/leaderelection/leaderelection.go LeaderElector.Check",
			"k8s.io/client-go tools/leaderelection/healthzadaptor.go HealthzAdaptor"}},
		{"util/workqueue/queue.go DefaultQueue; k8s.io/utils/buffer RingGrowing", []string{
			"k8s.io/client-go util/workqueue/queue.go DefaultQueue", "k8s.io/utils buffer RingGrowing"}},
		{"tools/cache/reflector.go Reflector.list (the pager.PageSize switch)", []string{
			"k8s.io/client-go tools/cache/reflector.go Reflector.list"}},
		{"informers/factory.go sharedInformerFactory.WaitForCacheSync, which skips", []string{
			"k8s.io/client-go informers/factory.go sharedInformerFactory.WaitForCacheSync"}},
		{"k8s.io/apimachinery/pkg/util/runtime/runtime.go HandleCrash", []string{
			"k8s.io/apimachinery pkg/util/runtime/runtime.go HandleCrash"}},
	} {
		t.Run(tc.text, func(t *testing.T) {
			refs, err := Parse(tc.text)
			require.NoError(t, err)
			var got []string
			for _, r := range refs {
				got = append(got, r.Module+" "+r.File+" "+r.Symbol)
			}
			assert.Equal(t, tc.want, got)
		})
	}
	_, err := Parse("AddEventHandlerWithOptions gets the same guarantee")
	assert.ErrorContains(t, err, "does not begin with a file and a symbol", "a citation starts with a file")
}
