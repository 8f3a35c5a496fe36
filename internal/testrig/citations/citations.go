// Package citations reads the "// client-go: file Symbol" lines of this repository's
// Go files and checks each against the source of the client-go release go.mod pins:
// the file must exist and declare the symbol. A test runs it over the whole tree, so
// that a bump of client-go lists every citation that went stale, at once. The Markdown
// pages are read too: a code span naming a client-go file (ScanDocs), and one naming a
// symbol or Go file of this repository (Repo.OwnStale), must name what exists.
//
// # The grammar of a citation
//
//	// client-go: tools/cache/store.go cache.Add
//	// client-go: tools/cache/store.go cache.Replace, tools/cache/thread_safe_store.go threadSafeMap.Replace
//	// client-go: tools/cache/listers.go ListAllByNamespace, ListAll
//	// client-go: util/workqueue/queue.go DefaultQueue; k8s.io/utils/buffer RingGrowing
//	// client-go: tools/leaderelection/leaderelection.go LeaderElector.Check, healthzadaptor.go HealthzAdaptor
//
// After "client-go: " come references separated by "," or ";". A reference is a file
// and a symbol, or a symbol alone, which is in the file named before it. A file is a
// path in client-go's module, or in apimachinery's when it begins with
// "k8s.io/apimachinery/" or "apimachinery/"; a bare name ("healthzadaptor.go") is in
// the directory of the file before it. "k8s.io/utils/<dir>" names a package of
// k8s.io/utils instead of a file. A symbol is a declared type, function, constant or
// variable, or Type.Method (Type.field for a struct field). Text in parentheses is a
// remark, not a reference; a symbol alone must be alone between its separators, and
// anything else ends the references — the rest of the line is prose. A citation
// begins a comment line: the marker in the middle of a line is not one.
package citations

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Marker begins a citation in a comment.
const Marker = "// client-go: "

// Ref is one reference of a citation: a symbol in a file (or package) of a module.
type Ref struct {
	// Module is the module path: k8s.io/client-go, k8s.io/apimachinery or k8s.io/utils.
	Module string
	// File is the file's path in the module, or the package's directory when Package.
	File    string
	Package bool
	// Symbol is Name or Type.Member; empty when a page cites a file alone.
	Symbol string
}

