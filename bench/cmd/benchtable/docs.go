package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// benchDoc is what a benchmark's doc comment says about its row.
type benchDoc struct {
	// Fair is the "Fair:" paragraph: what the two sides do and why it is fair.
	Fair string
	// OffHeadline is the "Not in the headline:" paragraph, empty for headline rows.
	OffHeadline string
}

// readDocs parses the _test.go files of dir and returns, by benchmark name without
// its "Benchmark" prefix, what each Benchmark function's doc comment says.
func readDocs(dir string) (map[string]benchDoc, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no _test.go files", dir)
	}
	fset := token.NewFileSet()
	docs := map[string]benchDoc{}
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Benchmark") || fn.Name.Name == "Benchmark" {
				continue
			}
			docs[strings.TrimPrefix(fn.Name.Name, "Benchmark")] = parseDoc(fn.Doc.Text())
		}
	}
	return docs, nil
}

// parseDoc picks the "Fair:" and "Not in the headline:" paragraphs out of a doc
// comment, each joined onto one line. "Not in the headline:" may also end the "Fair:"
// paragraph instead of starting its own.
func parseDoc(text string) benchDoc {
	var d benchDoc
	for _, para := range strings.Split(text, "\n\n") {
		para = strings.Join(strings.Fields(para), " ")
		if head, off, ok := strings.Cut(para, " Not in the headline:"); ok {
			d.OffHeadline = strings.TrimSpace(off)
			para = head
		}
		switch {
		case strings.HasPrefix(para, "Fair:"):
			d.Fair = strings.TrimSpace(strings.TrimPrefix(para, "Fair:"))
		case strings.HasPrefix(para, "Not in the headline:"):
			d.OffHeadline = strings.TrimSpace(strings.TrimPrefix(para, "Not in the headline:"))
		}
	}
	return d
}

// offHeadlinePattern is a go test -bench (or -skip) pattern matching exactly the
// top-level benchmarks whose doc says "Not in the headline:", such as
// ^(InformerResync|TypedClientGet)$; a pattern that matches nothing when there are
// none.
func offHeadlinePattern(docs map[string]benchDoc) string {
	var names []string
	for name, d := range docs {
		if d.OffHeadline != "" {
			names = append(names, "Benchmark"+name)
		}
	}
	if len(names) == 0 {
		return "^$"
	}
	slices.Sort(names)
	return "^(" + strings.Join(names, "|") + ")$"
}
