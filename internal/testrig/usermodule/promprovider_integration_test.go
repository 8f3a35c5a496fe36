package usermodule

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

// The metrics program of docs/use-in-your-module.md, in a fresh module: it `go get`s the
// promprovider module — a nested module of this repository, served by the proxy as its
// own module, as the go command fetches it for a user — builds, caches a namespace's
// ConfigMaps on a real kube-apiserver and serves their metrics under the library's names.
func TestTheMetricsProgramWithThePrometheusModuleInAModuleOfItsOwn(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Profile: testenv.APIServer})
	binDir, err := testenv.BinDir()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	work := t.TempDir()
	app, goTool, goEnv, modules := userModule(t, ctx, work, "cmmetrics", "<!-- usermodule:metrics.go -->", "promprovider")
	module := modules[1]
	require.Equal(t, "github.com/kubeinternals/informers/promprovider", module)
	gomod := goGet(t, ctx, app, goTool, goEnv, "example.com/cmmetrics", module)
	assert.Contains(t, gomod, module+" v0.1.0")
	assert.Contains(t, gomod, "github.com/kubeinternals/informers v0.1.0", "the library at the release the provider's go.mod names")
	assert.Contains(t, run(t, ctx, app, goEnv, goTool, "list", "-m", "all"), "github.com/prometheus/client_golang", "asked for, Prometheus is in the graph")
	run(t, ctx, app, goEnv, goTool, "build", "-trimpath", "-o", "cmmetrics", ".")

	kubectlEnv := []string{"KUBECONFIG=" + env.Kubeconfig}
	kubectl := filepath.Join(binDir, "kubectl")
	run(t, ctx, app, kubectlEnv, kubectl, "create", "namespace", "metrics")
	run(t, ctx, app, kubectlEnv, kubectl, "-n", "metrics", "create", "configmap", "one", "--from-literal=a=b")
	out, stop := startProgram(t, ctx, work, filepath.Join(app, "cmmetrics"), kubectlEnv, "-namespace", "metrics", "-metrics-addr", "127.0.0.1:0")

	waitOutput(t, out, "cache synced")
	m := regexp.MustCompile(`msg="serving metrics" addr=(\S+)`).FindStringSubmatch(out.String())
	require.NotNil(t, m, "the program logs where it serves:\n%s", out)
	var scraped string
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + m[1] + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		scraped = string(body)
		return strings.Contains(scraped, `workqueue_adds_total{name="configmaps"} 1`)
	}, 30*time.Second, 50*time.Millisecond, "the handler queued the one ConfigMap")
	for _, line := range []string{
		`reflector_lists_total{name="configmaps"} 1`,
		`informer_handler_duration_seconds_count{handler="enqueue",name="configmaps"} 1`,
		`workqueue_depth{name="configmaps"} 1`,
	} {
		assert.Contains(t, scraped, line+"\n")
	}

	stop()
	assert.Contains(t, out.String(), "stopped")
	assert.NotContains(t, out.String(), "level=ERROR")
}
