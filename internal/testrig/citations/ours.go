package citations

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// Repo is what this repository's Go files declare, read once: the symbols of each
// package by its name (Name, Type.Member), the exported types that have members, and
// every Go file's base name and path.
// A page's code spans are checked against it by OwnStale.
type Repo struct {
	Packages map[string]map[string]bool
	Types    map[string]bool
	Files    map[string]bool // base names, and slash paths from the root
	// Embeds lists, by type name, the types it embeds (struct fields or interfaces
	// without a name), whose members it has too.
	Embeds map[string][]string
}

// ReadRepo parses every non-test Go file below root (skipping vendor, testdata and
// hidden directories).
func ReadRepo(root string) (*Repo, error) {
	r := &Repo{Packages: map[string]map[string]bool{}, Types: map[string]bool{}, Files: map[string]bool{}, Embeds: map[string][]string{}}
	s := &Source{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (strings.HasPrefix(name, ".") || name == "vendor" || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		r.Files[filepath.Base(p)] = true
		r.Files[filepath.ToSlash(rel)] = true
		if strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		r.readEmbeds(f)
		decls, err := s.declared(p)
		if err != nil {
			return err
		}
		pkg := r.Packages[f.Name.Name]
		if pkg == nil {
			pkg = map[string]bool{}
			r.Packages[f.Name.Name] = pkg
		}
		for d := range decls {
			pkg[d] = true
			if !strings.Contains(d, ".") && d[0] >= 'A' && d[0] <= 'Z' {
				// Only types can have members: a dotted name's head is a type.
				r.Types[d] = r.Types[d] || hasMembers(decls, d)
			}
		}
		return nil
	})
	return r, err
}

// readEmbeds records the types f's struct and interface types embed.
func (r *Repo) readEmbeds(f *ast.File) {
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		var fields *ast.FieldList
		switch t := spec.Type.(type) {
		case *ast.StructType:
			fields = t.Fields
		case *ast.InterfaceType:
			fields = t.Methods
		default:
			return false
		}
		for _, field := range fields.List {
			if len(field.Names) > 0 {
				continue
			}
			e := field.Type
			if star, ok := e.(*ast.StarExpr); ok {
				e = star.X
			}
			if sel, ok := e.(*ast.SelectorExpr); ok {
				e = sel.Sel
			}
			if name := receiverType(e); name != "" {
				r.Embeds[spec.Name.Name] = append(r.Embeds[spec.Name.Name], name)
			}
		}
		return false
	})
}

// has reports whether a type of this name, in any package, has member, its own or
// promoted from a type it embeds.
func (r *Repo) has(typ, member string, seen map[string]bool) bool {
	if seen[typ] {
		return false
	}
	seen[typ] = true
	for _, pkg := range r.Packages {
		if pkg[typ+"."+member] {
			return true
		}
	}
	for _, e := range r.Embeds[typ] {
		if r.has(e, member, seen) {
			return true
		}
	}
	return false
}

func hasMembers(decls map[string]bool, name string) bool {
	for d := range decls {
		if strings.HasPrefix(d, name+".") {
			return true
		}
	}
	return false
}

