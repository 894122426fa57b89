package translate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestEveryNumberHasARange: every numeric field of the settings' types (a number, a count
// or a duration) has a range in limits, and its doc comment states that range as New and
// ParseConfig write it ("1..10000", "1s..24h").
func TestEveryNumberHasARange(t *testing.T) {
	docs := fieldDocs(t)
	for typ, rt := range settingTypes {
		for i := range rt.NumField() {
			f := rt.Field(i)
			switch f.Type.Kind() {
			case reflect.Int, reflect.Int64, reflect.Float64:
			default:
				continue // strings, bools, maps, slices, structs and enums (CostClass)
			}
			key := typ + "." + f.Name
			l, ok := limits[key]
			if !ok {
				t.Errorf("%s has no range in limits", key)
				continue
			}
			want := l.String(f.Type == durationType)
			if doc := docs[key]; !strings.Contains(doc, want) {
				t.Errorf("the doc comment of %s does not state its range %s: %q", key, want, doc)
			}
		}
	}
}

// fieldDocs returns the doc and line comments of the fields of the package's struct types,
// by "Type.Field".
func fieldDocs(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return false
			}
			for _, fl := range st.Fields.List {
				text := fl.Doc.Text() + " " + fl.Comment.Text()
				for _, id := range fl.Names {
					docs[ts.Name.Name+"."+id.Name] = strings.Join(strings.Fields(text), " ")
				}
			}
			return false
		})
	}
	return docs
}
