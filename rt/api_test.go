package rt_test

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"sort"
	"strings"
	"testing"
)

// apiCeiling is the most exported identifiers rt may have, counted as
// exportedIdentifiers counts them. Issue 19 started from 129 and aims at
// 60; the count may only go down: lower this constant with every change
// that removes identifiers. Issue 28's command graphs added five and issue
// 24 one (114); issue 22's images and samplers 50 (164). Issue 19's cuts
// since: the six image handle types and their 36 methods, and the Image
// interface, became one Image struct whose ImageDesc.Kind names the
// OpenCL C image type (checked when a generated kernel spec sets the
// argument): -36 (128). AllocConfig, AllocPolicy and its constants
// PolicyFull, PolicyTaggedOnly and PolicyBestFit became the fields
// Config.AllocPolicy (a string checked by Open) and Config.AllocMaxHeld:
// -5 (123). Context.AllocStats and Context.CacheStats became
// Context.Stats, which returns stats.Context: -1 (122). SelectDevices
// moved to internal/devsel (rt.Open and dgen devices use it; its selector
// is documented at Config.Device) and Devices, a driver.Lookup and
// Platforms call, into cmd/dgen: -2 (120). Removed as redundant: TagName
// (stats.TagStats.Name carries a site's name), BufferOf (a Buffer comes
// from NewBuffer, Alloc or a site), Buffer.Bytes (Len times the element
// size), Buffer.IsNil (Mem is nil for the zero Buffer) and Event.Name:
// -5 (115). The raw program and kernel API moved to package rt/raw (the
// level below generated kernel specs, as database/sql/driver is below
// database/sql): Context.BuildProgram and Program.Build (raw.Build and
// raw.BuildGenerated), BuiltProgram and its Kernel, Name and Release
// (raw.Program), Kernel's Name, Release, SetBuffer, SetImage, SetLocal,
// SetSampler and WorkGroupInfo (methods of raw.Kernel, which is rt.Kernel
// by conversion: the type stays, as generated code names it), SetArg,
// Queue.Launch and Queue.Submit (raw.SetArg, raw.Launch, raw.Submit):
// -16 (99). SetSpecConst became SpecConst.Set, beside Value and Tune
// (99). Mem.Size went: a Mem is the untyped handle of a Buffer's memory,
// whose size is the Buffer's Len; the allocator's rounded size is its own
// business (stats.Alloc reports the bytes held): -1 (98). Issue 39 asked
// for context.Context on every call that can wait longer than a kernel,
// as database/sql's …Context twins: Event.WaitContext,
// Queue.FinishContext, and Program.Build (the build that a first Enqueue
// would wait for, ahead of it and bounded); and for a global work offset
// (Range.WithOffset): +4 (102).
//
// What the 102 are, and why each stays:
//   - entry points (5): Open (the environment), OpenConfig and Config
//     (code), ConfigFromEnv (the environment, then code's overrides, and
//     tests' injected getenv); CacheConfig is Config.Cache, nil for the
//     environment's;
//   - Context (8: the type and Close, Devices, NewQueue, Queue,
//     ReleaseHeld, Stats, Tracer) and Device (1);
//   - Queue (8: the type and Context, Device, Finish, FinishContext,
//     Flush, Marker, Record);
//   - Event (5), Range (7: the type, Range1-3, WithLocal, WithOffset, and
//     String for errors and %v);
//   - memory (24): NewBuffer, Alloc, AllocSite and its Alloc and Tag (the
//     key of stats.Alloc), Buffer and its 12 methods (Read and Write are
//     ReadAt and WriteAt at 0: merging them would put a 0 in 150
//     whole-buffer transfers), Mem with Free (the untyped memory that
//     rt/raw's SetBuffer, rt/codegen and code freeing buffers of several
//     element types pass; Buffer[T] is generic and cannot be passed
//     between packages untyped), NewPinned, Pinned, Pinned.Free and Slice;
//   - images (12): Image and its 6 methods, ImageDesc, ImageRegion,
//     NewImage, AllocImage, Sampler (issue 22, a feature users asked for);
//   - graphs (4, and Queue.Record above): Graph, Launch, Update, Release;
//   - declarations (14): Program with Build and Kernel (types that
//     generated code names), DeviceGlobal with Read, Write, ReadAt and WriteAt, SpecConst
//     with Set, Value and Tune, Local with Bytes (generated code calls it);
//   - errors (14): DeviceError and 13 sentinels that callers tell apart.
const apiCeiling = 102

// exportedIdentifiers counts rt's API with go/ast, over the package's
// non-test files: every exported package-level identifier (type, function,
// variable, constant), and every exported method declared on an exported
// type, generic types included. Fields of exported structs, and methods
// promoted from embedded fields, are not counted. This is the rule that
// gave 129 when issue 19 was filed: 57 package-level identifiers and 72
// methods.
func exportedIdentifiers(t *testing.T) []string {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := pkgs["rt"]
	if f == nil {
		if _, err := os.Stat("api_test.go"); errors.Is(err, fs.ErrNotExist) {
			t.Skip("no source of package rt beside the test binary (a gpu-bundle)")
		}
		t.Fatal("no package rt in the test's directory")
	}
	types := map[string]bool{}
	for _, file := range f.Files {
		for _, d := range file.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
				for _, s := range g.Specs {
					if ts := s.(*ast.TypeSpec); ts.Name.IsExported() {
						types[ts.Name.Name] = true
					}
				}
			}
		}
	}
	var ids []string
	for _, file := range f.Files {
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					ids = append(ids, d.Name.Name)
				} else if recv := receiverType(d.Recv.List[0].Type); types[recv] {
					ids = append(ids, recv+"."+d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							ids = append(ids, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								ids = append(ids, n.Name)
							}
						}
					}
				}
			}
		}
	}
	sort.Strings(ids)
	return ids
}

// receiverType returns the name of a method's receiver type: T for T,
// *T, T[P] and *T[P, Q].
func receiverType(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	switch x := e.(type) {
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// TestAPISize holds rt's exported identifiers at or below apiCeiling.
func TestAPISize(t *testing.T) {
	ids := exportedIdentifiers(t)
	t.Logf("%d exported identifiers (goal: at most 60): %s", len(ids), strings.Join(ids, " "))
	if len(ids) > apiCeiling {
		t.Errorf("rt exports %d identifiers, more than %d: a new one must replace an old one", len(ids), apiCeiling)
	}
}
