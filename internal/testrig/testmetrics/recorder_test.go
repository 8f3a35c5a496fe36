package testmetrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRecorderKeepsEveryValueInOrder(t *testing.T) {
	var r Recorder
	assert.Equal(t, -1.0, r.Last("lists"), "nothing recorded yet")
	r.Metric("lists").Inc()
	r.Metric("lists").Inc()
	r.Metric("rv").Set(7)
	r.Metric("took").Observe(0.5)
	r.Labeled("events").Inc("ADDED")
	assert.Equal(t, []float64{1, 1}, r.Values("lists"))
	assert.Equal(t, 7.0, r.Last("rv"))
	assert.Equal(t, []float64{1}, r.Values("events{ADDED}"))
	assert.Equal(t, "events{ADDED}×1=1 lists×2=1 rv×1=7 took×1=0.5", r.String())
}
