package rt

import (
	"log/slog"
	"reflect"
	"slices"
	"testing"

	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/trace"
)

// fill sets every field of the struct v, to any depth, to a value that is
// not its zero value: a pointer to a filled value, a function that
// returns "set".
func fill(v reflect.Value) {
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanSet() {
			continue
		}
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f.SetInt(int64(i + 2))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(uint64(i + 2))
		case reflect.String:
			f.SetString("set")
		case reflect.Struct:
			fill(f)
		case reflect.Pointer:
			p := reflect.New(f.Type().Elem())
			if p.Elem().Kind() == reflect.Struct {
				fill(p.Elem())
			}
			f.Set(p)
		case reflect.Func:
			f.Set(reflect.ValueOf(func(string) string { return "set" }))
		}
	}
}

// fieldNames returns the names of the exported fields of the struct type
// t, but those of skip.
func fieldNames(t reflect.Type, skip []string) []string {
	var names []string
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() && !slices.Contains(skip, f.Name) {
			names = append(names, f.Name)
		}
	}
	return names
}

// TestConvert checks that rt's data types, which rt declares with the
// fields that the core's have (so that go doc shows them), convert to
// the core's and back with every field: a field added to one and not the
// other, or to the conversion, fails here.
func TestConvert(t *testing.T) {
	pairs := []struct {
		rt, core reflect.Type
		only     []string // fields the core's type alone has
	}{
		{reflect.TypeFor[Config](), reflect.TypeFor[core.Config](), nil},
		{reflect.TypeFor[CacheConfig](), reflect.TypeFor[core.CacheConfig](), nil},
		{reflect.TypeFor[ImageDesc](), reflect.TypeFor[core.ImageDesc](), []string{"BufferValue"}},
		{reflect.TypeFor[Sampler](), reflect.TypeFor[core.Sampler](), nil},
		{reflect.TypeFor[Device](), reflect.TypeFor[core.Device](), []string{"Facade"}},
		{reflect.TypeFor[RemoteCacheConfig](), reflect.TypeFor[core.RemoteCacheConfig](), nil},
		{reflect.TypeFor[EnvVar](), reflect.TypeFor[core.EnvVar](), nil},
	}
	for _, p := range pairs {
		if got, want := fieldNames(p.rt, nil), fieldNames(p.core, p.only); !slices.Equal(got, want) {
			t.Errorf("%v has the fields %v, %v has %v", p.rt, got, p.core, want)
		}
	}

	var cfg Config
	fill(reflect.ValueOf(&cfg).Elem())
	cfg.Tracer, cfg.Logger = trace.New(), slog.Default()
	back := config(cfg.core())
	if !reflect.DeepEqual(back, cfg) {
		t.Errorf("Config converted to the core's and back:\n%+v\nwant\n%+v", back, cfg)
	}

	var d ImageDesc
	fill(reflect.ValueOf(&d).Elem())
	d.Buffer = Buffer[int32]{}
	if back := imageDesc(d.core()); !reflect.DeepEqual(back, d) {
		t.Errorf("ImageDesc converted to the core's and back: %+v, want %+v", back, d)
	}

	var cd core.Device
	fill(reflect.ValueOf(&cd).Elem())
	dev := newDevice(&cd)
	var want Device
	fill(reflect.ValueOf(&want).Elem())
	want.d, want.Type, want.Extensions = &cd, DeviceType(cd.Type), cd.Extensions
	if !reflect.DeepEqual(*dev, want) {
		t.Errorf("Device of the core's: %+v, want %+v", *dev, want)
	}
}
