package main

import (
	"image"
	"math"
)

// The pipeline in Go, in float32 as the kernels compute it, to check every
// pixel the device computes.

// taps are the binomial weights of the blur and of the B3 spline.
var taps = [5]float32{1.0 / 16, 4.0 / 16, 6.0 / 16, 4.0 / 16, 1.0 / 16}

// plane is an image of w×h pixels of four float32 channels.
type plane struct {
	w, h int
	px   [][4]float32
}

func newPlane(w, h int) *plane { return &plane{w, h, make([][4]float32, w*h)} }

// at returns the pixel at (x, y), clamped to the edge.
func (p *plane) at(x, y int) [4]float32 {
	return p.px[min(max(y, 0), p.h-1)*p.w+min(max(x, 0), p.w-1)]
}

// planeOf returns m's pixels as read_imagef reads an RGBA/UNORM_INT8 image.
func planeOf(m *image.RGBA) *plane {
	b := m.Bounds()
	p := newPlane(b.Dx(), b.Dy())
	for y := range p.h {
		for x := range p.w {
			o := m.PixOffset(b.Min.X+x, b.Min.Y+y)
			for c := range 4 {
				p.px[y*p.w+x][c] = float32(m.Pix[o+c]) / 255
			}
		}
	}
	return p
}

func blurRef(in *plane) *plane {
	out := newPlane(in.w, in.h)
	for y := range in.h {
		for x := range in.w {
			var sum [4]float32
			for j := range 5 {
				var row [4]float32
				for i := range 5 {
					t := in.at(x+i-2, y+j-2)
					for c := range 4 {
						row[c] += taps[i] * t[c]
					}
				}
				for c := range 4 {
					sum[c] += taps[j] * row[c]
				}
			}
			out.px[y*in.w+x] = sum
		}
	}
	return out
}

func luma(c [4]float32) float32 { return 0.299*c[0] + 0.587*c[1] + 0.114*c[2] }

func sobelRef(in *plane) []float32 {
	out := make([]float32, in.w*in.h)
	for y := range in.h {
		for x := range in.w {
			var l [3][3]float32
			for j := range 3 {
				for i := range 3 {
					l[j][i] = luma(in.at(x+i-1, y+j-1))
				}
			}
			gx := (l[0][2] + 2*l[1][2] + l[2][2]) - (l[0][0] + 2*l[1][0] + l[2][0])
			gy := (l[2][0] + 2*l[2][1] + l[2][2]) - (l[0][0] + 2*l[0][1] + l[0][2])
			out[y*in.w+x] = float32(math.Sqrt(float64(gx*gx + gy*gy)))
		}
	}
	return out
}

func eawRef(in *plane, scale int, sharpen float32) (coarse, detail *plane) {
	coarse, detail = newPlane(in.w, in.h), newPlane(in.w, in.h)
	mult := 1 << scale
	for y := range in.h {
		for x := range in.w {
			c := in.px[y*in.w+x]
			var sum [4]float32
			var wsum float32
			for j := range 5 {
				for i := range 5 {
					t := in.at(x+mult*(i-2), y+mult*(j-2))
					d0, d1, d2 := c[0]-t[0], c[1]-t[1], c[2]-t[2]
					w := taps[i] * taps[j] * float32(math.Exp(float64(-(d0*d0+d1*d1+d2*d2)*sharpen)))
					for k := range 4 {
						sum[k] += w * t[k]
					}
					wsum += w
				}
			}
			for k := range 4 {
				sum[k] /= wsum
			}
			sum[3] = c[3]
			coarse.px[y*in.w+x] = sum
			for k := range 4 {
				detail.px[y*in.w+x][k] = c[k] - sum[k]
			}
		}
	}
	return coarse, detail
}

// maxDiff returns the largest absolute difference of got and want, and
// the index of the first value that differs by more than tol (-1 if none).
func maxDiff(got, want []float32, tol float64) (float64, int) {
	worst, first := 0.0, -1
	for i := range want {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if d > worst || math.IsNaN(d) {
			worst = d
		}
		if (d > tol || math.IsNaN(d)) && first < 0 {
			first = i
		}
	}
	return worst, first
}

// flat returns p's channels as one slice.
func (p *plane) flat() []float32 {
	out := make([]float32, 0, 4*len(p.px))
	for _, v := range p.px {
		out = append(out, v[:]...)
	}
	return out
}
