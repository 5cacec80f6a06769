package rt_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt"
)

// TestCopyOverlap: a copy whose source and destination share memory (one
// buffer, or views of one that share elements) is refused by the core,
// before the driver, with an error wrapping ErrInvalidArgument that names
// both sides and their bytes, run at once or recorded into a graph; and
// nothing is copied. OpenCL's own CL_MEM_COPY_OVERLAP wraps no rt sentinel,
// and CUDA's device-to-device copy does not look, so neither may be
// reached. Views that touch without sharing an element, and a buffer of
// their own, copy.
func TestCopyOverlap(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	// A unit of elements at the device's base address alignment, so that
	// views may start at any unit; the parent holds four.
	u := max(int(ctx.Devices()[0].MemBaseAddrAlign/4), 32)
	ub := 4 * u // its bytes
	parent, err := rt.NewBuffer[int32](ctx, 4*u)
	if err != nil {
		t.Fatal(err)
	}
	defer parent.Free()
	other, err := rt.NewBuffer[int32](ctx, 4*u)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Free()
	view := func(off, n int) rt.Buffer[int32] {
		v, err := parent.View(off*u, n*u)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// msg is the error's text for a copy of bytes [s, s+n) to [d, d+n)
	// of the parent, in units, through the sides named.
	msg := func(s, d, n int, src, dst string) string {
		return fmt.Sprintf("the source and the destination share memory: bytes [%d, %d) of a buffer of %d bytes, through %s, to its bytes [%d, %d), through %s",
			s*ub, (s+n)*ub, 4*ub, src, d*ub, (d+n)*ub, dst)
	}
	at := func(off, n int) string { return fmt.Sprintf("a view of %d bytes at byte %d", n*ub, off*ub) }
	const itself = "the buffer itself"
	tests := []struct {
		name     string
		src, dst rt.Buffer[int32]
		want     string // a part of the error; "" for a copy that must succeed
	}{
		{"the same buffer", parent, parent, msg(0, 0, 4, itself, itself)},
		{"the same view", view(1, 2), view(1, 2), msg(1, 1, 2, at(1, 2), at(1, 2))},
		{"overlapping views, forward", view(0, 2), view(1, 2), msg(0, 1, 2, at(0, 2), at(1, 2))},
		{"overlapping views, backward", view(1, 2), view(0, 2), msg(1, 0, 2, at(1, 2), at(0, 2))},
		{"a view into its parent", view(1, 2), parent, msg(1, 0, 2, at(1, 2), itself)},
		{"a view of a view into the view", mustView(t, view(1, 3), 0, 2*u), view(2, 2), msg(1, 2, 2, at(1, 2), at(2, 2))},
		{"adjacent views, forward", view(0, 2), view(2, 2), ""},
		{"adjacent views, backward", view(2, 2), view(0, 2), ""},
		{"a view into another buffer", view(1, 2), other, ""},
		{"a view of another buffer into a view", mustView(t, other, 0, 2*u), view(1, 2), ""},
	}
	// fill writes i+base into parent and other, so that what a copy
	// moved, or did not, shows.
	fill := func() {
		for base, b := range map[int32]rt.Buffer[int32]{0: parent, 1000: other} {
			x := make([]int32, b.Len())
			for i := range x {
				x[i] = base + int32(i)
			}
			if err := b.Write(q, x); err != nil {
				t.Fatal(err)
			}
		}
	}
	read := func(b rt.Buffer[int32]) []int32 {
		x := make([]int32, b.Len())
		if err := b.Read(q, x); err != nil {
			t.Fatal(err)
		}
		return x
	}
	for _, recorded := range []bool{false, true} {
		for _, tt := range tests {
			name := tt.name
			if recorded {
				name += ", recorded"
			}
			t.Run(name, func(t *testing.T) {
				fill()
				want := read(tt.src)[:tt.src.Len()]
				before := [][]int32{read(parent), read(other)}
				var err error
				if recorded {
					var g *rt.Graph
					g, err = q.Record("copy", func(q *rt.Queue) error {
						_, err := tt.src.CopyTo(q, tt.dst)
						return err
					})
					if err == nil {
						err = g.Launch(q)
						g.Release()
					}
				} else {
					var ev *rt.Event
					if ev, err = tt.src.CopyTo(q, tt.dst); ev != nil {
						ev.Release()
					}
				}
				if tt.want == "" {
					if err != nil {
						t.Fatalf("copy: %v", err)
					}
					if got := read(tt.dst)[:len(want)]; !slices.Equal(got, want) {
						t.Errorf("the destination holds %v…; want the source's %v…", got[:4], want[:4])
					}
					return
				}
				if !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "CL_") {
					t.Errorf("copy: %v\nwant an error of the core wrapping ErrInvalidArgument, with %q", err, tt.want)
				}
				if after := [][]int32{read(parent), read(other)}; !slices.EqualFunc(before, after, slices.Equal) {
					t.Errorf("a refused copy changed the buffers")
				}
			})
		}
	}
}

func mustView(t *testing.T, b rt.Buffer[int32], off, n int) rt.Buffer[int32] {
	t.Helper()
	v, err := b.View(off, n)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestImageCopyOverlap: within one image, boxes that share a pixel are
// refused as buffers' are, before the driver; boxes that only touch, and
// another image, copy.
func TestImageCopyOverlap(t *testing.T) {
	ctx := openImages(t)
	q := ctx.Queue()
	d := rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.Float, Width: 8, Height: 8}
	img, err := rt.NewImage(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Free()
	other, err := rt.NewImage(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Free()
	box := func(x, y, w, h int) rt.ImageRegion {
		return rt.ImageRegion{Origin: [3]int{x, y, 0}, Size: [3]int{w, h, 1}}
	}
	tests := []struct {
		name string
		dst  rt.Image
		r    rt.ImageRegion
		at   [3]int
		want string // a part of the error; "" for a copy that must succeed
	}{
		{"the whole image onto itself", img, rt.ImageRegion{}, [3]int{}, "the source box at [0 0 0] and the destination box at [0 0 0], each of [8 8 1] pixels, overlap in one image"},
		{"boxes sharing a corner pixel", img, box(0, 0, 4, 4), [3]int{3, 3, 0}, "the source box at [0 0 0] and the destination box at [3 3 0], each of [4 4 1] pixels"},
		{"boxes sharing a column", img, box(2, 0, 4, 8), [3]int{0, 0, 0}, "the destination box at [0 0 0], each of [4 8 1] pixels"},
		{"boxes side by side", img, box(0, 0, 4, 8), [3]int{4, 0, 0}, ""},
		{"boxes one above the other", img, box(0, 4, 8, 4), [3]int{0, 0, 0}, ""},
		{"another image", other, rt.ImageRegion{}, [3]int{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			px := make([]float32, 64)
			for i := range px {
				px[i] = float32(i)
			}
			if err := img.Write(q, rt.ImageRegion{}, px); err != nil {
				t.Fatal(err)
			}
			ev, err := img.CopyTo(q, tt.dst, tt.r, tt.at)
			if ev != nil {
				ev.Release()
			}
			if tt.want == "" {
				if err != nil {
					t.Fatalf("copy: %v", err)
				}
				return
			}
			if !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "CL_") {
				t.Errorf("copy: %v\nwant an error of the core wrapping ErrInvalidArgument, with %q", err, tt.want)
			}
			got := make([]float32, 64)
			if err := img.Read(q, rt.ImageRegion{}, got); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, px) {
				t.Errorf("a refused copy changed the image")
			}
		})
	}
}
