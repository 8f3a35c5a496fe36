package parity

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seedsHeader begins the header row of docs/parity.md's table of default seed counts.
const seedsHeader = "| test | seeds by default |"

var seedsRowRE = regexp.MustCompile("^\\| `(Test[A-Za-z]+)` \\| ([0-9,]+) \\|")

// TestParitySeedCounts checks docs/parity.md's table of default seed counts against
// the code: every differential test (a Test function of this directory that calls
// check.Run) has a row, every row is such a test, and each row's count is the Runs
// its check.Config sets.
func TestParitySeedCounts(t *testing.T) {
	inCode := runsInCode(t)
	require.NotEmpty(t, inCode, "no Test function here calls check.Run with a Runs")

	page, err := os.ReadFile("../docs/parity.md")
	require.NoError(t, err)
	onPage := map[string]int{}
	inTable := false
	for _, line := range strings.Split(string(page), "\n") {
		switch {
		case strings.HasPrefix(line, seedsHeader):
			inTable = true
		case !strings.HasPrefix(line, "|"):
			inTable = false
		case inTable && !strings.HasPrefix(line, "|---"):
			m := seedsRowRE.FindStringSubmatch(line)
			if !assert.NotNil(t, m, "docs/parity.md: a row of the seeds table is not \"| `TestX` | N |\": %s", line) {
				continue
			}
			n, err := strconv.Atoi(strings.ReplaceAll(m[2], ",", ""))
			require.NoError(t, err)
			assert.NotContains(t, onPage, m[1], "docs/parity.md: two rows of the seeds table for %s", m[1])
			onPage[m[1]] = n
		}
	}
	require.NotEmpty(t, onPage, "docs/parity.md has no table whose header starts %q", seedsHeader)
	assert.Equal(t, inCode, onPage, "docs/parity.md's seeds table (actual) against each test's check.Config Runs (expected)")
}

// runsInCode returns, for each Test function of this directory's test files that
// calls check.Run, the Runs of the check.Config it passes: an integer literal.
func runsInCode(t *testing.T) map[string]int {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	runs := map[string]int{}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(node ast.Node) bool {
				call, ok := node.(*ast.CallExpr)
				if !ok || !isCheckRun(call.Fun) {
					return true
				}
				require.GreaterOrEqual(t, len(call.Args), 2, "%s: check.Run with fewer than two arguments", fset.Position(call.Pos()))
				cfg, ok := call.Args[1].(*ast.CompositeLit)
				require.True(t, ok, "%s: %s's check.Config is not written in place", fset.Position(call.Pos()), fn.Name.Name)
				lit := runsField(cfg)
				require.NotNil(t, lit, "%s: %s's check.Config sets no Runs as an integer literal", fset.Position(call.Pos()), fn.Name.Name)
				n, err := strconv.Atoi(strings.ReplaceAll(lit.Value, "_", ""))
				require.NoError(t, err)
				require.NotContains(t, runs, fn.Name.Name, "%s calls check.Run twice", fn.Name.Name)
				runs[fn.Name.Name] = n
				return true
			})
		}
	}
	return runs
}

func isCheckRun(fun ast.Expr) bool {
	if idx, ok := fun.(*ast.IndexExpr); ok { // check.Run[T](…)
		fun = idx.X
	}
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "check" && sel.Sel.Name == "Run"
}

// runsField returns the integer literal of cfg's Runs field, or nil.
func runsField(cfg *ast.CompositeLit) *ast.BasicLit {
	for _, elt := range cfg.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		if key, ok := kv.Key.(*ast.Ident); ok && key.Name == "Runs" {
			if lit, ok := kv.Value.(*ast.BasicLit); ok && lit.Kind == token.INT {
				return lit
			}
		}
	}
	return nil
}
