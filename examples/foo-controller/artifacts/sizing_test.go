package artifacts

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/kubeinternals/informers/internal/testrig/sampleobjects"
)

// TestDeploymentYAMLIsSizedAsTheSizingPageSays redoes docs/sizing.md's arithmetic for
// foo-controller from the page's own table and bounds — a Deployment counted as a
// whole Pod, a Foo as a whole ConfigMap, the floor F, the cluster it is sized for —
// and checks the figures the page prints and the memory request, limit and
// GOMEMLIMIT of deployment.yaml.
func TestDeploymentYAMLIsSizedAsTheSizingPageSays(t *testing.T) {
	raw, err := os.ReadFile("../../../docs/sizing.md")
	require.NoError(t, err)
	// One space for every run of white space: a figure may be wrapped over two lines.
	page := strings.Join(strings.Fields(string(raw)), " ")
	has := func(figure string) {
		t.Helper()
		assert.True(t, strings.Contains(page, figure), "docs/sizing.md does not say %q", figure)
	}
	number := func(pattern string) float64 {
		t.Helper()
		m := regexp.MustCompile(pattern).FindStringSubmatch(page)
		require.NotNil(t, m, "docs/sizing.md has no match for %s", pattern)
		v, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
		require.NoError(t, err)
		return v
	}
	const mib = 1 << 20
	table, err := sampleobjects.BytesPerCachedObject(raw)
	require.NoError(t, err)
	pod, configMap := table["Pod/whole"], table["ConfigMap/whole"]
	deployments := number(`for a cluster of up to ([0-9,]+) Deployments`)
	foos := number(`Deployments and ([0-9,]+) Foos`)
	floor := number("- `F`, [^.]* at most ([0-9]+) MiB")

	cache := (deployments*pod + foos*configMap) / mib
	largest := deployments * pod / mib
	request := floor + 2*cache
	limit := floor + 2*(cache+largest)
	for _, figure := range []string{
		fmt.Sprintf("= %.1f MiB; the largest resource, the Deployments: %.1f MiB", cache, largest),
		fmt.Sprintf("`F + 2 × C` = %.1f MiB", request),
		fmt.Sprintf("`F + 2 × (C + %.1f)` = %.1f MiB", largest, limit),
		fmt.Sprintf("add %.1f MiB to the limit", 4*1000*pod/mib),
	} {
		has(figure)
	}
	wantRequest := math.Ceil(request/16) * 16
	wantLimit := math.Ceil(limit/16) * 16
	has(fmt.Sprintf("**%.0fMi**; the", wantRequest))
	has(fmt.Sprintf("**%.0fMi**; `GOMEMLIMIT`", wantLimit))
	has(fmt.Sprintf("**%.0fMiB**", math.Floor(0.9*wantLimit)))

	var d appsv1.Deployment
	require.NoError(t, yaml.UnmarshalStrict(Deployment(), &d))
	c := d.Spec.Template.Spec.Containers[0]
	assert.True(t, c.Resources.Requests.Memory().Equal(resource.MustParse(fmt.Sprintf("%.0fMi", wantRequest))),
		"deployment.yaml's memory request %v", c.Resources.Requests.Memory())
	assert.True(t, c.Resources.Limits.Memory().Equal(resource.MustParse(fmt.Sprintf("%.0fMi", wantLimit))),
		"deployment.yaml's memory limit %v", c.Resources.Limits.Memory())
	assert.Contains(t, c.Env, corev1.EnvVar{Name: "GOMEMLIMIT", Value: fmt.Sprintf("%.0fMiB", math.Floor(0.9*wantLimit))})
}
