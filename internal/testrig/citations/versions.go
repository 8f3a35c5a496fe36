package citations

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Versions are the releases this repository is built and checked against: client-go's
// version from the root go.mod and the control plane's Kubernetes version from
// hack/controlplane/go.mod. They are written there and nowhere else; every other
// mention of a version in a page or a comment must agree with them, which
// VersionMentions checks.
type Versions struct {
	ClientGo   string // v0.37.2
	Kubernetes string // v1.37.2
}

// Minor is the release a version belongs to as people say it: "1.37" for v0.37.2 and
// for v1.37.2.
func Minor(version string) string {
	parts := strings.Split(strings.TrimPrefix(version, "v"), ".")
	if len(parts) < 2 {
		return version
	}
	return "1." + parts[1]
}

var kubernetesRequire = regexp.MustCompile(`(?m)k8s\.io/kubernetes (v1\.\d+\.\d+)`)

// KubernetesVersion reads the k8s.io/kubernetes version a go.mod requires.
func KubernetesVersion(gomod string) (string, error) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	m := kubernetesRequire.FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("%s requires no k8s.io/kubernetes vX.Y.Z", gomod)
	}
	return string(m[1]), nil
}

// A mention is a phrase that names the release of client-go or of the Kubernetes
// control plane. Each pattern's first group is the version it names; check says what
// it must be instead, or "" when it is right.
type mention struct {
	re    *regexp.Regexp
	check func(v Versions, found []string) (want string)
}

// equal is a check that the version found is want(v).
func equal(want func(Versions) string) func(Versions, []string) string {
	return func(v Versions, found []string) string {
		if w := want(v); found[1] != w {
			return w
		}
		return ""
	}
}

var mentions = []mention{
	// "client-go v0.37.2", "client-go@v0.37.2/", "code-generator@v0.37.2": the exact release.
	{regexp.MustCompile(`client-go[ @](v0\.\d+\.\d+)`), equal(func(v Versions) string { return v.ClientGo })},
	{regexp.MustCompile(`k8s\.io/[a-z/-]+@(v0\.\d+\.\d+)`), equal(func(v Versions) string { return v.ClientGo })},
	{regexp.MustCompile(`code-generator (v0\.\d+\.\d+)`), equal(func(v Versions) string { return v.ClientGo })},
	// "client-go 1.37's": the release line; "client-go 1.35+" (since 1.35) holds for
	// any release up to the pinned one.
	{regexp.MustCompile(`client-go (1\.\d+)\b(\+?)`), func(v Versions, found []string) string {
		pinned := Minor(v.ClientGo)
		if found[2] == "+" {
			if minorNumber(found[1]) > minorNumber(pinned) {
				return "at most " + pinned
			}
			return ""
		}
		if found[1] != pinned {
			return pinned
		}
		return ""
	}},
	// "(v0.37.x)", "(today v0.37)": the k8s.io/* requirement line.
	{regexp.MustCompile(`\b(v0\.\d+)(?:\.x|\))`), equal(func(v Versions) string { return "v0." + strings.TrimPrefix(Minor(v.ClientGo), "1.") })},
	// "kube-apiserver v1.37.2", "Kubernetes v1.37.2", "controlplane-v1.37.2": the
	// control plane (a Kubernetes minor is two digits; other modules' v1.x.y are in
	// go.mod files, which are not read).
	{regexp.MustCompile(`\b(v1\.[1-9]\d\.\d+)\b`), equal(func(v Versions) string { return v.Kubernetes })},
	{regexp.MustCompile(`kube-apiserver (v1\.\d+)\b`), equal(func(v Versions) string { return "v" + Minor(v.Kubernetes) })},
	{regexp.MustCompile(`kind (1\.\d+)\b`), equal(func(v Versions) string { return Minor(v.Kubernetes) })},
}

// minorNumber is 37 for "1.37".
func minorNumber(release string) int {
	n := 0
	fmt.Sscanf(strings.TrimPrefix(release, "1."), "%d", &n)
	return n
}

// historyPages tell the story of past and coming releases; a version there is a fact
// about that release, not a claim about the pinned one. bench/RESULTS.md is the record
// of one run, at the versions its header names. This package's own test names stale
// versions on purpose.
var historyPages = map[string]bool{
	"bench/RESULTS.md": true,
	"docs/upstream.md": true,
	"internal/testrig/citations/versions_test.go": true,
}

// VersionMentions returns every mention of a release below root, in pages, comments and
// scripts, that differs from v, as "file:line: found …, want …". go.mod and go.sum
// files (where the versions are written, and where unrelated modules have their own
// v1.x.y), recordings and history pages are not read.
func VersionMentions(root string, v Versions) ([]string, error) {
	var wrong []string
	var prev string // the line before, in the same file
	exts := []string{".go", ".md", ".sh", "Makefile", ".yaml", ".html", ".js"}
	_, err := walk(root, exts, func(rel string, n int, line string) []Citation {
		if n == 1 {
			prev = ""
		}
		if historyPages[filepath.ToSlash(rel)] {
			return nil
		}
		text := line
		// A mention wrapped after "client-go" ("… client-go\n// 1.37's …") is read
		// as one.
		if strings.HasSuffix(strings.TrimSpace(prev), "client-go") {
			if first := strings.Fields(strings.TrimLeft(line, "/#*-> \t")); len(first) > 0 {
				text = "client-go " + first[0] + " " + line
			}
		}
		prev = line
		for _, found := range staleMentions(text, v) {
			wrong = append(wrong, fmt.Sprintf("%s:%d: %s", rel, n, found))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return wrong, nil
}

// staleMentions lists the mentions in line that differ from v.
func staleMentions(line string, v Versions) []string {
	var out []string
	for _, m := range mentions {
		for _, g := range m.re.FindAllStringSubmatch(line, -1) {
			if want := m.check(v, g); want != "" {
				out = append(out, fmt.Sprintf("%q names %s, want %s", g[0], g[1], want))
			}
		}
	}
	return out
}
