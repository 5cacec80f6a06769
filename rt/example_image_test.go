package rt_test

import (
	"fmt"
	"image"
	"image/color"

	"github.com/dgen-go/dgen/rt"
)

// Images: an RGBA image made from an *image.RGBA, filled in part, and read
// back into another. Kernel specs take rt.Image fields for image parameters
// (image2d_t, ...: ImageDesc.Kind says which an image is) and rt.Sampler
// fields for sampler_t ones.
func ExampleNewImage() {
	// Images run on the OpenCL backend (rt/cuda has none).
	ctx, err := rt.OpenConfig(rt.Config{Backend: "opencl"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	q := ctx.Queue()
	src := image.NewRGBA(image.Rect(0, 0, 4, 2))
	src.Set(0, 0, color.RGBA{255, 0, 0, 255})
	img, err := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderRGBA, Type: rt.UnormInt8, Width: 4, Height: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer img.Free()
	if err := img.Write(q, rt.ImageRegion{}, src); err != nil {
		fmt.Println(err)
		return
	}
	// The right half green: a box of 2x2 pixels from (2, 0).
	if _, err := img.Fill(q, rt.ImageRegion{Origin: [3]int{2, 0, 0}, Size: [3]int{2, 2, 1}}, [4]float64{0, 1, 0, 1}); err != nil {
		fmt.Println(err)
		return
	}
	dst := image.NewRGBA(image.Rect(0, 0, 4, 2))
	if err := img.Read(q, rt.ImageRegion{}, dst); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(dst.RGBAAt(0, 0), dst.RGBAAt(3, 1))
	// Output: {255 0 0 255} {0 255 0 255}
}
