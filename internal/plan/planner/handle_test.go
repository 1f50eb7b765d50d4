package planner_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strings"
	"testing"
)

// The planner has one handle per cluster: it renders and parses through
// the cluster's release.Renderer and reads the cluster through its
// ClusterView. Only what builds the real view from a cluster's engine (and
// the view itself) may take a *release.Engine or a *kube.Client; every
// other function of the planner takes the Renderer, so that what a plan
// decides cannot reach past its view.
func TestPlannerTakesOneHandlePerCluster(t *testing.T) {
	// The real view's construction and reads (clusterview.go,
	// prefetch.go, verifyview.go, getLive).
	view := map[string]bool{
		"viewOf": true, "reads": true, "EngineView": true, "newEngineView": true,
		"outputLists": true, "sharedList": true, "getLive": true, "VerifyView": true,
	}
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || view[fn.Name.Name] {
					continue
				}
				for _, fl := range [...]*ast.FieldList{fn.Type.Params, fn.Type.Results} {
					if fl == nil {
						continue
					}
					for _, field := range fl.List {
						if ty := typeName(field.Type); ty == "*release.Engine" || ty == "*kube.Client" {
							found = append(found, fset.Position(fn.Pos()).String()+": "+fn.Name.Name+" takes "+ty)
						}
					}
				}
			}
		}
	}
	sort.Strings(found)
	for _, f := range found {
		t.Errorf("%s: the planner takes a cluster's release.Renderer and reads through its ClusterView", f)
	}
}

// typeName is a parameter's type as written, for pointers to package
// types (*pkg.T); "" for others.
func typeName(e ast.Expr) string {
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return ""
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	return "*" + pkg.Name + "." + sel.Sel.Name
}
