package main

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/examples/internal/steptest"
	"github.com/kubeinternals/informers/internal/testenv"
)

func TestDemoTourObservesEveryStep(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Profile: testenv.Cluster})
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	var out steptest.Buffer
	log := slog.New(slog.NewTextHandler(&out, nil))

	require.NoError(t, fooTour(ctx, log, env.Config))
	text := out.String()
	t.Logf("demo narration:\n%s", text)

	for _, step := range []string{
		"step 1: CRD installed and Established",
		"step 2: foo-controller running",
		"step 3: created Foo",
		"step 4: the controller created the Deployment, owned by the Foo",
		`step 5: Foo status.availableReplicas reached spec.replicas" availableReplicas=1`,
		"step 6: scaled the Foo to 3 replicas",
		`step 6: Foo status.availableReplicas reached spec.replicas" availableReplicas=3`,
		"step 7: the Deployment is gone",
		"step 8: controller stopped",
	} {
		assert.Contains(t, text, step)
	}
	assert.Regexp(t, `(?s)step 7: the Deployment is gone.*step 8: controller stopped`, text, "the controller stops after the last step")
	assert.NotContains(t, text, "level=ERROR")
}
