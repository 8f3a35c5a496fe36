package usermodule

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/internal/testrig/markdown"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

// guide is the page whose program this test builds and runs.
const guide = "../../../docs/use-in-your-module.md"

// The program of docs/use-in-your-module.md, in a fresh module outside the repository,
// gets the library through the module system — `go get` from a module proxy serving this
// checkout — builds, and mirrors a ConfigMap on a real kube-apiserver, driven by the
// guide's own kubectl commands.
func TestTheGuidesProgramInAModuleOfItsOwn(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Profile: testenv.APIServer})
	binDir, err := testenv.BinDir()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	work := t.TempDir()
	app, goTool, goEnv, modules := userModule(t, ctx, work, "mirror", "<!-- usermodule:main.go -->")
	module := modules[0]
	require.Equal(t, "github.com/kubeinternals/informers", module)
	gomod := goGet(t, ctx, app, goTool, goEnv, "example.com/mirror", module)
	assert.Contains(t, gomod, module+" v0.1.0")
	graph := run(t, ctx, app, goEnv, goTool, "list", "-m", "all")
	assert.NotContains(t, graph, "prometheus", "an example-only dependency is in the user's module graph")
	begin := time.Now()
	run(t, ctx, app, goEnv, goTool, "build", "-trimpath", "-o", "mirror", ".")
	t.Logf("go build of the user's program: %s", time.Since(begin).Round(time.Second))

	// Run it as the guide says, against the test's apiserver.
	kubectlEnv := []string{"KUBECONFIG=" + env.Kubeconfig, "PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH")}
	kubectl := filepath.Join(binDir, "kubectl")
	run(t, ctx, app, kubectlEnv, kubectl, "create", "namespace", "mirror")
	out, stop := startProgram(t, ctx, work, filepath.Join(app, "mirror"), kubectlEnv, "-namespace", "mirror")

	waitOutput(t, out, "cache synced")
	assert.Contains(t, out.String(), `from=$KUBECONFIG`)
	run(t, ctx, app, kubectlEnv, kubectl, "-n", "mirror", "create", "configmap", "settings", "--from-literal=color=blue")
	run(t, ctx, app, kubectlEnv, kubectl, "-n", "mirror", "label", "configmap", "settings", "mirror=true")
	waitOutput(t, out, "mirrored key=mirror/settings")
	data := run(t, ctx, app, kubectlEnv, kubectl, "-n", "mirror", "get", "configmap", "settings-mirror", "-o", "jsonpath={.data}")
	assert.Equal(t, `{"color":"blue"}`, data)

	stop()
	assert.Contains(t, out.String(), "stopped")
	assert.NotContains(t, out.String(), "level=ERROR")
}

// startProgram runs bin with args and extra environment, its output in a file under
// dir; stop sends SIGTERM and requires a clean exit within 30s.
func startProgram(t *testing.T, ctx context.Context, dir, bin string, extraEnv []string, args ...string) (out fileOutput, stop func()) {
	t.Helper()
	// The program writes to a file, which the test reads while it runs: no shared buffer.
	logFile, err := os.Create(filepath.Join(dir, filepath.Base(bin)+".log"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = logFile.Close() })
	out = fileOutput(logFile.Name())
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), extraEnv...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	// Goroutine owned by this test: waits for the program, which stop's SIGTERM ends.
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return out, func() {
		t.Helper()
		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		select {
		case err := <-exited:
			require.NoError(t, err, "exit status after SIGTERM:\n%s", out)
		case <-time.After(30 * time.Second):
			t.Fatalf("the program did not stop within 30s of SIGTERM:\n%s", out)
		}
	}
}

// userModule makes dir/name a user's module directory holding, as main.go, the guide's
// program that follows marker, and serves this checkout's modules — the root, and each
// nested module named — from a file-based proxy at v0.1.0. It returns the directory,
// the go command, its environment (userEnv) and the modules' paths, the root's first.
func userModule(t *testing.T, ctx context.Context, dir, name, marker string, nested ...string) (app, goTool string, goEnv, modules []string) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command builds the user's module")
	proxy, modcache := filepath.Join(dir, "proxy"), filepath.Join(dir, "modcache")
	app = filepath.Join(dir, name)
	repo, err := filepath.Abs("../../..")
	require.NoError(t, err)
	for _, root := range append([]string{repo}, nested...) {
		if root != repo {
			root = filepath.Join(repo, root)
		}
		module, err := WriteProxy(proxy, root, "v0.1.0")
		require.NoError(t, err)
		modules = append(modules, module)
	}
	page, err := os.ReadFile(guide)
	require.NoError(t, err)
	program, err := markdown.BlockAfter(string(page), marker)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(app, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(app, "main.go"), []byte(program), 0o644))
	return app, goTool, userEnv(t, ctx, goTool, app, proxy, modcache), modules
}

// goGet does what a user does in app: go mod init path, go get module at the proxy's
// v0.1.0, go mod tidy. It returns the go.mod that results.
func goGet(t *testing.T, ctx context.Context, app, goTool string, goEnv []string, path, module string) string {
	t.Helper()
	run(t, ctx, app, goEnv, goTool, "mod", "init", path)
	run(t, ctx, app, goEnv, goTool, "get", module+"@v0.1.0")
	run(t, ctx, app, goEnv, goTool, "mod", "tidy")
	gomod, err := os.ReadFile(filepath.Join(app, "go.mod"))
	require.NoError(t, err)
	return string(gomod)
}

// userEnv is the go command's environment in a user's module at app: our modules only
// from the test's proxy; every other module from the machine's module cache (used as a
// second file proxy, for speed), else from the GOPROXY the machine already uses; a
// module cache of the user's own, so nothing of ours is already there.
func userEnv(t *testing.T, ctx context.Context, goTool, app, proxy, modcache string) []string {
	t.Helper()
	realCache := strings.TrimSpace(run(t, ctx, app, nil, goTool, "env", "GOMODCACHE"))
	upstream := strings.TrimSpace(run(t, ctx, app, nil, goTool, "env", "GOPROXY"))
	return []string{
		"GOPROXY=file://" + proxy + ",file://" + filepath.Join(realCache, "cache", "download") + "," + upstream,
		"GOMODCACHE=" + modcache,
		"GOFLAGS=-modcacherw", // so that t.TempDir can remove the module cache
		// Why off: the checksum database cannot know a version that exists only in this
		// test's proxy, and asking it needs the network.
		"GOSUMDB=off",
		"GOWORK=off",
		"GOTOOLCHAIN=local",
	}
}

// run runs a command in dir with extra environment and returns its standard output; a
// failure fails the test with everything it printed.
func run(t *testing.T, ctx context.Context, dir string, extraEnv []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), extraEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%s %s:\n%s%s", filepath.Base(name), strings.Join(args, " "), &stdout, &stderr)
	return stdout.String()
}

// fileOutput reads the output a program has written to a file so far.
type fileOutput string

func (f fileOutput) String() string {
	data, _ := os.ReadFile(string(f))
	return string(data)
}

func waitOutput(t *testing.T, out fileOutput, s string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), s) }, 60*time.Second, 50*time.Millisecond,
		"waiting for %q in the program's output:\n%s", s, out)
}
