// Package markdown reads the code blocks of this repository's Markdown pages, for the
// tests that check a page against what a program really does: a README's sample output
// (examples/internal/steptest) and the guide's program (internal/testrig/usermodule).
package markdown

import (
	"fmt"
	"strings"
)

// BlockAfter returns the body of the first fenced code block (``` or ```lang) that
// starts after the first line of page containing marker, without its fence lines.
func BlockAfter(page, marker string) (string, error) {
	found, inBlock := false, false
	var body strings.Builder
	for line := range strings.Lines(page) {
		fence := strings.HasPrefix(line, "```")
		switch {
		case !found:
			found = strings.Contains(line, marker)
		case !inBlock:
			inBlock = fence
		case fence:
			return body.String(), nil
		default:
			body.WriteString(line)
		}
	}
	if !found {
		return "", fmt.Errorf("no line contains %q", marker)
	}
	return "", fmt.Errorf("no complete fenced code block after %q", marker)
}