// symbolSpan is a code span that names a Go symbol: a.b or a.b.c, with "()" when it is
// called.
var symbolSpan = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)(?:\(\))?$`)

// fileSpan is a code span that names a Go file: x.go or dir/x.go.
var fileSpan = regexp.MustCompile(`^[a-z0-9_./-]+\.go$`)

// fileName is a span that looks like a.b but names a file or a host, not a symbol.
var fileName = regexp.MustCompile(`\.(yaml|json|md|mod|sum|sh|css|js|html|txt|key|pub|io|svc|com)$`)

// clientGoPackages are the client-go packages a page names by package: when a page
// writes `cache.X`, `workqueue.X` or `leaderelection.X` and this repository's package
// of that name does not declare X, client-go's may (the page then speaks of client-go).
var clientGoPackages = map[string]string{
	"cache":          "tools/cache",
	"workqueue":      "util/workqueue",
	"leaderelection": "tools/leaderelection",
	"record":         "tools/record",
	"rest":           "rest",
	"informers":      "informers",
}

// OwnStale checks the code spans of the Markdown pages below root that name something
// of this repository, and lists, as "page:line: why", each one the tree does not have:
//   - `pkg.Name` and `pkg.Type.Member`, where pkg is one of this repository's package
//     names: that package (or, for a name client-go's package also has, that one)
//     declares it;
//   - `Type.Member`, where Type is an exported type this repository declares: it, or
//     client-go's tools/cache, util/workqueue or tools/leaderelection type of that
//     name, has Member (an unexported type's `listener.run` is not read: many share a
//     name with client-go's);
//   - `x.go` and `dir/x.go`: a Go file of that name is in this repository, or in
//     client-go or apimachinery (for a bare name; paths of client-go's are
//     checked by ScanDocs).
//
// Spans inside fenced code blocks are not read. checked is how many spans were.
func (r *Repo) OwnStale(root string, cg *Source, cgFiles map[string]bool) (stale []string, checked int, err error) {
	inFence := map[string]bool{}
	_, err = walk(root, []string{".md"}, func(rel string, n int, line string) []Citation {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence[rel] = !inFence[rel]
		}
		if inFence[rel] {
			return nil
		}
		for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
			why, ok := r.check(filepath.ToSlash(rel), m[1], cg, cgFiles)
			if !ok {
				continue
			}
			checked++
			if why != "" {
				stale = append(stale, fmt.Sprintf("%s:%d: `%s`: %s", rel, n, m[1], why))
			}
		}
		return nil
	})
	return stale, checked, err
}

// check says why span does not hold ("" when it does); ok is false when span names
// nothing this check reads.
func (r *Repo) check(page, span string, cg *Source, cgFiles map[string]bool) (why string, ok bool) {
	if fileSpan.MatchString(span) {
		for _, p := range docPrefixes {
			if strings.HasPrefix(span, p) {
				return "", false // client-go's path: ScanDocs checks it
			}
		}
		if !strings.Contains(span, "/") {
			if r.Files[span] || cgFiles[span] {
				return "", true
			}
			return "no Go file of that name in this repository, client-go or apimachinery", true
		}
		if r.Files[path.Clean(path.Join(path.Dir(page), span))] || r.Files[span] {
			return "", true
		}
		if !r.dirSuffix(path.Dir(path.Clean(span))) {
			return "", false // another project's path (k8s.io/kubernetes, component-base)
		}
		for f := range r.Files {
			if strings.HasSuffix(f, "/"+span) {
				return "", true
			}
		}
		return "no such Go file in this repository (from the page's directory, the root, or below any directory)", true
	}
	if fileName.MatchString(span) {
		return "", false // crd.yaml, events.k8s.io: not a symbol
	}
	m := symbolSpan.FindStringSubmatch(span)
	if m == nil {
		return "", false
	}
	head, rest := m[1], m[2]
	if pkg, ours := r.Packages[head]; ours && head != "main" {
		typ, member, dotted := strings.Cut(rest, ".")
		if pkg[rest] || dotted && pkg[typ] && r.has(typ, member, map[string]bool{}) || clientGoHas(cg, clientGoPackages[head], rest) {
			return "", true
		}
		return fmt.Sprintf("package %s declares no %s", head, rest), true
	}
	if r.Types[head] && !strings.Contains(rest, ".") {
		if r.has(head, rest, map[string]bool{}) {
			return "", true
		}
		for _, dir := range []string{"tools/cache", "util/workqueue", "tools/leaderelection"} {
			if clientGoHas(cg, dir, head+"."+rest) {
				return "", true
			}
		}
		return fmt.Sprintf("type %s has no %s here nor in client-go", head, rest), true
	}
	return "", false
}

// dirSuffix reports whether some directory of this repository ends with dir.
func (r *Repo) dirSuffix(dir string) bool {
	for f := range r.Files {
		if d := path.Dir(f); d == dir || strings.HasSuffix(d, "/"+dir) {
			return true
		}
	}
	return false
}

func clientGoHas(cg *Source, dir, symbol string) bool {
	return dir != "" && cg.Check(Ref{Module: "k8s.io/client-go", File: dir, Package: true, Symbol: symbol}) == nil
}
