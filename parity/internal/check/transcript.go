package check

import (
	"fmt"
	"strings"
)

// Transcript is what one library was seen doing, one line per observation, in order.
// Each side of a differential test writes its own, in the same words, so that equal
// behaviour gives equal lines.
type Transcript struct{ lines []string }

// Printf adds one observation.
func (t *Transcript) Printf(format string, args ...any) {
	t.lines = append(t.lines, fmt.Sprintf(format, args...))
}

// Lines returns the observations so far.
func (t *Transcript) Lines() []string { return t.lines }

// Transcripts compares ours with client-go's and returns nil if they are equal, or an
// error wrapping ErrDiverged that shows the first line where they part, with the lines
// before it for context.
func Transcripts(ours, clientGo *Transcript) error {
	a, b := ours.lines, clientGo.lines
	n := min(len(a), len(b))
	at := n
	for i := range n {
		if a[i] != b[i] {
			at = i
			break
		}
	}
	if at == n && len(a) == len(b) {
		return nil
	}
	var s strings.Builder
	for i := max(0, at-6); i < at; i++ {
		fmt.Fprintf(&s, "      both:      %s\n", a[i])
	}
	fmt.Fprintf(&s, "      ours:      %s\n", lineOrEnd(a, at))
	fmt.Fprintf(&s, "      client-go: %s", lineOrEnd(b, at))
	return fmt.Errorf("%w at observation %d:\n%s", ErrDiverged, at+1, s.String())
}

func lineOrEnd(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(nothing more)"
}
