package incluster

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// BuildLine is the `go build` of a Dockerfile's build stage, split into its parts.
type BuildLine struct {
	// Env are the NAME=value assignments before `go`, e.g. CGO_ENABLED=0.
	Env []string
	// Flags are the arguments between `build` and the package, without -o and its value.
	Flags []string
	// Output is the value of -o; Package the package built.
	Output, Package string
	// GoImage is the build stage's base image, e.g. golang:1.26.
	GoImage string
}

// ParseDockerfile finds the `RUN … go build …` line and the `FROM golang:…` of the build
// stage. Continuation lines (a trailing backslash) are joined first.
func ParseDockerfile(dockerfile []byte) (BuildLine, error) {
	var b BuildLine
	var lines []string
	var cur strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(dockerfile))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(rest + " ")
			continue
		}
		cur.WriteString(line)
		lines = append(lines, cur.String())
		cur.Reset()
	}
	found := false
	for _, line := range lines {
		fields := strings.Fields(line)
		if len(fields) >= 2 && strings.EqualFold(fields[0], "FROM") && strings.HasPrefix(fields[1], "golang:") {
			b.GoImage = fields[1]
		}
		if len(fields) == 0 || !strings.EqualFold(fields[0], "RUN") || !strings.Contains(line, "go build") {
			continue
		}
		if found {
			return BuildLine{}, fmt.Errorf("dockerfile: more than one RUN with go build")
		}
		found = true
		words, err := splitWords(strings.TrimSpace(line[len(fields[0]):]))
		if err != nil {
			return BuildLine{}, fmt.Errorf("dockerfile: %q: %w", line, err)
		}
		i := 0
		for ; i < len(words) && strings.Contains(words[i], "=") && words[i] != "go"; i++ {
			b.Env = append(b.Env, words[i])
		}
		if i+1 >= len(words) || words[i] != "go" || words[i+1] != "build" {
			return BuildLine{}, fmt.Errorf("dockerfile: %q: expected [NAME=value …] go build …", line)
		}
		args := words[i+2:]
		for j := 0; j < len(args); j++ {
			switch {
			case args[j] == "-o" && j+1 < len(args):
				b.Output = args[j+1]
				j++
			case strings.HasPrefix(args[j], "-"):
				b.Flags = append(b.Flags, args[j])
			case b.Package == "":
				b.Package = args[j]
			default:
				return BuildLine{}, fmt.Errorf("dockerfile: %q: more than one package", line)
			}
		}
		if b.Package == "" || b.Output == "" {
			return BuildLine{}, fmt.Errorf("dockerfile: %q: needs -o and a package", line)
		}
	}
	if !found {
		return BuildLine{}, fmt.Errorf("dockerfile: no RUN line with go build")
	}
	if b.GoImage == "" {
		return BuildLine{}, fmt.Errorf("dockerfile: no FROM golang:… build stage")
	}
	return b, nil
}

// splitWords splits a shell command line into words, honouring single and double quotes
// (enough for a Dockerfile's RUN line; no variables, no escapes inside single quotes).
func splitWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case r == '&' || r == ';' || r == '|':
			return nil, fmt.Errorf("shell operators are not supported")
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// DockerfileBuild runs the go build line of the Dockerfile at path (relative to the
// repository root) with Build: a plain go build with the same environment and flags,
// whose result must be static (the distroless/static base has no libc).
func DockerfileBuild(t testing.TB, path string) (binary string, line BuildLine) {
	t.Helper()
	root := RepoRoot()
	data, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatalf("reading the Dockerfile: %v", err)
	}
	line, err = ParseDockerfile(data)
	if err != nil {
		t.Fatal(err)
	}
	return Build(t, line), line
}

// Build runs line's go build from the repository root, with its environment and flags,
// into a temporary file named like line.Output, checks that the result is a statically
// linked executable, and returns its path.
func Build(t testing.TB, line BuildLine) (binary string) {
	t.Helper()
	binary = filepath.Join(t.TempDir(), filepath.Base(line.Output))
	args := append(append([]string{"build"}, line.Flags...), "-o", binary, line.Package)
	cmd := exec.Command("go", args...) // the go on PATH: the one running this test
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), line.Env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s go %s: %v\n%s", strings.Join(line.Env, " "), strings.Join(args, " "), err, out)
	}
	if err := checkStatic(binary); err != nil {
		t.Fatal(err)
	}
	return binary
}

// checkStatic returns an error unless path is an ELF executable with no interpreter and
// no shared libraries.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked (it has an ELF interpreter): it would not start on a static base image", path)
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		return fmt.Errorf("%s needs shared libraries %v: it would not start on a static base image", path, libs)
	}
	return nil
}

// RepoRoot is the root of this repository, found from this source file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}
