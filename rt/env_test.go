package rt_test

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt"
)

// configStructs are the structs of rt.Config, by the path of their field.
var configStructs = map[string]reflect.Type{
	"":              reflect.TypeFor[rt.Config](),
	"Cache.":        reflect.TypeFor[rt.CacheConfig](),
	"Cache.Disk.":   reflect.TypeFor[rt.DiskCacheConfig](),
	"Cache.Remote.": reflect.TypeFor[rt.RemoteCacheConfig](),
}

// notSettings are the fields of Config that no variable sets: values only
// Go code can give, and the structs that hold settings.
var notSettings = map[string]bool{"Tracer": true, "Logger": true, "QueuePool": true, "Cache": true, "Cache.Disk": true, "Cache.Remote": true}

// TestEnvVars checks the table of variables against Config: every
// variable's field exists, every setting of Config has a variable (a
// deprecated one has a replacement that sets the same field), names are
// unique, and each field's doc names its variable, so that
// the doc, the table and `dgen env` say the same.
func TestEnvVars(t *testing.T) {
	vars := rt.EnvVars()
	byName := map[string]rt.EnvVar{}
	byField := map[string]string{}
	for _, v := range vars {
		if _, dup := byName[v.Name]; dup {
			t.Errorf("%s is in the table twice", v.Name)
		}
		byName[v.Name] = v
		if v.Doc == "" || v.Default == "" {
			t.Errorf("%s: no doc or no default", v.Name)
		}
		switch {
		case v.Library != "":
			if v.Field != "" {
				t.Errorf("%s, a library's variable, sets Config.%s", v.Name, v.Field)
			}
			continue
		case v.Deprecated == "" && byField[v.Field] == "":
			byField[v.Field] = v.Name
		}
		prefix, name := "", v.Field
		if i := strings.LastIndex(v.Field, "."); i >= 0 {
			prefix, name = v.Field[:i+1], v.Field[i+1:]
		}
		st, ok := configStructs[prefix]
		if _, has := st.FieldByName(name); !ok || !has {
			t.Errorf("%s sets Config.%s, which does not exist", v.Name, v.Field)
		}
	}
	for _, v := range vars {
		if v.Deprecated != "" {
			if r, ok := byName[v.Deprecated]; !ok || r.Field != v.Field || r.Deprecated != "" {
				t.Errorf("%s is deprecated for %s, which is not a current variable of Config.%s", v.Name, v.Deprecated, v.Field)
			}
		}
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "zz_generated.facade.go", nil, parser.ParseComments) // the docs as go doc shows them
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("rt's source is not here (a test binary run outside the source tree): the docs of Config's fields cannot be read")
	}
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{} // field path: doc
	typePrefix := map[string]string{"Config": "", "CacheConfig": "Cache.", "DiskCacheConfig": "Cache.Disk.", "RemoteCacheConfig": "Cache.Remote."}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		prefix, ok := typePrefix[ts.Name.Name]
		st, isStruct := ts.Type.(*ast.StructType)
		if !ok || !isStruct {
			return true
		}
		for _, fld := range st.Fields.List {
			for _, id := range fld.Names {
				docs[prefix+id.Name] = fld.Doc.Text()
			}
		}
		return false
	})
	for prefix, st := range configStructs {
		for i := range st.NumField() {
			path := prefix + st.Field(i).Name
			if notSettings[path] {
				continue
			}
			name := byField[path]
			if name == "" {
				t.Errorf("Config.%s has no variable in the table (rt/internal/core/env.go)", path)
				continue
			}
			if !strings.Contains(docs[path], name) {
				t.Errorf("the doc of Config.%s does not name its variable %s", path, name)
			}
		}
	}
}
