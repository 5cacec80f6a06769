package rt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"math"
	"reflect"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/trace"
)

// The pixels of images: formats, regions, transfers, copies, fills, and
// the conversion of Go's image types.

// ImageRegion is a box of an image's pixels and, for a transfer, the
// layout of the host memory on the other side.
//
// Origin is the first pixel (x, y, z), where y is the layer of an
// Image1DArray and z that of an Image2DArray. Size is the box's extent in
// the same axes; the zero Size means everything from Origin to the
// image's end. A box outside the image is an error wrapping ErrOutOfRange.
//
// RowPitch and SlicePitch are the bytes from one row, and from one slice
// (or layer), of the host memory to the next; 0 means rows and slices
// packed without gaps. A pitch smaller than a row (or than the rows of a
// slice) is an error wrapping ErrInvalidArgument. They are ignored when
// the host side is one of Go's image types, whose Stride is the pitch.
type ImageRegion struct {
	Origin, Size         [3]int
	RowPitch, SlicePitch int
}

// channelCounts and typeSizes give the pixel size of a format: the
// channels of the order times the bytes of the type, or the bytes of a
// packed type, whose pixel is one value.
var (
	channelCounts = map[string]int{
		"R": 1, "A": 1, "INTENSITY": 1, "LUMINANCE": 1, "DEPTH": 1, "Rx": 1,
		"RG": 2, "RA": 2, "RGx": 2, "RGB": 3, "RGBx": 3, "sRGB": 3, "sRGBx": 3,
		"RGBA": 4, "BGRA": 4, "ARGB": 4, "ABGR": 4, "sRGBA": 4, "sBGRA": 4,
	}
	typeSizes = map[string]int{
		"SNORM_INT8": 1, "UNORM_INT8": 1, "SIGNED_INT8": 1, "UNSIGNED_INT8": 1,
		"SNORM_INT16": 2, "UNORM_INT16": 2, "SIGNED_INT16": 2, "UNSIGNED_INT16": 2, "HALF_FLOAT": 2,
		"SIGNED_INT32": 4, "UNSIGNED_INT32": 4, "FLOAT": 4,
	}
	packedSizes = map[string]int{"UNORM_SHORT_565": 2, "UNORM_SHORT_555": 2, "UNORM_INT_101010": 4, "UNORM_INT24": 4, "UNORM_INT_101010_2": 4}
)

// pixelSize returns the bytes and channels of a pixel of the format; 0
// channels for a packed type.
func pixelSize(order, typ string) (int64, int, error) {
	n, ok := channelCounts[order]
	if !ok {
		return 0, 0, fmt.Errorf("%w: channel order %q: want one of R, RG, RGBA, BGRA, LUMINANCE, ... as OpenCL names them without CL_", ErrInvalidArgument, order)
	}
	if s, ok := packedSizes[typ]; ok {
		return int64(s), 0, nil
	}
	s, ok := typeSizes[typ]
	if !ok {
		return 0, 0, fmt.Errorf("%w: channel type %q: want one of UNORM_INT8, UNSIGNED_INT16, FLOAT, ... as OpenCL names them without CL_", ErrInvalidArgument, typ)
	}
	return int64(n * s), n, nil
}

// box resolves r against h: the box in pixels, checked to lie in the
// image.
func (h *imageHandle) box(r ImageRegion) ([3]int, [3]int, error) {
	o, s := r.Origin, r.Size
	if s == [3]int{} {
		for i := range s {
			s[i] = h.dims[i] - o[i]
		}
	}
	for i := range 3 {
		if o[i] < 0 || s[i] <= 0 || o[i] > h.dims[i] || s[i] > h.dims[i]-o[i] {
			return o, s, fmt.Errorf("%w: box %s at (%d, %d, %d) of a %s %s", ErrOutOfRange, sizeString(s), o[0], o[1], o[2], sizeString(h.dims), h.kind)
		}
	}
	return o, s, nil
}

