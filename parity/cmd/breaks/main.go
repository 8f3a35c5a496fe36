// Command breaks shows that the parity suite catches a broken rule: for each file in
// parity/breaks, it breaks one rule of one component — an exact text replaced in one
// source file of the library, given to the compiler as an overlay, so the tree is never
// modified — and runs the one differential test the break names. The test must fail
// with a divergence report (a build error does not count). A break whose old text is no
// longer in its file is stale and fails too: the rule moved, and the break must follow.
//
//	cd parity && go run ./cmd/breaks            # every break
//	cd parity && go run ./cmd/breaks -v dedup   # breaks whose name matches, full reports
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// A break is one parsed .break file.
type breakFile struct {
	name, rule, file, test, old, new string
}

// caught is what every divergence report starts with (internal/check Report).
const caught = "parity: seed "

func main() {
	verbose := flag.Bool("v", false, "print each failing test's whole output")
	flag.Parse()
	var match *regexp.Regexp
	if flag.NArg() > 0 {
		match = regexp.MustCompile(flag.Arg(0))
	}
	if err := run(match, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "breaks:", err)
		os.Exit(1)
	}
}

func run(match *regexp.Regexp, verbose bool) error {
	paths, err := filepath.Glob("breaks/*.break")
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return errors.New("no breaks/*.break here: run from the parity directory")
	}
	tmp, err := os.MkdirTemp("", "parity-breaks-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	failed := 0
	ran := 0
	for _, path := range paths {
		b, err := parse(path)
		if err != nil {
			return err
		}
		if match != nil && !match.MatchString(b.name) {
			continue
		}
		ran++
		out, err := try(b, tmp)
		if err != nil {
			failed++
			fmt.Printf("NOT CAUGHT %s — %s\n    %v\n", b.name, b.rule, err)
			continue
		}
		fmt.Printf("caught     %s — %s (%s fails)\n", b.name, b.rule, b.test)
		if verbose {
			fmt.Println(indent(out))
		} else {
			fmt.Println(indent(report(out[strings.Index(out, caught):])))
		}
	}
	if ran == 0 {
		return fmt.Errorf("no break matches %v", match)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d breaks were not caught", failed, ran)
	}
	fmt.Printf("%d breaks, every one caught\n", ran)
	return nil
}

// try applies b through an overlay and runs its test; it returns the test's output if
// the test failed with a divergence report, and an error otherwise.
func try(b breakFile, tmp string) (string, error) {
	source, err := filepath.Abs(filepath.Join("..", b.file))
	if err != nil {
		return "", err
	}
	text, err := os.ReadFile(source)
	if err != nil {
		return "", err
	}
	if n := strings.Count(string(text), b.old); n != 1 {
		return "", fmt.Errorf("stale: the old text occurs %d times in %s, want once", n, b.file)
	}
	broken := filepath.Join(tmp, b.name+".go")
	if err := os.WriteFile(broken, []byte(strings.Replace(string(text), b.old, b.new, 1)), 0o644); err != nil {
		return "", err
	}
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {source: broken}})
	overlayPath := filepath.Join(tmp, b.name+".json")
	if err := os.WriteFile(overlayPath, overlay, 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command("go", "test", "-count=1", "-overlay", overlayPath, "-run", "^"+b.test+"$", ".")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	switch {
	case err == nil:
		return "", fmt.Errorf("%s passed with the rule broken", b.test)
	case !strings.Contains(out.String(), caught):
		return "", fmt.Errorf("%s failed without a divergence report:\n%s", b.test, indent(firstLines(out.String(), 20)))
	}
	return out.String(), nil
}

// parse reads a .break file: its first comment line (#) is the rule, then "file:" and "test:"
// lines, then the old text after a "--- old" line and the new after "--- new".
func parse(path string) (breakFile, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return breakFile{}, err
	}
	b := breakFile{name: strings.TrimSuffix(filepath.Base(path), ".break")}
	head, rest, ok := strings.Cut(string(raw), "--- old\n")
	old, new, ok2 := strings.Cut(rest, "--- new\n")
	if !ok || !ok2 {
		return b, fmt.Errorf("%s: want a \"--- old\" line, then a \"--- new\" line", path)
	}
	b.old, b.new = old, new
	for _, line := range strings.Split(head, "\n") {
		switch {
		case strings.HasPrefix(line, "#") && b.rule == "":
			b.rule = strings.TrimSpace(strings.TrimPrefix(line, "#")) // the first comment line, as docs/parity.md's table quotes it
		case strings.HasPrefix(line, "file:"):
			b.file = strings.TrimSpace(strings.TrimPrefix(line, "file:"))
		case strings.HasPrefix(line, "test:"):
			b.test = strings.TrimSpace(strings.TrimPrefix(line, "test:"))
		}
	}
	if b.rule == "" || b.file == "" || b.test == "" || b.old == "" {
		return b, fmt.Errorf("%s: want a # rule, file:, test: and a non-empty old text", path)
	}
	return b, nil
}

// report cuts a test's output after the divergence report's replay line: the shrunk
// input and where the transcripts part, without the test binary's FAIL lines.
func report(out string) string {
	if i := strings.Index(out, "replay: "); i >= 0 {
		if j := strings.IndexByte(out[i:], '\n'); j >= 0 {
			return out[:i+j]
		}
	}
	return firstLines(out, 30)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}
