package controller_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/leaderelection"
)

// seconds writes d as the pages do: "23.8 s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// TestTheFailoverFiguresThePagesQuoteAreTheTestsBounds: the README and chapter 8
// quote the takeover and handover bounds testFailover asserts (the elector's window
// for the flags' defaults, plus the log slack) and the times it measured, which must
// lie inside them.
func TestTheFailoverFiguresThePagesQuoteAreTheTestsBounds(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	require.NoError(t, err)
	chapter, err := os.ReadFile("../../../docs/08-leader-election.md")
	require.NoError(t, err)
	oneLine := func(b []byte) string { return strings.Join(strings.Fields(string(b)), " ") }
	r, c := oneLine(readme), oneLine(chapter)

	defaults := seconds(leaderelection.DefaultLeaseDuration) + " / " + seconds(leaderelection.DefaultRenewDeadline) +
		" / " + seconds(leaderelection.DefaultRetryPeriod)
	window := seconds(crashEarliest) + " – " + seconds(crashLatest)
	slacked := seconds(crashLatest+logSlack) + " and " + seconds(afterRelease+logSlack)
	for _, want := range []string{
		"defaults " + defaults,
		"(bound " + window + ")",
		"(bound ≤ " + seconds(afterRelease) + ")",
		"one second of slack, " + slacked,
	} {
		assert.True(t, strings.Contains(r, want), "README.md's failover row does not say %q", want)
	}
	for _, want := range []string{
		"with the defaults, " + strings.TrimSuffix(seconds(crashEarliest), " s") + " s to " + seconds(crashLatest),
		"at most `RetryPeriod·(1+JitterFactor)`, " + seconds(afterRelease),
		"| " + window + " |",
		"| ≤ " + seconds(afterRelease) + " |",
		"(" + slacked + ")",
		"one second of slack",
	} {
		assert.True(t, strings.Contains(c, want), "chapter 8's \"How long a takeover takes\" does not say %q", want)
	}
	assert.Equal(t, time.Second, logSlack, "the pages say one second")

	measured := func(page, pattern string) time.Duration {
		m := regexp.MustCompile(pattern).FindStringSubmatch(page)
		require.NotNil(t, m, "no measured figure matching %s", pattern)
		f, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		return time.Duration(f * float64(time.Second))
	}
	for _, takeover := range []time.Duration{
		measured(r, `([0-9.]+) s \(bound `+regexp.QuoteMeta(window)),
		measured(c, `takeover after .SIGKILL. of the leader \| ([0-9.]+) s \|`),
	} {
		assert.GreaterOrEqual(t, takeover, crashEarliest)
		assert.LessOrEqual(t, takeover, crashLatest+logSlack)
	}
	for _, handover := range []time.Duration{
		measured(r, `([0-9.]+) s from the release`),
		measured(c, `from the release to the new leader's workers\) \| ([0-9.]+) s \|`),
	} {
		assert.LessOrEqual(t, handover, afterRelease+logSlack)
	}
}