// Citation is one "// client-go:" line and what it refers to.
type Citation struct {
	// Where is file:line in this repository.
	Where string
	// Text is the line after the marker.
	Text string
	Refs []Ref
	// Err says why the line could not be read as a citation.
	Err error
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

// withoutRemarks drops the text in parentheses, nested ones included, up to the end of
// the line if one is not closed.
func withoutRemarks(text string) string {
	var b strings.Builder
	depth := 0
	for _, r := range text {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
			if depth == 0 {
				b.WriteRune(' ')
			}
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Parse reads the references of one citation (the text after Marker).
func Parse(text string) ([]Ref, error) {
	text = withoutRemarks(text)
	var refs []Ref
	var file Ref // the last file named
	for _, segment := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ';' }) {
		words := strings.Fields(segment)
		if len(words) == 0 {
			continue
		}
		rest := words[1:] // what follows the reference in this segment
		switch w := words[0]; {
		case strings.HasSuffix(w, ".go") || strings.HasPrefix(w, "k8s.io/utils/"):
			f, err := fileRef(w, file)
			if err != nil {
				return refs, err
			}
			if len(words) < 2 || !identifier.MatchString(strings.TrimSuffix(words[1], ".")) {
				return refs, fmt.Errorf("%q names no symbol after the file", strings.TrimSpace(segment))
			}
			file = f
			file.Symbol = strings.TrimSuffix(words[1], ".")
			refs = append(refs, file)
			rest = words[2:]
		case file.File != "" && len(words) == 1 && identifier.MatchString(strings.TrimSuffix(w, ".")):
			r := file
			r.Symbol = strings.TrimSuffix(w, ".")
			refs = append(refs, r)
		default:
			if len(refs) == 0 {
				return nil, fmt.Errorf("does not begin with a file and a symbol")
			}
			return refs, nil // prose
		}
		if len(rest) > 0 {
			return refs, nil // prose after the reference ends the list
		}
	}
	if len(refs) == 0 {
		return nil, fmt.Errorf("names no file")
	}
	return refs, nil
}

// fileRef resolves a file word, relative to the previous file for a bare name.
func fileRef(w string, prev Ref) (Ref, error) {
	switch {
	case strings.HasPrefix(w, "k8s.io/utils/"):
		return Ref{Module: "k8s.io/utils", File: strings.TrimPrefix(w, "k8s.io/utils/"), Package: true}, nil
	case strings.HasPrefix(w, "k8s.io/apimachinery/"):
		return Ref{Module: "k8s.io/apimachinery", File: strings.TrimPrefix(w, "k8s.io/apimachinery/")}, nil
	case strings.HasPrefix(w, "apimachinery/"):
		return Ref{Module: "k8s.io/apimachinery", File: strings.TrimPrefix(w, "apimachinery/")}, nil
	case !strings.Contains(w, "/"):
		if prev.File == "" {
			return Ref{}, fmt.Errorf("%q: a bare file name needs a file before it", w)
		}
		return Ref{Module: prev.Module, File: path.Join(path.Dir(prev.File), w)}, nil
	default:
		return Ref{Module: "k8s.io/client-go", File: w}, nil
	}
}

// docPrefixes begin the client-go (and apimachinery, utils) paths a Markdown page
// cites in backticks, such as `tools/cache/reflector.go Reflector.list`. None of them is
// a directory of this repository, so a path of ours is never mistaken for one.
var docPrefixes = []string{
	"tools/", "util/", "rest/", "informers/", "listers/", "features/", "transport/",
	"dynamic/", "metadata/", "discovery/", "gentype/", "apimachinery/", "k8s.io/apimachinery/",
	"k8s.io/utils/",
}

// codeSpan is a Markdown code span on one line.
var codeSpan = regexp.MustCompile("`([^`]+)`")

// ParseDoc reads a code span of a Markdown page as a citation: a file and symbols as in
// Parse, or a file alone, which must exist. ok is false when the span is not a cited
// client-go file at all (a directory, a package path, our own file, a command).
func ParseDoc(span string) (refs []Ref, ok bool, err error) {
	first := strings.Fields(withoutRemarks(span))
	if len(first) == 0 {
		return nil, false, nil
	}
	w := first[0]
	cited := false
	for _, p := range docPrefixes {
		if strings.HasPrefix(w, p) {
			cited = true
		}
	}
	if !cited || !(strings.HasSuffix(w, ".go") || strings.HasPrefix(w, "k8s.io/utils/") && len(first) > 1) {
		return nil, false, nil
	}
	if len(first) == 1 {
		f, err := fileRef(w, Ref{})
		return []Ref{f}, true, err
	}
	refs, err = Parse(span)
	return refs, true, err
}

// ScanDocs reads every cited client-go file and symbol in the Markdown files below root.
func ScanDocs(root string) ([]Citation, error) {
	return walk(root, []string{".md"}, func(rel string, n int, line string) []Citation {
		var out []Citation
		for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
			refs, ok, err := ParseDoc(m[1])
			if ok {
				out = append(out, Citation{Where: fmt.Sprintf("%s:%d", rel, n), Text: m[1], Refs: refs, Err: err})
			}
		}
		return out
	})
}

// Scan reads every citation in the Go files below root (skipping vendor and hidden
// directories).
func Scan(root string) ([]Citation, error) {
	return walk(root, []string{".go"}, func(rel string, n int, line string) []Citation {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, Marker) {
			return nil
		}
		text := line[len(Marker):]
		refs, err := Parse(text)
		return []Citation{{Where: fmt.Sprintf("%s:%d", rel, n), Text: text, Refs: refs, Err: err}}
	})
}

