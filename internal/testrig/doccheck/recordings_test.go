package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/trace"
)

// recordedFigure is a figure a page quotes from one of docs/recordings: the sentence's
// pattern (its one group is the figure, in seconds) and how to compute it from the
// recording's events.
type recordedFigure struct {
	page, pattern, recording string
	compute                  func(events []trace.Event) (time.Duration, error)
}

// recordedFigures lists every figure a page quotes from a recording.
var recordedFigures = []recordedFigure{
	{
		page:      "docs/08-leader-election.md",
		pattern:   `the standby took over ([0-9.]+) s later in the recorded run`,
		recording: "docs/recordings/leader-election.jsonl.gz",
		compute: func(events []trace.Event) (time.Duration, error) {
			// From the SIGKILL of the leader to the next acquisition.
			var killed time.Time
			for _, e := range events {
				switch {
				case e.Kind == trace.Action && strings.HasPrefix(e.Detail, "SIGKILL"):
					killed = e.Time
				case e.Kind == trace.LeaseAcquired && !killed.IsZero():
					return e.Time.Sub(killed), nil
				}
			}
			return 0, fmt.Errorf("no SIGKILL followed by an acquisition")
		},
	},
}

// TestFiguresQuotedFromARecordingAreInIt: a figure a page quotes from a recording is
// what the committed recording shows, to the tenth of a second it is written with.
func TestFiguresQuotedFromARecordingAreInIt(t *testing.T) {
	for _, f := range recordedFigures {
		t.Run(f.page+": "+f.pattern, func(t *testing.T) {
			m := regexp.MustCompile(f.pattern).FindStringSubmatch(strings.Join(strings.Fields(read(t, f.page)), " "))
			require.NotNil(t, m, "the page no longer quotes it: update recordedFigures")
			file, err := os.Open(filepath.Join(repoRoot, f.recording))
			require.NoError(t, err)
			defer file.Close()
			_, events, err := trace.ReadRecording(file)
			require.NoError(t, err)
			got, err := f.compute(events)
			require.NoError(t, err)
			assert.Equal(t, fmt.Sprintf("%.1f", got.Seconds()), m[1], "%s says %s s; %s shows %v", f.page, m[1], f.recording, got)
		})
	}
}