// layout returns the pitches of host memory for a box of size s, checked
// against the row, and the bytes the box spans in it.
func (h *imageHandle) layout(s [3]int, row, slice int) (int64, int64, int64, error) {
	rowBytes := int64(s[0]) * h.px
	rp, sp := int64(row), int64(slice)
	if rp == 0 {
		rp = rowBytes
	}
	if rp < rowBytes {
		return 0, 0, 0, fmt.Errorf("%w: row pitch %d is smaller than a row of %d pixels of %d bytes", ErrInvalidArgument, row, s[0], h.px)
	}
	if sp == 0 {
		sp = rp * int64(s[1])
	}
	if sp < rp*int64(s[1]) {
		return 0, 0, 0, fmt.Errorf("%w: slice pitch %d is smaller than %d rows of pitch %d", ErrInvalidArgument, slice, s[1], rp)
	}
	span := int64(s[2]-1)*sp + int64(s[1]-1)*rp + rowBytes
	return rp, sp, span, nil
}

// checkUse checks that the image may be used on q and returns its memory.
func (h *imageHandle) checkUse(q *Queue, what string) (*Mem, error) {
	if h == nil {
		return nil, fmt.Errorf("%w: zero %s", ErrInvalidArgument, what)
	}
	m := h.mem()
	if _, err := m.driverBuffer(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, unwrapBuffer(err))
	}
	if q == nil {
		return nil, fmt.Errorf("%w: nil queue", ErrInvalidArgument)
	}
	if err := q.ctx.sameContext("the "+what, m.ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// unwrapBuffer drops the "buffer: " of Mem's errors, which name a buffer.
func unwrapBuffer(err error) error {
	type wrapped interface{ Unwrap() error }
	if w, ok := err.(wrapped); ok && w.Unwrap() != nil {
		return w.Unwrap()
	}
	return err
}

// hostMem is host memory that a transfer reads or writes: a pointer, its
// length in bytes, and the pitches of its rows and slices when they are
// its own (Go's image types).
type hostMem struct {
	p         unsafe.Pointer
	n         int64
	row, sl   int
	keep      any          // what p points into, alive until the transfer ends
	convertIn func([]byte) // for a read: converts the bytes read into the Go image
	conv      []byte       // the converted pixels, when there are
}

// sliceMem returns the memory of v, a slice of plain data.
func sliceMem(v any) (hostMem, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice {
		return hostMem{}, fmt.Errorf("%w: pixels of type %T: want a slice of plain data or *image.RGBA, *image.Gray, *image.Gray16, *image.RGBA64", ErrInvalidArgument, v)
	}
	if err := checkPlain(rv.Type().Elem()); err != nil {
		return hostMem{}, fmt.Errorf("pixels of type %T: %w", v, err)
	}
	return hostMem{p: rv.UnsafePointer(), n: int64(rv.Len()) * int64(rv.Type().Elem().Size()), keep: v}, nil
}

// transfer reads (into host) or writes (from host) the box r of the image,
// blocking until it is done. skip is as for beginTask.
func (h *imageHandle) transfer(q *Queue, read bool, r ImageRegion, host any, wait []*Event, skip int) error {
	op := "write " + h.kind.String()
	kind := trace.Write
	if read {
		op, kind = "read "+h.kind.String(), trace.Read
	}
	m, err := h.checkUse(q, "image")
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	o, s, err := h.box(r)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	hm, err := h.hostFor(host, read, s)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if hm.row != 0 {
		r.RowPitch, r.SlicePitch = hm.row, hm.sl
	}
	rp, sp, span, err := h.layout(s, r.RowPitch, r.SlicePitch)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if hm.n < span {
		return fmt.Errorf("%s: %w: the host memory has %d bytes, the box %s needs %d", op, ErrOutOfRange, hm.n, sizeString(s), span)
	}
	iq, ok := q.drv.(driver.ImageQueue)
	if !ok {
		return fmt.Errorf("%s: %w", op, errNoImages)
	}
	dr := driver.ImageRegion{Origin: o, Size: s, RowPitch: rp, SlicePitch: sp}
	switch h.kind {
	case driver.Image1D, driver.Image1DBuffer, driver.Image2D:
		dr.SlicePitch = 0
	case driver.Image1DArray:
		dr.SlicePitch = rp // the step between layers, which are its rows
	}
	if err := q.imageTransfer(op, kind, func(dw []driver.Event) error {
		var err error
		if read {
			_, err = iq.ReadImage(m.drv, true, dr, hm.p, dw)
		} else {
			_, err = iq.WriteImage(m.drv, true, dr, hm.p, dw)
		}
		return err
	}, wait, skip+1); err != nil {
		return err
	}
	if hm.convertIn != nil {
		hm.convertIn(hm.conv)
	}
	return nil
}

// imageTransfer runs the blocking transfer do on q after wait; skip is as
// for beginTask.
func (q *Queue) imageTransfer(op string, kind trace.CmdKind, do func([]driver.Event) error, wait []*Event, skip int) error {
	if err := q.enter(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer q.ctx.exit()
	dw, err := q.driverEvents(wait)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	tk := q.beginTask(kind, op, skip+1, wait)
	n := q.pts.enq.Load() // a blocking transfer completes what was enqueued before it
	err = do(dw)
	tk.End()
	tk.Release()
	if err != nil {
		return fmt.Errorf("%s on %q: %w", op, q.dev.Name, err)
	}
	q.pts.complete(n)
	return nil
}

var errNoImages = fmt.Errorf("%w: the backend's queues have no image commands", errors.ErrUnsupported)

// copyTo copies the box r of h to dst at dstOrigin. skip is as for
// beginTask.
func (h *imageHandle) copyTo(q *Queue, dst Image, r ImageRegion, dstOrigin [3]int, wait []*Event, skip int) (*Event, error) {
	op := "copy " + h.kind.String()
	m, err := h.checkUse(q, "source image")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	var dh *imageHandle
	if dst != nil {
		dh = dst.handle()
	}
	dm, err := dh.checkUse(q, "destination image")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	o, s, err := h.box(r)
	if err == nil {
		_, _, err = dh.box(ImageRegion{Origin: dstOrigin, Size: s})
	}
	if err == nil && (dh.desc.Order != h.desc.Order || dh.desc.Type != h.desc.Type) {
		err = fmt.Errorf("%w: the images' formats differ (%s/%s, %s/%s)", ErrInvalidArgument, h.desc.Order, h.desc.Type, dh.desc.Order, dh.desc.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	iq, ok := q.drv.(driver.ImageQueue)
	if !ok {
		return nil, fmt.Errorf("%s: %w", op, errNoImages)
	}
	ev, err := q.command(op, trace.Copy, func(dw []driver.Event) (driver.Event, error) {
		return iq.CopyImage(m.drv, dm.drv, o, dstOrigin, s, dw)
	}, wait, skip+1)
	if err == nil {
		q.record(m, dm)
	}
	return ev, err
}

// fill sets the box r of h to color. skip is as for beginTask.
func (h *imageHandle) fill(q *Queue, r ImageRegion, color [4]float64, wait []*Event, skip int) (*Event, error) {
	op := "fill " + h.kind.String()
	m, err := h.checkUse(q, "image")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	o, s, err := h.box(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	iq, ok := q.drv.(driver.ImageQueue)
	if !ok {
		return nil, fmt.Errorf("%s: %w", op, errNoImages)
	}
	var c [16]byte
	for i, v := range color {
		var bits uint32
		switch h.desc.Type {
		case "SIGNED_INT8", "SIGNED_INT16", "SIGNED_INT32":
			bits = uint32(int32(v))
		case "UNSIGNED_INT8", "UNSIGNED_INT16", "UNSIGNED_INT32":
			bits = uint32(v)
		default:
			bits = math.Float32bits(float32(v))
		}
		binary.NativeEndian.PutUint32(c[4*i:], bits)
	}
	ev, err := q.command(op, trace.Fill, func(dw []driver.Event) (driver.Event, error) {
		return iq.FillImage(m.drv, c, o, s, dw)
	}, wait, skip+1)
	if err == nil {
		q.record(m)
	}
	return ev, err
}

// goImage describes the pixels of one of Go's image types: the bytes from
// the box's first pixel, the stride, the channels and the bytes of a
// channel (16-bit channels are big-endian).
type goImage struct {
	pix    []byte
	stride int
	chans  int
	depth  int
	bounds image.Rectangle
}

func asGoImage(v any) (goImage, bool) {
	switch m := v.(type) {
	case *image.RGBA:
		return goImage{m.Pix, m.Stride, 4, 1, m.Rect}, true
	case *image.Gray:
		return goImage{m.Pix, m.Stride, 1, 1, m.Rect}, true
	case *image.RGBA64:
		return goImage{m.Pix, m.Stride, 4, 2, m.Rect}, true
	case *image.Gray16:
		return goImage{m.Pix, m.Stride, 1, 2, m.Rect}, true
	}
	return goImage{}, false
}

// hostFor returns the host memory of a transfer of a box of size s from
// or to host: a slice as it is, or a Go image, used in place when its
// pixels are the image's, else converted.
func (h *imageHandle) hostFor(host any, read bool, s [3]int) (hostMem, error) {
	g, ok := asGoImage(host)
	if !ok {
		return sliceMem(host)
	}
	if s[2] != 1 || g.bounds.Dx() < s[0] || g.bounds.Dy() < s[1] {
		return hostMem{}, fmt.Errorf("%w: a %dx%d %T holds no box %s", ErrOutOfRange, g.bounds.Dx(), g.bounds.Dy(), host, sizeString(s))
	}
	if h.chans != g.chans {
		return hostMem{}, fmt.Errorf("%w: %T has %d channels, a pixel of %s/%s %d", ErrInvalidArgument, host, g.chans, h.desc.Order, h.desc.Type, h.chans)
	}
	dev, ok := deviceChannels[h.desc.Type]
	if !ok {
		return hostMem{}, fmt.Errorf("%w: %T converts to and from 8- and 16-bit integer and FLOAT channels, not %s", ErrInvalidArgument, host, h.desc.Type)
	}
	if dev.size == 1 && g.depth == 1 {
		// The pixels are the image's: no copy.
		n := len(g.pix)
		return hostMem{p: unsafe.Pointer(unsafe.SliceData(g.pix)), n: int64(n), row: g.stride, keep: host}, nil
	}
	rowBytes := s[0] * int(h.px)
	conv := make([]byte, rowBytes*s[1])
	hm := hostMem{p: unsafe.Pointer(unsafe.SliceData(conv)), n: int64(len(conv)), row: rowBytes, conv: conv}
	samples := s[0] * g.chans
	if read {
		hm.convertIn = func(b []byte) {
			for y := range s[1] {
				fromDevice(g.pix[y*g.stride:], g.depth, b[y*rowBytes:], dev, samples)
			}
		}
		return hm, nil
	}
	for y := range s[1] {
		toDevice(conv[y*rowBytes:], dev, g.pix[y*g.stride:], g.depth, samples)
	}
	return hm, nil
}

// channelKind is how a device channel type is stored: size bytes, as an
// integer scaled to its full range (norm) or not, or a float32.
type channelKind struct {
	size  int
	float bool
}

var deviceChannels = map[string]channelKind{
	"UNORM_INT8": {1, false}, "UNSIGNED_INT8": {1, false},
	"UNORM_INT16": {2, false}, "UNSIGNED_INT16": {2, false},
	"FLOAT": {4, true},
}

// toDevice converts n samples of depth bytes (big-endian) from src into
// the device's channels in dst: an integer to the other width by scaling
// its range, or to float in [0, 1].
func toDevice(dst []byte, dev channelKind, src []byte, depth, n int) {
	for i := range n {
		var v uint32 // 16-bit
		if depth == 1 {
			v = uint32(src[i]) * 0x101
		} else {
			v = uint32(src[2*i])<<8 | uint32(src[2*i+1])
		}
		switch {
		case dev.float:
			binary.NativeEndian.PutUint32(dst[4*i:], math.Float32bits(float32(v)/65535))
		case dev.size == 1:
			dst[i] = byte((v*255 + 32767) / 65535)
		default:
			binary.NativeEndian.PutUint16(dst[2*i:], uint16(v))
		}
	}
}

// fromDevice is the inverse of toDevice, rounding and clamping floats.
func fromDevice(dst []byte, depth int, src []byte, dev channelKind, n int) {
	for i := range n {
		var v uint32 // 16-bit
		switch {
		case dev.float:
			f := math.Float32frombits(binary.NativeEndian.Uint32(src[4*i:]))
			v = uint32(math.Round(float64(min(max(f, 0), 1)) * 65535))
		case dev.size == 1:
			v = uint32(src[i]) * 0x101
		default:
			v = uint32(binary.NativeEndian.Uint16(src[2*i:]))
		}
		if depth == 1 {
			dst[i] = byte((v*255 + 32767) / 65535)
		} else {
			dst[2*i], dst[2*i+1] = byte(v>>8), byte(v)
		}
	}
}