// walk calls cite on every line of the files below root whose names end in one of exts,
// skipping vendor, testdata and hidden directories.
func walk(root string, exts []string, cite func(rel string, n int, line string) []Citation) ([]Citation, error) {
	var out []Citation
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (strings.HasPrefix(name, ".") || name == "vendor" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !slices.ContainsFunc(exts, func(ext string) bool { return strings.HasSuffix(p, ext) }) {
			return nil
		}
		cs, err := scanFile(root, p, cite)
		out = append(out, cs...)
		return err
	})
	return out, err
}

func scanFile(root, p string, cite func(rel string, n int, line string) []Citation) ([]Citation, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rel, _ := filepath.Rel(root, p)
	var out []Citation
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; s.Scan(); n++ {
		out = append(out, cite(rel, n, s.Text())...)
	}
	return out, s.Err()
}

// Source answers whether a module's file (or package) declares a symbol. It parses
// each file once.
type Source struct {
	// Dirs maps a module path to its directory (the module cache's copy at the
	// version go.mod pins).
	Dirs map[string]string

	files map[string]map[string]bool // declared symbols by absolute file path
}

// Stale checks every reference of every citation and lists, as "where: why", each one
// that cannot be read or does not hold; refs is how many references were checked.
func (s *Source) Stale(all []Citation) (stale []string, refs int) {
	for _, c := range all {
		if c.Err != nil {
			stale = append(stale, c.Where+": "+c.Err.Error()+": "+c.Text)
			continue
		}
		for _, r := range c.Refs {
			refs++
			if err := s.Check(r); err != nil {
				stale = append(stale, c.Where+": "+err.Error())
			}
		}
	}
	return stale, refs
}

// Check reports why r does not hold, or nil.
func (s *Source) Check(r Ref) error {
	dir, ok := s.Dirs[r.Module]
	if !ok {
		return fmt.Errorf("module %s: not available", r.Module)
	}
	var files []string
	if r.Package {
		matches, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(r.File), "*.go"))
		for _, m := range matches {
			if !strings.HasSuffix(m, "_test.go") {
				files = append(files, m)
			}
		}
		if len(files) == 0 {
			return fmt.Errorf("%s: no package %s", r.Module, r.File)
		}
	} else {
		files = []string{filepath.Join(dir, filepath.FromSlash(r.File))}
	}
	for _, f := range files {
		decls, err := s.declared(f)
		if err != nil {
			return fmt.Errorf("%s: %s does not exist", r.Module, r.File)
		}
		if r.Symbol == "" || decls[r.Symbol] {
			return nil
		}
	}
	return fmt.Errorf("%s: %s declares no %s", r.Module, r.File, r.Symbol)
}

// declared lists what file declares: top-level names, Type.Method for methods, and
// Type.field for struct fields and Interface.Method for interface methods.
func (s *Source) declared(file string) (map[string]bool, error) {
	if d, ok := s.files[file]; ok {
		return d, nil
	}
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	d := map[string]bool{}
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if decl.Recv == nil || len(decl.Recv.List) == 0 {
				d[decl.Name.Name] = true
				continue
			}
			d[receiverType(decl.Recv.List[0].Type)+"."+decl.Name.Name] = true
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					d[spec.Name.Name] = true
					for _, member := range members(spec.Type) {
						d[spec.Name.Name+"."+member] = true
					}
				case *ast.ValueSpec:
					for _, n := range spec.Names {
						d[n.Name] = true
					}
				}
			}
		}
	}
	if s.files == nil {
		s.files = map[string]map[string]bool{}
	}
	s.files[file] = d
	return d, nil
}

// receiverType is the name of a method's receiver type, without pointer or type
// parameters.
func receiverType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return receiverType(e.X)
	case *ast.IndexExpr:
		return receiverType(e.X)
	case *ast.IndexListExpr:
		return receiverType(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// members lists a struct's fields or an interface's methods.
func members(e ast.Expr) []string {
	var fields *ast.FieldList
	switch t := e.(type) {
	case *ast.StructType:
		fields = t.Fields
	case *ast.InterfaceType:
		fields = t.Methods
	default:
		return nil
	}
	var out []string
	for _, f := range fields.List {
		for _, n := range f.Names {
			out = append(out, n.Name)
		}
	}
	return out
}
