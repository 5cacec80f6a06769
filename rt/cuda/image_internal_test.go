//go:build cgo

package cuda

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/dgen-go/dgen/rt/driver"
)

func TestPackPixel(t *testing.T) {
	color := func(v ...uint32) (c [16]byte) {
		for i, x := range v {
			c[4*i], c[4*i+1], c[4*i+2], c[4*i+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
		}
		return c
	}
	f := func(v ...float32) [16]byte {
		var u []uint32
		for _, x := range v {
			u = append(u, math.Float32bits(x))
		}
		return color(u...)
	}
	tests := []struct {
		format driver.ImageFormat
		color  [16]byte
		want   []byte
	}{
		{driver.ImageFormat{Order: "RGBA", Type: "UNORM_INT8"}, f(0.3, 0.5, 1.5, -1), []byte{76, 127, 255, 0}}, // as NVIDIA's OpenCL: 0x4c 0x7f
		{driver.ImageFormat{Order: "RGBA", Type: "UNORM_INT16"}, f(0.3, 0.5, 0, 1.7), []byte{0xcc, 0x4c, 0xff, 0x7f, 0, 0, 0xff, 0xff}},
		{driver.ImageFormat{Order: "RGBA", Type: "SNORM_INT16"}, f(0.3, 0.5, -0.2, 1.7), []byte{0x66, 0x26, 0xff, 0x3f, 0x67, 0xe6, 0xff, 0x7f}},
		{driver.ImageFormat{Order: "RGBA", Type: "HALF_FLOAT"}, f(0.3, 0.5, -0.2, 1.7), []byte{0xcc, 0x34, 0x00, 0x38, 0x66, 0xb2, 0xcc, 0x3e}},
		{driver.ImageFormat{Order: "R", Type: "SNORM_INT8"}, f(-2), []byte{0x81}},
		{driver.ImageFormat{Order: "RG", Type: "UNORM_INT16"}, f(1, float32(math.NaN())), []byte{0xff, 0xff, 0, 0}},
		{driver.ImageFormat{Order: "RG", Type: "SIGNED_INT8"}, color(300, 0xffffff00), []byte{127, 0x80}},
		{driver.ImageFormat{Order: "R", Type: "UNSIGNED_INT16"}, color(70000), []byte{0xff, 0xff}},
		{driver.ImageFormat{Order: "RG", Type: "HALF_FLOAT"}, f(1, 65520), []byte{0x00, 0x3c, 0xff, 0x7b}},
		{driver.ImageFormat{Order: "R", Type: "HALF_FLOAT"}, f(float32(math.Inf(-1))), []byte{0x00, 0xfc}},
		{driver.ImageFormat{Order: "R", Type: "HALF_FLOAT"}, f(3.0 / (1 << 25)), []byte{0x01, 0x00}},
		{driver.ImageFormat{Order: "R", Type: "FLOAT"}, f(-3.25), []byte{0, 0, 0x50, 0xc0}},
	}
	for _, tt := range tests {
		pf, err := formatOf(tt.format)
		if err != nil {
			t.Fatal(err)
		}
		if got := packPixel(pf, tt.color); !bytes.Equal(got, tt.want) {
			t.Errorf("%v: % x, want % x", tt.format, got, tt.want)
		}
	}
}

func TestSamplerSupport(t *testing.T) {
	tests := []struct {
		d           driver.SamplerDesc
		unsupported bool
	}{
		{driver.SamplerDesc{Address: "clamp_to_edge", Filter: "nearest"}, false},
		{driver.SamplerDesc{Normalized: true, Address: "repeat", Filter: "linear"}, false},
		{driver.SamplerDesc{Address: "repeat", Filter: "nearest"}, true},
		{driver.SamplerDesc{Address: "mirrored_repeat", Filter: "linear"}, true},
	}
	for _, tt := range tests {
		err := checkSampler(tt.d)
		if got := errors.Is(err, errors.ErrUnsupported); got != tt.unsupported {
			t.Errorf("%+v: %v", tt.d, err)
		}
		if s := sampler(0).with(tt.d); s.desc() != tt.d {
			t.Errorf("%+v packs to %v, which unpacks to %+v", tt.d, s, s.desc())
		}
	}
	if _, err := formatOf(driver.ImageFormat{Order: "BGRA", Type: "UNORM_INT8"}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("BGRA: %v", err)
	}
}
