package rt

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestRangeCheck(t *testing.T) {
	tests := []struct {
		r    Range
		want string // "" for no error, else a part of its text
	}{
		{Range1(10), ""},
		{Range2(16, 16).WithLocal(16, 16), ""},
		{Range3(4, 4, 4).WithLocal(2, 2, 2), ""},
		{Range1(0), "global size 0 in dimension 0"},
		{Range2(32, 32).WithLocal(8), "range [32 32]/[8]: invalid argument: 2-D range given 1 local size"},
		{Range1(32).WithLocal(0), "local size 0 in dimension 0: give a positive size in every dimension, or none"},
		{Range1(32).WithLocal(8, 4), "1-D range given 2 local sizes"},
		{Range3(4, 4, 4).WithLocal(), "3-D range given 0 local sizes"},
		{Range1(10).WithLocal(4), "local size 4 does not divide global size 10"},
		{Range{Dims: 4}, "4 dimensions"},
		{Range{}, "0 dimensions"},
	}
	for _, tt := range tests {
		err := tt.r.check()
		if tt.want == "" && err != nil || tt.want != "" && (!errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%v.check() = %v, want %q", tt.r, err, tt.want)
		}
	}
	if s := Range2(32, 32).WithLocal(8).String(); s != "[32 32]/[8]" {
		t.Errorf("String() = %q, want [32 32]/[8]", s)
	}
}

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		env     map[string]string
		want    Config
		wantErr bool
	}{
		{env: map[string]string{"DGEN_DEVICE": "gpu", "DGEN_PROFILE": "1"}, want: Config{Device: "gpu", Profiling: true}},
		{env: map[string]string{"DGEN_PROFILE": "maybe"}, wantErr: true},
		{env: map[string]string{"DGEN_PROFILE": "on"}, want: Config{Profiling: true}},
		{env: map[string]string{"DGEN_ALLOC_POLICY": "tagged"}, want: Config{AllocPolicy: AllocTagged}},
		{env: map[string]string{"DGEN_ALLOC_POLICY": "Full"}, want: Config{AllocPolicy: AllocFull}},
		{env: map[string]string{"DGEN_ALLOC_POLICY": "lifo"}, wantErr: true},
		{env: map[string]string{"DGEN_ALLOC_MAX_HELD": "512MiB"}, want: Config{AllocMaxHeld: 512 << 20}},
		{env: map[string]string{"DGEN_ALLOC_MAX_HELD": "1g"}, want: Config{AllocMaxHeld: 1 << 30}},
		{env: map[string]string{"DGEN_ALLOC_MAX_HELD": "4096"}, want: Config{AllocMaxHeld: 4096}},
		{env: map[string]string{"DGEN_ALLOC_MAX_HELD": "0"}, want: Config{}},
		{env: map[string]string{"DGEN_ALLOC_MAX_HELD": "-1"}, wantErr: true},
		{env: map[string]string{"DGEN_ALLOC_MAX_HELD": "lots"}, wantErr: true},
	}
	for _, tt := range tests {
		cfg, err := ConfigFromEnv(func(k string) string { return tt.env[k] })
		if err == nil && cfg.Cache == nil {
			t.Errorf("ConfigFromEnv(%v): no cache configuration", tt.env)
		}
		cfg.Cache = nil // CacheConfigFromEnv has its own tests
		if (err != nil) != tt.wantErr || (!tt.wantErr && !reflect.DeepEqual(cfg, tt.want)) {
			t.Errorf("ConfigFromEnv(%v) = %+v, %v; want %+v, error %v", tt.env, cfg, err, tt.want, tt.wantErr)
		}
	}
}
