//go:build !replayonly

package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/examples/foo-controller/controller"
)

// TestLivePage: what the page shows of a live explorer, which the replay-only build
// does not compile: the buttons and the pipeline control.
func TestLivePage(t *testing.T) {
	t.Run("the page carries this run's token and a button for every action", func(t *testing.T) {
		ts := startTestServer(t, true, nil)
		code, body := do(t, mustGet(t, ts.URL+"/"))
		require.Equal(t, 200, code)
		assert.Contains(t, body, `<meta name="explore-token" content="`+ts.token+`">`)
		assert.Len(t, ts.token, 32)
		for _, a := range actions() {
			tag := regexp.MustCompile(`id="act-` + a.Name + `"[^>]*>`).FindString(body)
			require.NotEmpty(t, tag, a.Name)
			assert.NotContains(t, tag, "disabled", "%s: every button works on the local cluster", a.Name)
		}
	})
	t.Run("the pipeline control names the running pipeline and offers the other; repeat waits for an action", func(t *testing.T) {
		ts := startTestServer(t, true, nil)
		require.NoError(t, ts.runner.begin(controller.ClassicPipeline))
		_, body := do(t, mustGet(t, ts.URL+"/"))
		assert.Contains(t, body, `id="pipeline-now" class="pipeline-now" data-pipeline="classic">pipeline: <strong>DeltaFIFO fed by a paged LIST (the classic one most write-ups describe)</strong>`)
		tag := func(id string) string {
			t.Helper()
			tag := regexp.MustCompile(`id="` + id + `"[^>]*>`).FindString(body)
			require.NotEmpty(t, tag, id)
			return tag
		}
		assert.Contains(t, tag("pipeline-classic"), "disabled", "the running pipeline's button is off")
		assert.NotContains(t, tag("pipeline-default"), "disabled")
		assert.Contains(t, tag("pipeline-default"), `data-pipeline="default"`)
		assert.Contains(t, tag("repeat-last"), "disabled", "nothing to repeat yet")
		for _, p := range controller.Pipelines {
			assert.Contains(t, body, "<b>"+string(p)+"</b>, "+labelOf(p, 0).Text, "the control says what each pipeline is")
		}
	})
	t.Run("on a $KUBECONFIG cluster the fault buttons are disabled, with the reason", func(t *testing.T) {
		ts := startTestServer(t, false, nil)
		_, body := do(t, mustGet(t, ts.URL+"/"))
		for _, a := range actions() {
			re := regexp.MustCompile(`id="act-` + a.Name + `"[^>]*>`)
			tag := re.FindString(body)
			require.NotEmpty(t, tag, a.Name)
			assert.Equal(t, a.Fault, strings.Contains(tag, "disabled"), a.Name)
		}
		assert.Contains(t, body, "Fault buttons are off: needs the local control plane")
	})
}

// TestButtonLinksExist: every button's lab scenario and chapter section exist in this
// repository, so the page never links to nothing.
func TestButtonLinksExist(t *testing.T) {
	lab := headings(t, "../../docs/lab.md")
	for _, r := range pipelineReading {
		file, anchor, ok := strings.Cut(r, "#")
		require.True(t, ok, "the pipeline control's link %s names a section", r)
		assert.True(t, headings(t, "../../"+file)[anchor], "pipeline control: %s has no section #%s", file, anchor)
	}
	for _, a := range actions() {
		assert.True(t, lab[a.Lab], "%s: docs/lab.md has no scenario %q", a.Name, a.Lab)
		file, anchor, ok := strings.Cut(a.Chapter, "#")
		require.True(t, ok, "%s: the chapter link names a section", a.Name)
		assert.True(t, headings(t, "../../"+file)[anchor], "%s: %s has no section #%s", a.Name, file, anchor)
	}
}

// headings is the set of anchors of a Markdown file's headings, as GitHub makes them.
func headings(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]bool{}
	drop := regexp.MustCompile(`[^a-z0-9 _-]`)
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		out[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(text), ""), " ", "-")] = true
	}
	return out
}
