package steptest

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/internal/testrig/markdown"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

// Sample returns the sample output a README shows: the lines of the first fenced code
// block after the first line of readme that contains marker. Lines starting with "time="
// are left out: they are the logger's, written by the program's main, which a test
// calling run does not see.
func Sample(t *testing.T, readme, marker string) []string {
	t.Helper()
	page, err := os.ReadFile(readme)
	require.NoError(t, err)
	block, err := markdown.BlockAfter(string(page), marker)
	require.NoError(t, err, readme)
	var lines []string
	for line := range strings.Lines(block) {
		if !strings.HasPrefix(line, "time=") {
			lines = append(lines, strings.TrimSuffix(line, "\n"))
		}
	}
	require.NotEmpty(t, lines, "%s: the block after %q is empty", readme, marker)
	return lines
}

// sampleValue matches what differs between two runs of the same program: the numbers of
// resourceVersions ("rv=58", "rv 58", "→58") and slog timestamps.
var sampleValue = regexp.MustCompile(`(rv=|rv |→)\d+|time=\S+`)

// lineRegexp turns one sample line into a regular expression for one output line: "…"
// stands for any text, and each value sampleValue matches stands for any value of its
// kind.
func lineRegexp(line string) *regexp.Regexp {
	parts := strings.Split(line, "…")
	for i, p := range parts {
		p = regexp.QuoteMeta(p)
		parts[i] = sampleValue.ReplaceAllStringFunc(p, func(v string) string {
			if strings.HasPrefix(v, "time=") {
				return `time=\S+`
			}
			return strings.TrimRight(v, "0123456789") + `\d+`
		})
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// T is what the sample assertions need of a *testing.T.
type T interface {
	assert.TestingT
	Helper()
}

// AssertSampleInOrder checks that the sample's lines match lines of output, in the same
// order (other output lines may come between them).
func AssertSampleInOrder(t T, sample []string, output string) {
	t.Helper()
	out := strings.Split(output, "\n")
	next := 0
	for _, line := range sample {
		re := lineRegexp(line)
		for next < len(out) && !re.MatchString(out[next]) {
			next++
		}
		if !assert.Less(t, next, len(out), "sample line %q has no match after the ones before it in the output:\n%s", line, output) {
			return
		}
		next++
	}
}

// AssertSampleAnyOrder checks that each of the sample's lines matches some line of
// output. Why: lines written by different goroutines (two handlers) interleave
// differently from run to run.
func AssertSampleAnyOrder(t T, sample []string, output string) {
	t.Helper()
	out := strings.Split(output, "\n")
	for _, line := range sample {
		re := lineRegexp(line)
		assert.True(t, func() bool {
			for _, o := range out {
				if re.MatchString(o) {
					return true
				}
			}
			return false
		}(), "sample line %q has no match in the output:\n%s", line, output)
	}
}

// DefaultNamespace starts a fresh API server (testenv's APIServer profile) set up as the
// READMEs' runs found their cluster: the default namespace exists and holds a ConfigMap
// kube-root-ca.crt with the key ca.crt. It returns the config, a context that ends after
// a minute (or when the test ends), and a core/v1 client.
//
// Why the ConfigMap is made here: on kind or `make cluster`, kube-controller-manager puts
// kube-root-ca.crt into every namespace; the APIServer profile runs no
// kube-controller-manager.
func DefaultNamespace(t *testing.T) (*rest.Config, context.Context, rest.Interface) {
	t.Helper()
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	core := coreClient(t, env.Config)
	// The apiserver creates the default namespace shortly after it is ready.
	require.Eventually(t, func() bool {
		return core.Get().Resource("namespaces").Name(metav1.NamespaceDefault).Do(ctx).Error() == nil
	}, 30*time.Second, 50*time.Millisecond, "the default namespace never appeared")
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt", Namespace: metav1.NamespaceDefault},
		Data:       map[string]string{"ca.crt": "-----BEGIN CERTIFICATE-----\n…\n-----END CERTIFICATE-----\n"},
	}
	require.NoError(t, core.Post().Namespace(metav1.NamespaceDefault).Resource("configmaps").Body(cm).Do(ctx).Error())
	InWatchCache(t, ctx, core, metav1.NamespaceDefault, cm.Name)
	return env.Config, ctx, core
}
